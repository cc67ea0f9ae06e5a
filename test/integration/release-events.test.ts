/**
 * The Events convoy writes about a Release (events.k8s.io/v1), one test per
 * kind, through the convoy dev runtime on the real apiserver: RenderApplied,
 * an Applied reason change, DriftDetected, the re-apply of a hand-edited
 * object (DriftCorrected) and DriftResolved, Pruned; and the series a repeat
 * becomes. Hooks and rollback are decided by the same pure function
 * (test/unit/status/release-events.test.ts).
 */
import { CoreV1Api, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createEventRecorder } from '../../adapters/kube/events.ts';
import { createKubeClient, resourcePath } from '../../adapters/kube/http.ts';
import { fromKubeconfigFile } from '../../adapters/kube/kubeconfig.ts';
import { kubeConfigFor } from '../harness/kube.ts';
import { startRuntimeEnv, until, type RuntimeEnv } from '../harness/runtime-env.ts';
import { runConvoy } from '../harness/cli.ts';

interface Ev {
  type: string;
  reason: string;
  action: string;
  note: string;
  reportingController: string;
  series?: { count: number };
  regarding: { kind: string; name: string; uid?: string };
}

const configMap = (name: string, value: string) =>
  `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: ${name}}\ndata: {k: "${value}"}\n`;

