// A sync request resolves the newest commit: the per-container ls-remote cache
// (adapters/source/ref-cache.ts, 15 s) answers interval runs, but a run for a /sync or
// /sync?force=true request not followed by an attempt yet asks the real Git server.
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createPortCaches } from '../../adapters/reconcile/port-caches.ts';
import { Annotation } from '../../domain/reconcile/annotations.ts';
import type { ReconcilePorts } from '../../domain/reconcile/ports.ts';
import { toRfc3339 } from '../../domain/status/conditions.ts';
import { kubeConfigFor } from '../harness/kube.ts';
import { startReconcileEnv, type ReconcileEnv } from '../harness/reconcile-env.ts';

const cm = (value: string) => ({
  'app/cm.yaml': `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: fresh}\ndata: {v: "${value}"}\n`,
});

describe('a sync request bypasses the shared ls-remote answers', () => {
  let env: ReconcileEnv;
  let ports: ReconcilePorts;
  beforeAll(async () => {
    env = await startReconcileEnv(kubeConfigFor(inject('kubeconfigPath')), 'sync-fresh');
    // One container's caches, with a window long enough that only a sync request can see a push.
    ports = env.ports({ wiring: { caches: createPortCaches({ refTtlMs: 10 * 60_000 }) } });
  });
  afterAll(() => env.close());

  const commitOf = async () =>
    (await env.api.getRelease(env.ns.name, 'fresh')).status?.lastAttempted?.resolvedSource?.git?.commit;
  const gitRequests = () => env.git.requests.filter((r) => r.path.startsWith('/fresh-app.git/')).length;
  const request = async (annotation: string) => {
    // A second later than the last attempt, as a user's request after it would be.
    await new Promise((resolve) => setTimeout(resolve, 1100));
    await env.api.patchMerge('Release', env.ns.name, 'fresh', {
      metadata: { annotations: { [annotation]: toRfc3339(new Date()) } },
    });
  };

  it('an interval run keeps the cached commit; /sync and /sync?force=true each resolve the pushed one', async () => {
    const repo = await env.repo('fresh-app', cm('one'));
    await env.api.create('Release', env.ns.name, 'fresh', {
      cluster: { name: 'local' },
      targetNamespace: env.ns.name,
      source: { git: { url: repo.url, ref: { branch: 'main' }, path: 'app' } },
    });
    await env.reconcile('fresh', ports);
    expect(await commitOf()).toBe(repo.commit);

    const second = await env.commit('fresh-app', cm('two'));
    await env.reconcile('fresh', ports);
    // The cache is in effect: without a request the run still sees the first commit.
    expect(await commitOf()).toBe(repo.commit);

    await request(Annotation.syncRequestedAt);
    await env.reconcile('fresh', ports);
    expect(await commitOf()).toBe(second.commit);
    // Answered: once an attempt is seconds later than the request (both are whole seconds, so
    // the run right after may ask once more), runs use the (now newer) cached answer again.
    await new Promise((resolve) => setTimeout(resolve, 1100));
    await env.reconcile('fresh', ports);
    const handled = gitRequests();
    await env.reconcile('fresh', ports);
    expect(gitRequests()).toBe(handled);
    expect(await commitOf()).toBe(second.commit);

    const third = await env.commit('fresh-app', cm('three'));
    await env.reconcile('fresh', ports);
    expect(await commitOf()).toBe(second.commit);
    await request(Annotation.forceSyncRequestedAt);
    await env.reconcile('fresh', ports);
    expect(await commitOf()).toBe(third.commit);
  });
});
