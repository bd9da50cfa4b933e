/**
 * A mock the script started over HTTP (the bench, the crash campaign and its workers):
 * the URL its banner prints, and its admin routes (`/__mock/…`: purchases, the clock,
 * faults) called with JSON.
 *
 * @module
 */

/** How the mock CLI (src/mock/adapters/cli-program.ts) announces itself, the URL following. */
export const MOCK_BANNER = 'TeamGames mock listening on ';

/** The URL in the mock's banner, once `output` holds it. */
export function bannerUrl(output: string): string | undefined {
  return /TeamGames mock listening on (http:\/\/\S+)/.exec(output)?.[1];
}

/** An admin call: `GET` or `POST` (with a JSON body) to `path` under `url`, the answer parsed as JSON. */
export type MockAdmin = <T = unknown>(method: 'GET' | 'POST', path: string, body?: unknown) => Promise<T>;

/** Admin calls to the mock at `url`; a refusal throws `<label>: <method> <path>: HTTP <status> <body>`. */
export function mockAdmin(url: string, label?: string): MockAdmin {
  return async <T>(method: 'GET' | 'POST', path: string, body?: unknown): Promise<T> => {
    const response = await fetch(`${url}${path}`, {
      method,
      ...(body === undefined ? {} : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }),
    });
    const text = await response.text();
    if (!response.ok) throw new Error(`${label === undefined ? '' : `${label}: `}${method} ${path}: HTTP ${response.status} ${text}`);
    return JSON.parse(text) as T;
  };
}
