/**
 * What loading the SDK costs a process: cold `import` and `require` of teamgames-sdk (the
 * build in dist/) against ky and zod alone, each in a fresh process.
 *
 * @module
 */
import { spawnSync } from 'node:child_process';
import { median } from '../common/figures.js';
import { QUICK } from './settings.js';

type Kind = 'import' | 'require';

/** One cold load in a fresh process: of the SDK, or of ky and zod alone. */
function coldLoadMs(kind: Kind, target: 'sdk' | 'deps'): number {
  const code =
    kind === 'import'
      ? target === 'sdk'
        ? `const t = performance.now(); await import('teamgames-sdk'); process.stdout.write(String(performance.now() - t));`
        : `const t = performance.now(); await import('ky'); await import('zod'); process.stdout.write(String(performance.now() - t));`
      : target === 'sdk'
        ? `const t = performance.now(); require('teamgames-sdk'); process.stdout.write(String(performance.now() - t));`
        : `const t = performance.now(); require('ky'); require('zod'); process.stdout.write(String(performance.now() - t));`;
  const out = spawnSync(process.execPath, kind === 'import' ? ['--input-type=module', '-e', code] : ['-e', code], { encoding: 'utf8' });
  if (out.status !== 0) throw new Error(`${kind} ${target} failed: ${out.stderr}`);
  return Number(out.stdout);
}

export interface ColdLoad {
  sdkMs: number;
  depsMs: number;
  ratio: number;
}

/** Cold loads of the SDK and of ky + zod, in pairs: the ratio is the median of the pairs' ratios. */
function coldLoad(kind: Kind, pairs = QUICK ? 7 : 15): ColdLoad {
  const sdk: number[] = [];
  const deps: number[] = [];
  const ratios: number[] = [];
  for (let i = 0; i < pairs; i++) {
    // Alternate which goes first, so neither always runs right after the other.
    let sdkMs: number;
    let depsMs: number;
    if (i % 2 === 0) {
      sdkMs = coldLoadMs(kind, 'sdk');
      depsMs = coldLoadMs(kind, 'deps');
    } else {
      depsMs = coldLoadMs(kind, 'deps');
      sdkMs = coldLoadMs(kind, 'sdk');
    }
    sdk.push(sdkMs);
    deps.push(depsMs);
    ratios.push(sdkMs / depsMs);
  }
  return { sdkMs: median(sdk), depsMs: median(deps), ratio: median(ratios) };
}

/** Cold `import` and `require`, printed. */
export function coldImports(): Record<Kind, ColdLoad> {
  const imports = { import: coldLoad('import'), require: coldLoad('require') };
  console.log(
    `import: cold import('teamgames-sdk') ${imports.import.sdkMs.toFixed(1)} ms vs ky+zod ${imports.import.depsMs.toFixed(1)} ms (ratio ${imports.import.ratio.toFixed(2)}); ` +
      `require ${imports.require.sdkMs.toFixed(1)} ms vs ${imports.require.depsMs.toFixed(1)} ms (ratio ${imports.require.ratio.toFixed(2)})`,
  );
  return imports;
}