describe('Events about a Release on the real apiserver', { timeout: 180_000 }, () => {
  const kubeconfig = inject('kubeconfigPath');
  const kube = createKubeClient(fromKubeconfigFile(kubeconfig));
  let env: RuntimeEnv;

  const eventsOf = async (name: string): Promise<Ev[]> =>
    (
      await kube.list<Ev>(resourcePath('events.k8s.io/v1', 'events', env.ns.name), {
        fieldSelector: `regarding.kind=Release,regarding.name=${name}`,
      })
    ).items;
  const eventWith = (name: string, reason: string, match: (e: Ev) => boolean = () => true) =>
    until(
      `an Event ${reason} about ${name}`,
      async () => (await eventsOf(name)).find((e) => e.reason === reason && match(e)),
      { timeoutMs: 60_000, intervalMs: 250 },
    );

  beforeAll(async () => {
    env = await startRuntimeEnv(kubeConfigFor(kubeconfig), 'events', {
      relayTickMs: 200,
      visibilityTimeoutSeconds: 5,
    });
  });
  afterAll(async () => {
    await env?.close();
  });

  it('RenderApplied names the objects written, with the Applied reason change; reported by convoy.dev/reconcile about the Release', async () => {
    const repo = await env.repo('applied', {
      'a.yaml': configMap('ev-a', '1'),
      'b.yaml': configMap('ev-b', '1'),
    });
    const created = await env.createRelease('applied', {
      source: { git: { url: repo.url, ref: { branch: 'main' } } },
    });
    const applied = await eventWith('applied', 'RenderApplied');
    expect(applied).toMatchObject({
      type: 'Normal',
      action: 'Apply',
      reportingController: 'convoy.dev/reconcile',
      regarding: { kind: 'Release', name: 'applied', uid: created.metadata.uid },
    });
    expect(applied.note).toContain(`ConfigMap ${env.ns.name}/ev-a`);
    expect(applied.note).toContain(`ConfigMap ${env.ns.name}/ev-b`);
    const appliedReason = await eventWith('applied', 'Applied');
    expect(appliedReason).toMatchObject({ type: 'Normal', action: 'Reconcile' });
    expect(appliedReason.note).toMatch(/^Applied is True \(Applied\)/);
    // The CLI shows them, as does kubectl describe.
    const cli = await runConvoy(['events', `${env.ns.name}/applied`], kubeconfig);
    expect(cli.stdout).toMatch(
      /Normal\s+RenderApplied\s+convoy\.dev\/reconcile\s+1\s+applied render sha256:/,
    );
  });

  it('an Applied reason change to a failure is a Warning naming the reason (SourceNotReady), once however often it is retried', async () => {
    await env.createRelease('missing', {
      source: { git: { url: `${env.git.url}/no-such.git`, ref: { branch: 'main' } } },
      syncPolicy: { retryBackoff: { initial: '1s', factor: 1, max: '1s' } },
    });
    const warning = await eventWith('missing', 'SourceNotReady');
    expect(warning).toMatchObject({ type: 'Warning', action: 'Reconcile' });
    await until(
      'three reconciles',
      () => env.recordLines('missing').filter((l) => l.msg === 'reconciled').length >= 3,
      { timeoutMs: 60_000 },
    );
    expect((await eventsOf('missing')).filter((e) => e.reason === 'SourceNotReady')).toHaveLength(1);
  });

  it('DriftDetected names the hand-edited object; a reconcile re-applies it (DriftCorrected names it); then DriftResolved; nothing holds Secret data', async () => {
    const repo = await env.repo('drift', { 'cm.yaml': configMap('drift-cm', 'desired') });
    await env.createRelease('drift', {
      source: { git: { url: repo.url, ref: { branch: 'main' } } },
      driftDetection: { interval: '2s' },
    });
    await eventWith('drift', 'RenderApplied');
    await until(
      'InSync True',
      async () =>
        (await env.getRelease('drift')).status?.conditions?.find((c) => c.type === 'InSync')?.status ===
        'True',
      { timeoutMs: 60_000 },
    );
    const core = env.kc.makeApiClient(CoreV1Api);
    await core.patchNamespacedConfigMap(
      {
        namespace: env.ns.name,
        name: 'drift-cm',
        body: { data: { k: 'edited-by-hand' } },
        fieldManager: 'kubectl-edit',
      },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    const detected = await eventWith('drift', 'DriftDetected');
    expect(detected).toMatchObject({
      type: 'Warning',
      action: 'CheckDrift',
      reportingController: 'convoy.dev/drift',
    });
    expect(detected.note).toContain('drift-cm');
    // A reconcile (here: a sync request) finds the edited object and writes it again: not silent any more.
    await env.api.patchMerge('Release', env.ns.name, 'drift', {
      metadata: {
        annotations: { 'convoy.dev/sync-requested-at': new Date().toISOString().replace(/\.\d+Z$/, 'Z') },
      },
    });
    const corrected = await eventWith('drift', 'DriftCorrected');
    expect(corrected).toMatchObject({ type: 'Normal', action: 'Apply' });
    expect(corrected.note).toMatch(
      new RegExp(
        `re-applied 1 object\\(s\\) of render sha256:[0-9a-f]{64} that differed on the cluster: ConfigMap ${env.ns.name}/drift-cm$`,
      ),
    );
    expect(
      (await core.readNamespacedConfigMap({ namespace: env.ns.name, name: 'drift-cm' })).data?.['k'],
    ).toBe('desired');
    expect(await eventWith('drift', 'DriftResolved')).toMatchObject({ type: 'Normal' });
    expect(JSON.stringify(await eventsOf('drift'))).not.toContain('edited-by-hand');
  });

  it('Pruned names the objects deleted when they leave the render', async () => {
    const repo = await env.repo('prune', {
      'v1/keep.yaml': configMap('keep-cm', '1'),
      'v1/drop.yaml': configMap('drop-cm', '1'),
      'v2/keep.yaml': configMap('keep-cm', '1'),
    });
    await env.createRelease('prune', {
      source: { git: { url: repo.url, ref: { branch: 'main' }, path: 'v1' } },
    });
    await eventWith('prune', 'RenderApplied');
    await env.api.patchMerge('Release', env.ns.name, 'prune', { spec: { source: { git: { path: 'v2' } } } });
    const pruned = await eventWith('prune', 'Pruned');
    expect(pruned).toMatchObject({
      type: 'Normal',
      action: 'Prune',
      note: `deleted 1 object(s) no longer in the render: ConfigMap ${env.ns.name}/drop-cm`,
    });
  });

  it('a repeated Event becomes a series (count 2, 3) instead of a new Event', async () => {
    const recorder = createEventRecorder(fromKubeconfigFile(kubeconfig), {
      controller: 'convoy.dev/test',
      instance: 'test',
    });
    const release = await env.getRelease('applied');
    const subject = { namespace: env.ns.name, name: 'applied', uid: release.metadata.uid };
    const intent = {
      type: 'Normal' as const,
      reason: 'Repeated',
      action: 'Test',
      note: 'the same thing again',
    };
    for (let i = 0; i < 3; i++) expect(await recorder.record(subject, [intent])).toEqual([]);
    const repeated = (await eventsOf('applied')).filter((e) => e.reason === 'Repeated');
    expect(repeated).toHaveLength(1);
    expect(repeated[0]?.series?.count).toBe(3);
  });
});
