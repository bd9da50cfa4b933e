import { createRequire } from 'node:module';
import type { HttpHandler } from 'msw';
import { DROPPED, type MockRoute } from './router.js';

type Msw = typeof import('msw');

let msw: Msw | undefined;

/**
 * msw, loaded on first use and only then: `import 'teamgames-sdk/mock'`, `mock.fetch` and
 * `mock.listen()` never load it (msw is an optional peer; under Deno its module-level
 * `BroadcastChannel` would keep the process alive). Loaded synchronously, because
 * `mock.handlers` is a property; where Node supports `require(esm)` (20.19+) msw's
 * `module-sync` export gives the same module instance an `import` of msw does.
 *
 * @throws Error naming the one command that fixes it, when msw is not installed.
 */
function loadMsw(): Msw {
  if (msw !== undefined) return msw;
  try {
    msw = createRequire(import.meta.url)('msw') as Msw;
  } catch (error) {
    if ((error as NodeJS.ErrnoException | undefined)?.code !== 'MODULE_NOT_FOUND') throw error;
    throw new Error(
      'teamgames-sdk/mock: mock.handlers needs msw, an optional peer dependency: npm i -D msw ' +
        '(mock.fetch and mock.listen() work without it)',
      { cause: error },
    );
  }
  return msw;
}

/**
 * The routes as msw request handlers, one per route. msw in Node has no `location`, so the
 * patterns start with `*`; each handler then insists on its exact path (`*` would also
 * match `/api/v3/vote/…` for the vote route) and declines before reading the body.
 */
export function toMswHandlers(routes: readonly MockRoute[]): HttpHandler[] {
  const { http, HttpResponse } = loadMsw();
  return routes.map((route) => {
    const method = route.method === 'GET' ? http.get : route.method === 'POST' ? http.post : http.delete;
    return method('*' + route.path, async ({ request }) => {
      const answer = await route.answer(request);
      return answer === DROPPED ? HttpResponse.error() : answer;
    });
  });
}
