import { CoreV1Api } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { freshNamespace, kubeConfigFor, type FreshNamespace } from '../harness/kube.ts';

// Runs in its own fork, in parallel with the other integration files, against the one
// control plane started by global-setup.ts; its namespace keeps it from colliding.
describe('parallel isolation', () => {
  const kc = kubeConfigFor(inject('kubeconfigPath'));
  const core = kc.makeApiClient(CoreV1Api);
  let ns: FreshNamespace;

  beforeAll(async () => {
    ns = await freshNamespace(kc, 'isolation');
  });
  afterAll(async () => {
    await ns?.delete();
  });

  it('sees only its own ConfigMap in its own namespace', async () => {
    await core.createNamespacedConfigMap({
      namespace: ns.name,
      body: {
        metadata: { name: 'settings', labels: { 'convoy.test/owner': 'parallel-isolation' } },
        data: { hello: 'world' },
      },
    });
    const got = await core.readNamespacedConfigMap({ namespace: ns.name, name: 'settings' });
    expect(got.data).toEqual({ hello: 'world' });
    const list = await core.listNamespacedConfigMap({
      namespace: ns.name,
      labelSelector: 'convoy.test/owner',
    });
    expect(list.items.map((c) => c.metadata?.name)).toEqual(['settings']);
  });
});
