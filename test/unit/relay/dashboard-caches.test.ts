// The HTTP API's two caches for the dashboard's 2-s refresh: the shared Release summaries
// (stale-while-revalidate) and the TokenReview/SubjectAccessReview answers.
import { describe, expect, it } from 'vitest';
import { cachingAuthenticator } from '../../../relay/http/auth-cache.ts';
import type { Authenticator } from '../../../relay/http/auth.ts';
import type { ReleaseApi } from '../../../relay/http/release-api.ts';
import { createSummaryCache } from '../../../relay/http/release-list.ts';

const release = (ns: string, name: string) => ({
  apiVersion: 'convoy.dev/v1alpha1',
  kind: 'Release',
  metadata: { namespace: ns, name, generation: 1 },
  spec: {
    cluster: { name: 'local' },
    source: { git: { url: 'https://git.example/a.git', ref: { branch: 'main' } } },
  },
});

function fakeReleases(lists: Record<string, unknown>[][]): ReleaseApi & { calls: number } {
  const api = {
    calls: 0,
    listAll: () => {
      const next = lists[Math.min(api.calls, lists.length - 1)];
      api.calls++;
      return next === undefined ? Promise.reject(new Error('apiserver down')) : Promise.resolve(next);
    },
    get: () => Promise.reject(new Error('unused')),
    list: () => Promise.reject(new Error('unused')),
    writesAs: () => ({
      annotate: () => Promise.reject(new Error('unused')),
      setSuspend: () => Promise.reject(new Error('unused')),
    }),
  };
  return api;
}

describe('createSummaryCache', () => {
  it('shares one list within ttl, serves the last answer while refreshing, and waits only when too old', async () => {
    let t = 0;
    const api = fakeReleases([[release('b', 'y'), release('a', 'x')], [release('a', 'x')]]);
    const summaries = createSummaryCache(api, { ttlMs: 1000, maxStaleMs: 10_000, now: () => t });
    const [first, again] = await Promise.all([summaries(), summaries()]);
    expect(api.calls).toBe(1);
    expect(first.map((s) => `${s.namespace}/${s.name}`)).toEqual(['a/x', 'b/y']); // sorted
    expect(again).toBe(first);
    t = 1500; // stale: answered at once from the last list, one refresh behind it
    expect(await summaries()).toBe(first);
    await new Promise((r) => setImmediate(r));
    expect(api.calls).toBe(2);
    expect((await summaries()).map((s) => s.name)).toEqual(['x']);
    t = 60_000; // too old: the caller waits for a fresh list
    await summaries();
    expect(api.calls).toBe(3);
  });

  it('does not keep a failed list: the next caller asks again and sees the error', async () => {
    const api = fakeReleases([]);
    const summaries = createSummaryCache(api, { now: () => 0 });
    await expect(summaries()).rejects.toThrow('apiserver down');
    await expect(summaries()).rejects.toThrow('apiserver down');
    expect(api.calls).toBe(2);
  });
});

describe('cachingAuthenticator', () => {
  it('keeps identities and decisions for their ttl, never an invalid token, keyed by the request', async () => {
    let t = 0;
    const calls = { authn: 0, authz: 0 };
    const inner: Authenticator = {
      authenticate: (token) => {
        calls.authn++;
        return Promise.resolve(token === 'good' ? { user: 'alice', groups: [] } : undefined);
      },
      authorize: (_user, _groups, request) => {
        calls.authz++;
        return Promise.resolve(request.namespace === 'team-a');
      },
    };
    const auth = cachingAuthenticator(inner, { identityMs: 10_000, accessMs: 5_000, now: () => t });
    expect(await auth.authenticate('good')).toEqual({ user: 'alice', groups: [] });
    await auth.authenticate('good');
    expect(calls.authn).toBe(1);
    expect(await auth.authenticate('bad')).toBeUndefined();
    expect(await auth.authenticate('bad')).toBeUndefined();
    expect(calls.authn).toBe(3);
    const ask = (namespace: string) =>
      auth.authorize('alice', [], { verb: 'list', namespace, resource: 'releases' });
    expect([await ask('team-a'), await ask('team-a'), await ask('team-b'), await ask('team-b')]).toEqual([
      true,
      true,
      false,
      false,
    ]);
    expect(calls.authz).toBe(2);
    t = 5_000;
    await ask('team-a');
    expect(calls.authz).toBe(3);
    t = 10_000;
    await auth.authenticate('good');
    expect(calls.authn).toBe(4);
  });
});
