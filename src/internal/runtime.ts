/**
 * What the client reads from the runtime it runs on: the name and version for the
 * `User-Agent`, and the environment defaults of its options.
 *
 * @module
 * @internal
 */

interface RuntimeGlobals {
  Bun?: { version?: string };
  Deno?: {
    version?: { deno?: string };
    permissions?: { querySync?: (descriptor: { name: 'env'; variable: string }) => { state: string } };
  };
  process?: { versions?: { node?: string }; env?: Record<string, string | undefined> };
}

const runtime = globalThis as RuntimeGlobals;

/**
 * The runtime for the `User-Agent`: `bun/1.2.3`, `deno/2.1.0` or `node/20.19.0` (Bun and
 * Deno also report a Node version, which is not what they are), else `unknown-runtime`.
 */
export function runtimeAgent(): string {
  if (runtime.Bun?.version) return `bun/${runtime.Bun.version}`;
  if (runtime.Deno?.version?.deno) return `deno/${runtime.Deno.version.deno}`;
  const node = runtime.process?.versions?.node;
  return node ? `node/${node}` : 'unknown-runtime';
}

/**
 * An environment variable, or `undefined` when it is unset, empty, or not readable: no
 * `process` (a browser), or Deno without `--allow-env` for it (asked first, so reading a
 * default never prompts; {@link envDenied} tells that case apart).
 */
export function readEnv(name: string): string | undefined {
  let value: string | undefined;
  try {
    // Stryker disable next-line OptionalChaining: inside the try, a missing `process` or `env` throws and is caught: the same undefined
    if (!envDenied(name)) value = runtime.process?.env?.[name];
  } catch {
    // A runtime that will not let the program read it: as unset.
  }
  return value === '' ? undefined : value;
}

/**
 * Whether the runtime refuses to let the program read the variable: Deno without
 * `--allow-env` for it (its permission state is `prompt` or `denied`, never asked for, so
 * checking never prompts). Node and Bun always let a program read its environment.
 */
export function envDenied(name: string): boolean {
  try {
    // Stryker disable next-line OptionalChaining: inside the try, a missing link throws and is caught: the same `false`
    const state = runtime.Deno?.permissions?.querySync?.({ name: 'env', variable: name }).state;
    return state !== undefined && state !== 'granted';
  } catch {
    return false;
  }
}
