import { describe, expect, it } from 'vitest';
import {
  ALL_NAMESPACES,
  createPortCaches,
  inNamespace,
  invalidateFor,
} from '../../../adapters/reconcile/port-caches.ts';

describe('per-container port caches and their invalidation rule', () => {
  it('serves a cluster-wide list for the TTL, and drops it for a message caused by a dependency change', async () => {
    let t = 0;
    const caches = createPortCaches({ ttlMs: 30_000, now: () => t });
    let lists = 0;
    const list = () => {
      lists++;
      return Promise.resolve([
        { metadata: { namespace: 'a', name: 'm1' } },
        { metadata: { namespace: 'b', name: 'm2' } },
      ]);
    };
    const items = await caches.mutations.get(ALL_NAMESPACES, 'mutations', list);
    expect(inNamespace(items, 'a')).toEqual([{ metadata: { namespace: 'a', name: 'm1' } }]);
    await caches.mutations.get(ALL_NAMESPACES, 'mutations', list);
    expect(lists).toBe(1);

    invalidateFor(caches, { namespace: 'a', cause: 'timer: reconcile interval' });
    await caches.mutations.get(ALL_NAMESPACES, 'mutations', list);
    expect(lists).toBe(1);

    invalidateFor(caches, { namespace: 'a', cause: 'watch: Mutation m1 MODIFIED' });
    await caches.mutations.get(ALL_NAMESPACES, 'mutations', list);
    expect(lists).toBe(2);

    t = 30_001;
    await caches.mutations.get(ALL_NAMESPACES, 'mutations', list);
    expect(lists).toBe(3);
  });

  it('a git push message clears the ref resolutions', async () => {
    const caches = createPortCaches();
    const key = { url: 'https://git/a.git', ref: 'branch:main', credentials: 'anonymous' as const };
    await caches.refs.resolve(key, () => Promise.resolve('old'));
    invalidateFor(caches, { namespace: 'a', cause: 'git push refs/heads/main 1234567' });
    expect(await caches.refs.resolve(key, () => Promise.resolve('new'))).toBe('new');
  });
});
