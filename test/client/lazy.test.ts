import { describe, expect, it } from 'vitest';
import { lazy } from '../../src/internal/lazy.js';

describe('lazy: how the parts loaded on first use load', () => {
  it('imports once and shares the result between concurrent callers', async () => {
    let loads = 0;
    const load = lazy(async () => ({ n: ++loads }));
    const [a, b] = await Promise.all([load(), load()]);
    expect(a).toBe(b);
    expect(await load()).toBe(a);
    expect(loads).toBe(1);
  });

  it('tries again after a failed import instead of failing forever', async () => {
    let loads = 0;
    const load = lazy(async () => {
      loads += 1;
      if (loads === 1) throw new Error('EMFILE: too many open files');
      return 'module';
    });
    await expect(load()).rejects.toThrow(/EMFILE/);
    expect(await load()).toBe('module');
    expect(loads).toBe(2);
  });
});
