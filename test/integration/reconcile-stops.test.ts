// One test per row of "Where a reconcile can stop" (status-and-conditions.txt)
// that the reconcile pipeline covers, on the real apiserver, git server,
// helm/kubectl binaries and fauxqs S3.
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { CoreV1Api } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { Release } from '../../domain/api/objects.ts';
import type { Outcome } from '../../domain/runtime/outcome.ts';
import { RenderStoreUnavailableError } from '../../domain/store/render-store.ts';
import { FAIL_LABEL } from '../../dev/control-plane.ts';
import { kubeConfigFor } from '../harness/kube.ts';
import { startReconcileEnv, type ReconcileEnv } from '../harness/reconcile-env.ts';

const configMap = (
  name: string,
  data: Record<string, string> = { k: 'v' },
  annotations: Record<string, string> = {},
) =>
  `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\n  annotations: ${JSON.stringify(annotations)}\ndata: ${JSON.stringify(data)}\n`;

function applied(release: Release) {
  return release.status?.conditions?.find((c) => c.type === 'Applied');
}

function expectRow(
  result: { outcome: Outcome; release: Release },
  row: {
    stage?: string;
    reason: string;
    retried: boolean;
    phase: '' | 'Failed' | 'Succeeded';
    before?: Release;
  },
) {
  const status = result.release.status!;
  const cond = applied(result.release)!;
  expect(cond.reason).toBe(row.reason);
  expect(cond.status).toBe(row.reason === 'Applied' || row.reason === 'RolledBack' ? 'True' : 'False');
  expect(cond.observedGeneration).toBe(result.release.metadata.generation);
  expect(status.lastAttempted?.phase).toBe(row.phase);
  expect(status.lastAttempted?.failure?.stage).toBe(row.stage);
  if (row.stage) expect(status.lastAttempted?.failure?.reason).toBe(row.reason);
  if (row.retried) expect(result.outcome.kind).toBe('retry');
  else expect(['stop', 'requeueAfter', 'done']).toContain(result.outcome.kind);
  if (row.phase !== 'Succeeded') {
    expect(status.lastSuccessful).toEqual(row.before?.status?.lastSuccessful);
  }
}

