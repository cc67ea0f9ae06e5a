import { describe, expect, it } from 'vitest';
import { createDriftMemory, driftMemoryBasis, driftMemoryKey } from '../../../domain/observe/drift-memory.ts';
import { createDiscoveryCache, type Discovery } from '../../../adapters/kube/discovery.ts';
import { createObserverCaches, invalidateObserverCaches } from '../../../adapters/reconcile/port-caches.ts';

const deployment = {
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { namespace: 'team-a', name: 'web' },
};

describe('the drift function container memory of clean checks', () => {
  it('answers the resourceVersion of the last clean check only for the same basis (render and ignore rules)', () => {
    const memory = createDriftMemory();
    const key = driftMemoryKey('https://k8s:6443 ', deployment);
    const basis = driftMemoryBasis('sha256:aaa', []);
    expect(memory.cleanVersion(key, basis)).toBeUndefined();
    memory.remember(key, basis, '41');
    expect(memory.cleanVersion(key, basis)).toBe('41');
    expect(memory.cleanVersion(key, driftMemoryBasis('sha256:bbb', []))).toBeUndefined();
    // Another basis dropped the entry: the next check is a full one.
    expect(memory.cleanVersion(key, basis)).toBeUndefined();
    memory.remember(key, basis, '41');
    expect(
      memory.cleanVersion(
        key,
        driftMemoryBasis('sha256:aaa', [{ kind: 'Deployment', jsonPointers: ['/spec/replicas'] }]),
      ),
    ).toBeUndefined();
  });

  it('keys by target identity and object; forget drops one object', () => {
    const memory = createDriftMemory();
    const basis = driftMemoryBasis('sha256:aaa', []);
    const here = driftMemoryKey('https://a:6443 ', deployment);
    const there = driftMemoryKey('https://b:6443 ', deployment);
    const asTenant = driftMemoryKey('https://a:6443 system:serviceaccount:team-a:deployer', deployment);
    memory.remember(here, basis, '7');
    expect(memory.cleanVersion(there, basis)).toBeUndefined();
    expect(memory.cleanVersion(asTenant, basis)).toBeUndefined();
    expect(memory.cleanVersion(here, basis)).toBe('7');
    memory.forget(here);
    expect(memory.cleanVersion(here, basis)).toBeUndefined();
  });

  it('is bounded: the least recently used entry goes first', () => {
    const memory = createDriftMemory({ maxEntries: 2 });
    const basis = 'b';
    memory.remember('x', basis, '1');
    memory.remember('y', basis, '2');
    expect(memory.cleanVersion('x', basis)).toBe('1');
    memory.remember('z', basis, '3');
    expect(memory.size).toBe(2);
    expect(memory.cleanVersion('y', basis)).toBeUndefined();
    expect(memory.cleanVersion('x', basis)).toBe('1');
    expect(memory.cleanVersion('z', basis)).toBe('3');
  });

  it('trusts a clean check for ttlMs from the last full check: re-remembering the same version does not extend it', () => {
    let t = 0;
    const memory = createDriftMemory({ ttlMs: 1_000, now: () => t });
    memory.remember('x', 'b', '5');
    t = 900;
    memory.remember('x', 'b', '5');
    t = 999;
    expect(memory.cleanVersion('x', 'b')).toBe('5');
    t = 1_000;
    expect(memory.cleanVersion('x', 'b')).toBeUndefined();
    memory.remember('x', 'b', '6');
    t = 1_500;
    expect(memory.cleanVersion('x', 'b')).toBe('6');
  });
});

describe('the discovery cache shared by a container', () => {
  const fake = (): Discovery => ({ resourceFor: () => Promise.resolve(undefined) });
  it('one Discovery per connection pool, server and acting user, for the TTL', () => {
    let t = 0;
    const cache = createDiscoveryCache({ ttlMs: 30_000, now: () => t });
    const agent = {};
    let made = 0;
    const create = () => {
      made++;
      return fake();
    };
    const a = cache.discoveryFor({ agent, server: 'https://k:6443' }, create);
    expect(cache.discoveryFor({ agent, server: 'https://k:6443' }, create)).toBe(a);
    expect(made).toBe(1);
    cache.discoveryFor({ agent, server: 'https://k:6443', impersonate: 'system:serviceaccount:a:d' }, create);
    cache.discoveryFor({ agent: {}, server: 'https://k:6443' }, create);
    expect(made).toBe(3);
    t = 30_000;
    expect(cache.discoveryFor({ agent, server: 'https://k:6443' }, create)).not.toBe(a);
    expect(made).toBe(4);
  });

  it('is bounded per pool', () => {
    const cache = createDiscoveryCache({ maxEntries: 2 });
    const agent = {};
    let made = 0;
    const create = () => {
      made++;
      return fake();
    };
    for (const user of ['a', 'b', 'c', 'a'])
      cache.discoveryFor({ agent, server: 's', impersonate: user }, create);
    expect(made).toBe(4);
  });
});

describe('the observer caches of a container', () => {
  it('a message sent because a Cluster changed drops the Cluster list', async () => {
    const caches = createObserverCaches();
    let lists = 0;
    const list = () => {
      lists++;
      return Promise.resolve([]);
    };
    await caches.clusters.get('*', 'clusters', list);
    invalidateObserverCaches(caches, { cause: 'timer: drift interval' });
    await caches.clusters.get('*', 'clusters', list);
    expect(lists).toBe(1);
    invalidateObserverCaches(caches, { cause: 'watch: Cluster local MODIFIED' });
    await caches.clusters.get('*', 'clusters', list);
    expect(lists).toBe(2);
  });
});
