import { describe, expect, it } from 'vitest';
import { credentialsKey } from '../../../adapters/source/credentials-key.ts';
import type { GitAuth } from '../../../adapters/source/git-input.ts';
import { createRefCache } from '../../../adapters/source/ref-cache.ts';

const key = (url: string, auth?: GitAuth) => ({ url, ref: 'branch:main', credentials: credentialsKey(auth) });

describe('ref cache (one ls-remote per repository and ref per window)', () => {
  it('shares one resolution between Releases within the window, and asks again after it', async () => {
    let t = 0;
    const cache = createRefCache({ ttlMs: 15_000, now: () => t });
    let asked = 0;
    const lookup = () => {
      asked++;
      return Promise.resolve(`c${asked}`);
    };
    const concurrent = await Promise.all(
      [1, 2, 3].map(() => cache.resolve(key('https://git/a.git'), lookup)),
    );
    expect(concurrent).toEqual(['c1', 'c1', 'c1']);
    t = 14_000;
    expect(await cache.resolve(key('https://git/a.git'), lookup)).toBe('c1');
    t = 15_001;
    expect(await cache.resolve(key('https://git/a.git'), lookup)).toBe('c2');
    expect(asked).toBe(2);
  });

  it('keys by repository and credentials: a slow repository does not hold another, other credentials ask themselves', async () => {
    const cache = createRefCache({ ttlMs: 15_000 });
    let releaseSlow: (commit: string) => void = () => undefined;
    const slow = cache.resolve(
      key('https://git/slow.git'),
      () => new Promise<string>((resolve) => (releaseSlow = resolve)),
    );
    expect(await cache.resolve(key('https://git/fast.git'), () => Promise.resolve('fast'))).toBe('fast');
    let asked = 0;
    await cache.resolve(key('https://git/fast.git', { bearerToken: 'other' }), () => {
      asked++;
      return Promise.resolve('fast');
    });
    expect(asked).toBe(1);
    releaseSlow('slow');
    expect(await slow).toBe('slow');
  });

  it('never keeps a failure, and clear() (a push was announced) forgets every answer', async () => {
    const cache = createRefCache({ ttlMs: 15_000 });
    await expect(
      cache.resolve(key('https://git/a.git'), () => Promise.reject(new Error('down'))),
    ).rejects.toThrow('down');
    expect(await cache.resolve(key('https://git/a.git'), () => Promise.resolve('c1'))).toBe('c1');
    cache.clear();
    expect(await cache.resolve(key('https://git/a.git'), () => Promise.resolve('c2'))).toBe('c2');
  });

  it('fresh (a sync request) asks the server although the answer is fresh, and keeps the newer answer for the others', async () => {
    const cache = createRefCache({ ttlMs: 15_000 });
    let asked = 0;
    const lookup = () => {
      asked++;
      return Promise.resolve(`c${asked}`);
    };
    expect(await cache.resolve(key('https://git/a.git'), lookup)).toBe('c1');
    expect(await cache.resolve(key('https://git/a.git'), lookup, { fresh: true })).toBe('c2');
    expect(await cache.resolve(key('https://git/a.git'), lookup)).toBe('c2');
    expect(asked).toBe(2);
  });
});