describe('where a reconcile can stop', () => {
  let env: ReconcileEnv;
  let repoUrl: string;
  let n = 0;
  const unique = (prefix: string) => `${prefix}-${++n}`;

  beforeAll(async () => {
    env = await startReconcileEnv(kubeConfigFor(inject('kubeconfigPath')), 'reconcile-stops');
    repoUrl = (await env.repo('apps', { 'app/cm.yaml': configMap('app-config') })).url;
  });
  afterAll(() => env.close());

  async function release(
    spec: Record<string, unknown>,
    name = unique('rel'),
    annotations: Record<string, string> = {},
  ) {
    await env.api.create(
      'Release',
      env.ns.name,
      name,
      {
        cluster: { name: 'local' },
        targetNamespace: env.ns.name,
        source: { git: { url: repoUrl, ref: { branch: 'main' }, path: 'app' } },
        ...spec,
      },
      { annotations },
    );
    return name;
  }

  it('Fetch the source: error → SourceResolution / SourceNotReady, retried with backoff', async () => {
    const name = await release({
      source: { git: { url: repoUrl, ref: { branch: 'no-such-branch' } } },
      syncPolicy: { retryBackoff: { initial: '5s' } },
    });
    const result = await env.reconcile(name);
    expectRow(result, {
      stage: 'SourceResolution',
      reason: 'SourceNotReady',
      retried: true,
      phase: 'Failed',
    });
    expect(applied(result.release)!.message).toContain('no-such-branch');
    expect(result.outcome.kind === 'retry' && result.outcome.policy).toEqual({
      initialMs: 5000,
      factor: 2,
      maxMs: 600000,
    });
  });

  it('Fetch the source: not supported (semver ref) → SourceResolution / Unsupported, not retried', async () => {
    const name = await release({ source: { git: { url: repoUrl, ref: { semver: '>=1.0.0' } } } });
    const result = await env.reconcile(name);
    expectRow(result, { stage: 'SourceResolution', reason: 'Unsupported', retried: false, phase: 'Failed' });
    expect(result.outcome.kind).toBe('stop');
  });

  it('Fetch the source: not supported (ssh URL) → SourceResolution / Unsupported, not retried', async () => {
    const name = await release({
      source: { git: { url: 'ssh://git@example.invalid/apps.git', ref: { branch: 'main' } } },
    });
    const result = await env.reconcile(name);
    expectRow(result, { stage: 'SourceResolution', reason: 'Unsupported', retried: false, phase: 'Failed' });
  });

  it('Find the cluster: missing → ClusterResolution / ClusterNotReady, retried', async () => {
    const name = await release({ cluster: { name: 'nowhere' } });
    const result = await env.reconcile(name);
    expectRow(result, {
      stage: 'ClusterResolution',
      reason: 'ClusterNotReady',
      retried: true,
      phase: 'Failed',
    });
    expect(applied(result.release)!.message).toContain('nowhere');
    expect(result.release.status?.lastAttempted?.resolvedSource?.git?.commit).toMatch(/^[0-9a-f]{40}$/);
  });

  it('Find the cluster: not reachable → ClusterResolution / ClusterNotReady, retried', async () => {
    const core = env.kc.makeApiClient(CoreV1Api);
    const kubeconfig = `apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]\nusers: [{name: u, user: {token: t}}]\ncontexts: [{name: x, context: {cluster: c, user: u}}]\ncurrent-context: x\n`;
    await core.createNamespacedSecret({
      namespace: env.ns.name,
      body: { metadata: { name: 'far-kubeconfig' }, stringData: { value: kubeconfig } },
    });
    await env.api.create('Cluster', env.ns.name, 'far', {
      kubeConfig: { secretRef: { name: 'far-kubeconfig' } },
    });
    const result = await env.reconcile(await release({ cluster: { name: 'far' } }));
    expectRow(result, {
      stage: 'ClusterResolution',
      reason: 'ClusterNotReady',
      retried: true,
      phase: 'Failed',
    });
    expect(applied(result.release)!.message).toContain('127.0.0.1:1');
  });

  it('Read Helm values: a missing layer → Rendering / ValuesNotReady, retried', async () => {
    const chart = await env.repo('chart-values', {
      'Chart.yaml': 'apiVersion: v2\nname: demo\nversion: 0.1.0\n',
      'templates/cm.yaml':
        'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: demo}\ndata: {x: "{{ .Values.x }}"}\n',
    });
    const name = await release({
      source: { git: { url: chart.url, ref: { branch: 'main' } } },
      content: { type: 'Helm', helm: { valuesFrom: [{ kind: 'ConfigMap', name: 'absent-values' }] } },
    });
    const result = await env.reconcile(name);
    expectRow(result, { stage: 'Rendering', reason: 'ValuesNotReady', retried: true, phase: 'Failed' });
    expect(applied(result.release)!.message).toContain('absent-values');
  });

  it('Render or mutate: error (YAML that is not Kubernetes objects) → Rendering / DeployFailed, retried', async () => {
    const bad = await env.repo('bad-yaml', { 'x.yaml': 'just: a map\nwithout: kind\n' });
    const result = await env.reconcile(
      await release({ source: { git: { url: bad.url, ref: { branch: 'main' } } } }),
    );
    expectRow(result, { stage: 'Rendering', reason: 'DeployFailed', retried: true, phase: 'Failed' });
    expect(applied(result.release)!.message).toContain('x.yaml');
  });

  it('Render or mutate: error (duplicate objects) → Rendering / DeployFailed, retried', async () => {
    const dup = await env.repo('dup', { 'a.yaml': configMap('same'), 'b.yaml': configMap('same') });
    const result = await env.reconcile(
      await release({ source: { git: { url: dup.url, ref: { branch: 'main' } } } }),
    );
    expectRow(result, { stage: 'Rendering', reason: 'DeployFailed', retried: true, phase: 'Failed' });
    expect(applied(result.release)!.message).toContain('same');
  });

  it('Render or mutate: not supported (Jsonnet) → Rendering / Unsupported, not retried', async () => {
    const result = await env.reconcile(await release({ content: { type: 'Jsonnet' } }));
    expectRow(result, { stage: 'Rendering', reason: 'Unsupported', retried: false, phase: 'Failed' });
  });

  it('Render or mutate: not supported (StrategicMerge mutation) → Rendering / Unsupported, not retried', async () => {
    await env.api.create('Mutation', env.ns.name, 'smp', {
      releaseSelector: { matchLabels: { smp: 'yes' } },
      patches: [{ target: { kind: 'ConfigMap' }, type: 'StrategicMerge', patch: { data: { a: 'b' } } }],
    });
    const name = unique('smp');
    await env.api.create(
      'Release',
      env.ns.name,
      name,
      {
        cluster: { name: 'local' },
        targetNamespace: env.ns.name,
        source: { git: { url: repoUrl, ref: { branch: 'main' }, path: 'app' } },
      },
      { labels: { smp: 'yes' } },
    );
    const result = await env.reconcile(name);
    expectRow(result, { stage: 'Rendering', reason: 'Unsupported', retried: false, phase: 'Failed' });
    expect(applied(result.release)!.message).toContain('smp');
  });

  it('Load the pinned render: not available → Rendering / Pinned, not retried', async () => {
    const name = await release({}, unique('pinned'), { 'convoy.dev/pin': `sha256:${'0'.repeat(64)}` });
    const result = await env.reconcile(name);
    expectRow(result, { stage: 'Rendering', reason: 'Pinned', retried: false, phase: 'Failed' });
    expect(result.release.status?.pin).toEqual({ renderRef: `sha256:${'0'.repeat(64)}`, state: 'NotFound' });
  });

  it('Load the pinned render: no store configured → Rendering / Pinned (NoStore), not retried', async () => {
    const name = await release({}, unique('nostore'), { 'convoy.dev/pin': `sha256:${'1'.repeat(64)}` });
    const result = await env.reconcile(name, env.ports({ store: undefined }));
    expectRow(result, { stage: 'Rendering', reason: 'Pinned', retried: false, phase: 'Failed' });
    expect(result.release.status?.pin?.state).toBe('NoStore');
  });

  it('Load the pinned render: read or parse error → Rendering / DeployFailed, not retried', async () => {
    const ref = `sha256:${'2'.repeat(64)}`;
    const name = await release({}, unique('corrupt'), { 'convoy.dev/pin': ref });
    await env.s3.send(
      new PutObjectCommand({
        Bucket: env.bucket,
        Key: `renders/${env.ns.name}/${name}/${'2'.repeat(64)}.json.gz`,
        Body: 'not gzip',
      }),
    );
    const result = await env.reconcile(name);
    expectRow(result, { stage: 'Rendering', reason: 'DeployFailed', retried: false, phase: 'Failed' });
    expect(result.outcome.kind).toBe('stop');
  });

  it('Manual sync mode: no /sync request → WaitingForSync, phase empty, not retried', async () => {
    const result = await env.reconcile(await release({ syncPolicy: { mode: 'Manual' } }));
    expectRow(result, { reason: 'WaitingForSync', retried: false, phase: '' });
    expect(result.outcome.kind).toBe('stop');
  });

  it('Manual sync mode: a /sync request applies the render and sets lastHandledSyncAt', async () => {
    const name = await release({ syncPolicy: { mode: 'Manual' } });
    expect(applied((await env.reconcile(name)).release)!.reason).toBe('WaitingForSync');
    await env.api.patchMerge('Release', env.ns.name, name, {
      metadata: { annotations: { 'convoy.dev/sync-requested-at': '2026-11-29T11:00:00Z' } },
    });
    const synced = await env.reconcile(name);
    expectRow(synced, { reason: 'Applied', retried: false, phase: 'Succeeded' });
    expect(synced.release.status?.lastHandledSyncAt).toBe('2026-11-29T11:00:00Z');
    // Manual mode, render unchanged, no new request: Applied stays True.
    const again = await env.reconcile(name);
    expect(applied(again.release)).toMatchObject({ status: 'True', reason: 'Applied' });
    expect(again.release.status?.lastSuccessful).toEqual(synced.release.status?.lastSuccessful);
  });

  it('Cluster wave: wait → WaitingForClusterWave, phase empty; proceeds once the lower wave is ready', async () => {
    await env.api.create('Cluster', env.ns.name, 'waves-cluster', { inCluster: true });
    const low = await release({ cluster: { name: 'waves-cluster' }, clusterWave: 0 }, unique('wave-low'));
    const high = await release({ cluster: { name: 'waves-cluster' }, clusterWave: 1 }, unique('wave-high'));
    const waiting = await env.reconcile(high);
    expectRow(waiting, { reason: 'WaitingForClusterWave', retried: false, phase: '' });
    expect(waiting.outcome.kind).toBe('requeueAfter');
    // Make the lower wave Ready: applied, then InSync and Healthy from the observers' writers.
    const lowRun = await env.reconcile(low);
    const { createStatusWriter } = await import('../../adapters/kube/status-writer.ts');
    const writer = createStatusWriter(env.config);
    const gen = lowRun.release.metadata.generation ?? 1;
    const cond = (type: string, reason: string) => ({
      type,
      status: 'True' as const,
      reason,
      message: '',
      lastTransitionTime: '2026-11-29T10:00:00Z',
      observedGeneration: gen,
    });
    await writer.apply(
      { namespace: env.ns.name, name: low },
      { manager: 'convoy-observe', slice: { conditions: [cond('InSync', 'InSync')] } },
    );
    await writer.apply(
      { namespace: env.ns.name, name: low },
      {
        manager: 'convoy-health',
        slice: { healthSummary: undefined, conditions: [cond('Healthy', 'NotConfigured')] },
      },
    );
    const proceeded = await env.reconcile(high);
    expectRow(proceeded, { reason: 'Applied', retried: false, phase: 'Succeeded' });
  });

  it('Cluster wave: timeout → Syncing / ClusterWaveFailed, not retried', async () => {
    await env.api.create('Cluster', env.ns.name, 'waves-timeout', { inCluster: true });
    await release(
      {
        cluster: { name: 'waves-timeout' },
        clusterWave: 0,
        source: { git: { url: repoUrl, ref: { branch: 'no-such' } } },
      },
      unique('never-ready'),
    );
    const high = await release({
      cluster: { name: 'waves-timeout' },
      clusterWave: 5,
      syncPolicy: { clusterWaveTimeout: '1m' },
    });
    expect(applied((await env.reconcile(high)).release)!.reason).toBe('WaitingForClusterWave');
    const later = await env.reconcile(high, env.ports({ now: () => new Date(Date.now() + 2 * 60_000) }));
    expectRow(later, { stage: 'Syncing', reason: 'ClusterWaveFailed', retried: false, phase: 'Failed' });
    expect(applied(later.release)!.message).toContain('never-ready');
  });

  it('Dry run: rejected → Syncing / Unappliable, nothing applied, not retried', async () => {
    const invalid = await env.repo('invalid', {
      'ok.yaml': configMap('would-be-applied'),
      'svc.yaml':
        'apiVersion: v1\nkind: Service\nmetadata: {name: bad-svc}\nspec: {ports: [{port: 999999}]}\n',
    });
    const result = await env.reconcile(
      await release({ source: { git: { url: invalid.url, ref: { branch: 'main' } } } }),
    );
    expectRow(result, { stage: 'Syncing', reason: 'Unappliable', retried: false, phase: 'Failed' });
    expect(applied(result.release)!.message).toContain('bad-svc');
    const core = env.kc.makeApiClient(CoreV1Api);
    await expect(
      core.readNamespacedConfigMap({ namespace: env.ns.name, name: 'would-be-applied' }),
    ).rejects.toThrow();
  });

  it('Dry run: the first object of a first deploy, checked by its own apply, refused → Syncing / Unappliable, nothing applied, not retried', async () => {
    // A ConfigMap is applied before a Service (same wave): it is the object whose apply is its check.
    const invalid = await env.repo('invalid-first', {
      'cm.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: bad-first}\ndata: {count: 1}\n',
      'svc.yaml':
        'apiVersion: v1\nkind: Service\nmetadata: {name: would-be-applied}\nspec: {ports: [{port: 80}]}\n',
    });
    const result = await env.reconcile(
      await release({ source: { git: { url: invalid.url, ref: { branch: 'main' } } } }),
    );
    expectRow(result, { stage: 'Syncing', reason: 'Unappliable', retried: false, phase: 'Failed' });
    expect(applied(result.release)!.message).toContain('ConfigMap');
    expect(applied(result.release)!.message).toContain('bad-first');
    expect(result.release.status?.rollout).toBeUndefined();
    const core = env.kc.makeApiClient(CoreV1Api);
    await expect(
      core.readNamespacedConfigMap({ namespace: env.ns.name, name: 'bad-first' }),
    ).rejects.toThrow();
    await expect(
      core.readNamespacedService({ namespace: env.ns.name, name: 'would-be-applied' }),
    ).rejects.toThrow();
  });

  it('Write to the render store: error → Syncing / DeployFailed, retried', async () => {
    const failing = env.ports();
    const ports = env.ports({
      store: {
        ...failing.store!,
        put: () => Promise.reject(new RenderStoreUnavailableError('put', 'k', 'ECONNREFUSED', 'store down')),
      },
    });
    const result = await env.reconcile(await release({}), ports);
    expectRow(result, { stage: 'Syncing', reason: 'DeployFailed', retried: true, phase: 'Failed' });
    expect(applied(result.release)!.message).toContain('render store');
  });

  it('Apply a wave: error → Syncing / DeployFailed, retried (a forced sync skips the dry run)', async () => {
    const invalid = await env.repo('invalid-forced', {
      'svc.yaml':
        'apiVersion: v1\nkind: Service\nmetadata: {name: forced-bad}\nspec: {ports: [{port: 999999}]}\n',
    });
    const name = await release(
      { source: { git: { url: invalid.url, ref: { branch: 'main' } } } },
      unique('forced'),
      { 'convoy.dev/force-sync-requested-at': '2026-11-29T10:00:00Z' },
    );
    const result = await env.reconcile(name);
    expectRow(result, { stage: 'Syncing', reason: 'DeployFailed', retried: true, phase: 'Failed' });
    expect(result.release.status?.lastHandledForceSyncAt).toBe('2026-11-29T10:00:00Z');
  });

  it('Sync wave: wait for the previous wave → WaitingForWaveHealth, rechecked within 10 s', async () => {
    const waves = await env.repo('waves', {
      'job.yaml':
        'apiVersion: batch/v1\nkind: Job\nmetadata: {name: migrate, annotations: {convoy.dev/sync-wave: "0"}}\nspec: {template: {spec: {restartPolicy: Never, nodeSelector: {convoy.test/no-such-node: "true"}, containers: [{name: m, image: busybox}]}}}\n',
      'cm.yaml': configMap('after-migrate', { k: 'v' }, { 'convoy.dev/sync-wave': '1' }),
    });
    const name = await release({ source: { git: { url: waves.url, ref: { branch: 'main' } } } });
    const result = await env.reconcile(name);
    expectRow(result, { reason: 'WaitingForWaveHealth', retried: false, phase: '' });
    expect(result.outcome).toMatchObject({ kind: 'requeueAfter' });
    expect(result.outcome.kind === 'requeueAfter' && result.outcome.delayMs).toBeLessThanOrEqual(10_000);
    expect(result.release.status?.waves).toMatchObject([
      { wave: 0, state: 'Applied' },
      { wave: 1, state: 'Pending' },
    ]);
    expect(result.release.status?.rollout).toMatchObject({ state: 'Progressing', wave: 0 });
  });

  it('Sync wave: timeout → Syncing / WaveFailed without failurePolicy, not retried', async () => {
    const waves = await env.repo('waves-timeout', {
      'job.yaml':
        'apiVersion: batch/v1\nkind: Job\nmetadata: {name: slow, annotations: {convoy.dev/sync-wave: "0"}}\nspec: {template: {spec: {restartPolicy: Never, nodeSelector: {convoy.test/no-such-node: "true"}, containers: [{name: m, image: busybox}]}}}\n',
      'cm.yaml': configMap('never', { k: 'v' }, { 'convoy.dev/sync-wave': '1' }),
    });
    const name = await release({
      source: { git: { url: waves.url, ref: { branch: 'main' } } },
      syncPolicy: { waveTimeout: '1s' },
    });
    const first = await env.reconcile(name);
    expect(applied(first.release)!.reason).toBe('WaitingForWaveHealth');
    const later = await env.reconcile(name, env.ports({ now: () => new Date(Date.now() + 5_000) }));
    expectRow(later, { stage: 'Syncing', reason: 'WaveFailed', retried: false, phase: 'Failed' });
    expect(later.outcome.kind).toBe('stop');
    expect(later.release.status?.waves?.[0]?.state).toBe('TimedOut');
    expect(later.release.status?.rollout?.state).toBe('Failed');
  });

  it('Sync wave: timeout with failurePolicy rollback Never → Syncing / RolloutFailed, RolloutSucceeded False/Failed', async () => {
    const waves = await env.repo('waves-policy', {
      'job.yaml':
        'apiVersion: batch/v1\nkind: Job\nmetadata: {name: slow, annotations: {convoy.dev/sync-wave: "0"}}\nspec: {template: {spec: {restartPolicy: Never, nodeSelector: {convoy.test/no-such-node: "true"}, containers: [{name: m, image: busybox}]}}}\n',
      'cm.yaml': configMap('never', { k: 'v' }, { 'convoy.dev/sync-wave': '1' }),
    });
    const name = await release({
      source: { git: { url: waves.url, ref: { branch: 'main' } } },
      syncPolicy: { waveTimeout: '1s' },
      failurePolicy: { rollback: 'Never' },
    });
    await env.reconcile(name);
    const later = await env.reconcile(name, env.ports({ now: () => new Date(Date.now() + 5_000) }));
    expectRow(later, { stage: 'Syncing', reason: 'RolloutFailed', retried: false, phase: 'Failed' });
    expect(later.release.status?.conditions?.find((c) => c.type === 'RolloutSucceeded')).toMatchObject({
      status: 'False',
      reason: 'Failed',
    });
  });

  it('Sync wave: timeout with failurePolicy OnWaveFailure → RolledBack (Applied True), the last healthy render runs again', async () => {
    const repo = await env.repo('rollback', { 'cm.yaml': configMap('rb-config', { version: 'one' }) });
    const name = await release({
      source: { git: { url: repo.url, ref: { branch: 'main' } } },
      syncPolicy: { waveTimeout: '1s' },
      failurePolicy: { rollback: 'OnWaveFailure' },
    });
    const first = await env.reconcile(name);
    expect(first.release.status?.rollout?.state).toBe('Succeeded');
    expect(first.release.status?.lastHealthy?.renderRef).toBe(
      first.release.status?.lastSuccessful?.renderRef,
    );
    await env.commit('rollback', {
      'job.yaml':
        'apiVersion: batch/v1\nkind: Job\nmetadata: {name: rb-migrate, annotations: {convoy.dev/sync-wave: "0"}}\nspec: {template: {spec: {restartPolicy: Never, nodeSelector: {convoy.test/no-such-node: "true"}, containers: [{name: m, image: busybox}]}}}\n',
      'cm.yaml': configMap('rb-config', { version: 'two' }, { 'convoy.dev/sync-wave': '1' }),
    });
    const waiting = await env.reconcile(name);
    expect(applied(waiting.release)!.reason).toBe('WaitingForWaveHealth');
    const later = await env.reconcile(name, env.ports({ now: () => new Date(Date.now() + 5_000) }));
    expectRow(later, {
      stage: 'Syncing',
      reason: 'RolledBack',
      retried: false,
      phase: 'Failed',
      before: {
        ...first.release,
        status: { ...first.release.status, lastSuccessful: first.release.status?.lastHealthy },
      },
    });
    const status = later.release.status!;
    expect(status.lastSuccessful?.renderRef).toBe(first.release.status?.lastHealthy?.renderRef);
    expect(status.lastAttempted?.renderRef).not.toBe(status.lastSuccessful?.renderRef);
    expect(status.rollout?.state).toBe('RolledBack');
    expect(status.conditions?.find((c) => c.type === 'RolloutSucceeded')).toMatchObject({
      status: 'False',
      reason: 'RolledBack',
    });
    const core = env.kc.makeApiClient(CoreV1Api);
    expect((await core.readNamespacedConfigMap({ namespace: env.ns.name, name: 'rb-config' })).data).toEqual({
      version: 'one',
    });
    const { BatchV1Api } = await import('@kubernetes/client-node');
    await expect(
      env.kc.makeApiClient(BatchV1Api).readNamespacedJob({ namespace: env.ns.name, name: 'rb-migrate' }),
    ).rejects.toThrow();
    // It stays rolled back: the next run does not apply the failed render again.
    const again = await env.reconcile(name);
    expect(applied(again.release)!.reason).toBe('RolledBack');
    expect((await core.readNamespacedConfigMap({ namespace: env.ns.name, name: 'rb-config' })).data).toEqual({
      version: 'one',
    });
  });

  // Hook Jobs run on the simulated nodes: the real Job controller completes them (KWOK exits their
  // pods 0), or fails them when the pod template carries KWOK's failure label (exit 1).
  const jobTemplate = { spec: { containers: [{ name: 'hook', image: 'busybox', command: ['true'] }] } };
  const failingJobTemplate = { metadata: { labels: { [FAIL_LABEL]: 'true' } }, ...jobTemplate };
  async function jobFinished(jobName: string, type: 'Complete' | 'Failed'): Promise<void> {
    const { BatchV1Api } = await import('@kubernetes/client-node');
    const batch = env.kc.makeApiClient(BatchV1Api);
    const deadline = Date.now() + 20_000;
    for (;;) {
      const job = await batch.readNamespacedJob({ namespace: env.ns.name, name: jobName });
      if (job.status?.conditions?.some((c) => c.type === type && c.status === 'True')) return;
      if (Date.now() > deadline)
        throw new Error(`Job ${jobName} is not ${type}: ${JSON.stringify(job.status)}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  it('preSync hook: running → WaitingForHook, phase empty, rechecked; then Applied once it completes', async () => {
    await env.api.create('Lifecycle', env.ns.name, 'pre-ok', {
      hooks: [{ name: 'migrate', phase: 'PreSync', job: { template: jobTemplate } }],
    });
    const name = await release({ lifecycleRef: { name: 'pre-ok' } });
    const waiting = await env.reconcile(name);
    expectRow(waiting, { reason: 'WaitingForHook', retried: false, phase: '' });
    expect(waiting.outcome.kind).toBe('requeueAfter');
    const hook = waiting.release.status?.lifecycle?.hooks?.[0];
    expect(hook).toMatchObject({ name: 'migrate', phase: 'PreSync', state: 'Running' });
    expect(hook?.job).toBe(
      `${name}-migrate-${waiting.release.status!.lastAttempted!.renderRef!.slice(7, 13)}`,
    );
    expect(waiting.release.status?.conditions?.find((c) => c.type === 'LifecycleSucceeded')).toMatchObject({
      status: 'False',
      reason: 'Running',
    });
    expect(waiting.release.status?.waves ?? []).toEqual([]);
    await jobFinished(hook!.job!, 'Complete');
    const done = await env.reconcile(name);
    expectRow(done, { reason: 'Applied', retried: false, phase: 'Succeeded' });
    expect(done.release.status?.conditions?.find((c) => c.type === 'LifecycleSucceeded')).toMatchObject({
      status: 'True',
      reason: 'Succeeded',
    });
  });

  it('preSync hook: failed (onFailure Fail) → HookFailed / HookFailed with hookName and hookPhase, not retried', async () => {
    await env.api.create('Lifecycle', env.ns.name, 'pre-fail', {
      hooks: [{ name: 'check', phase: 'PreSync', onFailure: 'Fail', job: { template: failingJobTemplate } }],
    });
    const name = await release({ lifecycleRef: { name: 'pre-fail' } });
    const waiting = await env.reconcile(name);
    await jobFinished(waiting.release.status!.lifecycle!.hooks![0].job!, 'Failed');
    const failed = await env.reconcile(name);
    expectRow(failed, { stage: 'HookFailed', reason: 'HookFailed', retried: false, phase: 'Failed' });
    expect(failed.outcome.kind).toBe('stop');
    expect(failed.release.status?.lastAttempted?.failure).toMatchObject({
      hookName: 'check',
      hookPhase: 'PreSync',
    });
    expect(failed.release.status?.conditions?.find((c) => c.type === 'LifecycleSucceeded')).toMatchObject({
      status: 'False',
      reason: 'HookFailed',
    });
  });

  it('postSync hooks: started after the apply and not awaited; Applied True, LifecycleSucceeded Running', async () => {
    await env.api.create('Lifecycle', env.ns.name, 'post', {
      hooks: [{ name: 'notify', phase: 'PostSync', job: { template: jobTemplate } }],
    });
    const name = await release({ lifecycleRef: { name: 'post' } });
    const result = await env.reconcile(name);
    expectRow(result, { reason: 'Applied', retried: false, phase: 'Succeeded' });
    expect(result.release.status?.lifecycle?.hooks?.[0]).toMatchObject({
      name: 'notify',
      phase: 'PostSync',
      state: 'Running',
    });
    expect(result.release.status?.conditions?.find((c) => c.type === 'LifecycleSucceeded')).toMatchObject({
      status: 'False',
      reason: 'Running',
    });
  });

  it('Start postSync hooks: error → Syncing / DeployFailed, retried', async () => {
    await env.api.create('Lifecycle', env.ns.name, 'post-bad', {
      hooks: [
        {
          name: 'broken',
          phase: 'PostSync',
          job: { template: { spec: { containers: [{ name: 'no-image' }] } } },
        },
      ],
    });
    const name = await release({ lifecycleRef: { name: 'post-bad' } });
    const result = await env.reconcile(name);
    expectRow(result, { stage: 'Syncing', reason: 'DeployFailed', retried: true, phase: 'Failed' });
    expect(applied(result.release)!.message).toContain('PostSync hook broken');
  });

  it('Prune: error → Syncing / PruneFailed, retried', async () => {
    const repo = await env.repo('prune-error', { 'a.yaml': configMap('pe-a'), 'b.yaml': configMap('pe-b') });
    const name = await release({ source: { git: { url: repo.url, ref: { branch: 'main' } } } });
    const first = await env.reconcile(name);
    expect(applied(first.release)!.reason).toBe('Applied');
    await env.commit('prune-error', { 'b.yaml': null });
    const healthy = env.ports();
    const ports = env.ports({
      store: {
        ...healthy.store!,
        get: () => Promise.reject(new RenderStoreUnavailableError('get', 'k', 'ECONNREFUSED', 'store down')),
      },
    });
    const result = await env.reconcile(name, ports);
    expectRow(result, {
      stage: 'Syncing',
      reason: 'PruneFailed',
      retried: true,
      phase: 'Failed',
      before: first.release,
    });
  });

  it('All steps done → Applied True, phase Succeeded, lastSuccessful is lastAttempted, health and drift notified', async () => {
    const name = await release({});
    const result = await env.reconcile(name);
    expectRow(result, { reason: 'Applied', retried: false, phase: 'Succeeded' });
    expect(result.outcome.kind).toBe('done');
    const status = result.release.status!;
    expect(status.lastSuccessful).toEqual(status.lastAttempted);
    expect(status.lastAttempted?.renderRef).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(status.lastAttempted?.resolvedCluster).toMatchObject({ name: 'local' });
    expect(status.lastAttempted?.resolvedCluster?.kubernetesVersion).toMatch(/^v1\.34\./);
    expect(status.observedGeneration).toBe(result.release.metadata.generation);
    expect(result.notified.sort()).toEqual(['drift', 'health']);
    const core = env.kc.makeApiClient(CoreV1Api);
    const cm = await core.readNamespacedConfigMap({ namespace: env.ns.name, name: 'app-config' });
    expect(cm.metadata?.managedFields?.some((f) => f.manager === 'convoy')).toBe(true);
  });
});
