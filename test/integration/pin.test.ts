// A pinned render (convoy.dev/pin) is applied from the render store instead of the source.
import { CoreV1Api } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { kubeConfigFor } from '../harness/kube.ts';
import { startReconcileEnv, type ReconcileEnv } from '../harness/reconcile-env.ts';

const cm = (version: string) =>
  `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: pinned-config}\ndata: {version: "${version}"}\n`;

describe('pinned renders', () => {
  let env: ReconcileEnv;
  beforeAll(async () => {
    env = await startReconcileEnv(kubeConfigFor(inject('kubeconfigPath')), 'pinned');
  });
  afterAll(() => env.close());

  it('a pin to a stored render applies it, whatever the source says; removing the pin follows the source again', async () => {
    const repo = await env.repo('pin-app', { 'cm.yaml': cm('one') });
    await env.api.create('Release', env.ns.name, 'pin-app', {
      cluster: { name: 'local' },
      targetNamespace: env.ns.name,
      source: { git: { url: repo.url, ref: { branch: 'main' } } },
    });
    const first = await env.reconcile('pin-app');
    const renderOne = first.release.status!.lastSuccessful!.renderRef!;
    await env.commit('pin-app', { 'cm.yaml': cm('two') });
    const second = await env.reconcile('pin-app');
    expect(second.release.status!.lastSuccessful!.renderRef).not.toBe(renderOne);
    const core = env.kc.makeApiClient(CoreV1Api);
    const version = async () =>
      (await core.readNamespacedConfigMap({ namespace: env.ns.name, name: 'pinned-config' })).data?.[
        'version'
      ];
    expect(await version()).toBe('two');

    await env.api.patchMerge('Release', env.ns.name, 'pin-app', {
      metadata: { annotations: { 'convoy.dev/pin': renderOne } },
    });
    const pinned = await env.reconcile('pin-app');
    expect(pinned.release.status?.pin).toEqual({ renderRef: renderOne, state: 'Active' });
    expect(pinned.release.status?.conditions?.find((c) => c.type === 'Applied')).toMatchObject({
      status: 'True',
      reason: 'Applied',
    });
    expect(pinned.release.status?.lastSuccessful?.renderRef).toBe(renderOne);
    expect(pinned.release.status?.lastAttempted?.resolvedSource?.git?.commit).toBe(
      first.release.status?.lastAttempted?.resolvedSource?.git?.commit,
    );
    expect(await version()).toBe('one');
    expect(pinned.release.metadata.generation).toBe(first.release.metadata.generation);

    await env.api.patchMerge('Release', env.ns.name, 'pin-app', {
      metadata: { annotations: { 'convoy.dev/pin': null } },
    });
    const unpinned = await env.reconcile('pin-app');
    expect(unpinned.release.status?.pin).toBeUndefined();
    expect(await version()).toBe('two');
  });
});
