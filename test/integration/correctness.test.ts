/**
 * Correct under change, the six cases below, each through convoy's whole
 * runtime (dev/runtime.ts: fauxqs SQS/S3, the relay, the real function
 * handlers) on the real kube-apiserver:
 *
 * 1. drift made during a rollout is reported by the next drift check (a
 *    Progressing recheck does not silently re-apply applied waves);
 * 2. Healthy turns Unknown/Pending as soon as the current render changes (the reconcile tells health);
 * 3. a malformed convoy.dev/pin ends with Applied False/Pinned, no retry loop;
 * 4. a Lease left by a crashed run never sends messages to the DLQ;
 * 5. a failing Release's backoff survives interval ticks;
 * 6. duplicate deliveries are skipped without a second full run.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { CoreV1Api, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createKubeClient } from '../../adapters/kube/http.ts';
import { fromKubeconfigFile } from '../../adapters/kube/kubeconfig.ts';
import { microTime } from '../../adapters/kube/lease.ts';
import type { Condition } from '../../domain/api/common.ts';
import type { Release } from '../../domain/api/objects.ts';
import { leaseName } from '../../domain/runtime/lease.ts';
import { kubeConfigFor } from '../harness/kube.ts';
import { appliedOf, startRuntimeEnv, until, type RuntimeEnv } from '../harness/runtime-env.ts';

const conditionOf = (release: Release, type: string): Condition | undefined =>
  release.status?.conditions?.find((c) => c.type === type);
const configMap = (name: string, data: Record<string, string>, wave?: number) =>
  `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\n${wave === undefined ? '' : `  annotations: {convoy.dev/sync-wave: "${wave}"}\n`}data: ${JSON.stringify(data)}\n`;
/** A Deployment whose Pods can never be scheduled: it stays Progressing (with or without controllers). */
const stuckDeployment = (name: string, wave?: number) => `apiVersion: apps/v1
kind: Deployment
metadata:
  name: ${name}
${wave === undefined ? '' : `  annotations: {convoy.dev/sync-wave: "${wave}"}\n`}spec:
  replicas: 1
  selector: {matchLabels: {app: ${name}}}
  template:
    metadata: {labels: {app: ${name}}}
    spec:
      nodeSelector: {convoy.dev/no-such-node: "true"}
      containers: [{name: main, image: "registry.invalid/web:1"}]
`;

describe('correct under change', () => {
  let env: RuntimeEnv;
  const runs = (name: string) => env.recordLines(name, { msg: 'reconciled' });

  beforeAll(async () => {
    env = await startRuntimeEnv(kubeConfigFor(inject('kubeconfigPath')), 'correct', {
      relayTickMs: 200,
      visibilityTimeoutSeconds: 5,
    });
  });
  afterAll(async () => {
    await env?.close();
  });

  it('1: drift made right after InSync turns True, while the rollout is still Progressing, is reported at the next drift check', async () => {
    const repo = await env.repo('rolling', {
      'cm.yaml': configMap('rolling-cfg', { mode: 'a' }),
      'deploy.yaml': stuckDeployment('rolling-web'),
    });
    await env.createRelease('rolling', {
      source: { git: { url: repo.url, ref: { branch: 'main' } } },
      driftDetection: { interval: '20s' },
      syncPolicy: { waveTimeout: '10m' },
    });
    const inSync = await until(
      'Applied True, rollout Progressing and InSync True',
      async () => {
        const r = await env.getRelease('rolling');
        return appliedOf(r)?.status === 'True' &&
          r.status?.rollout?.state === 'Progressing' &&
          conditionOf(r, 'InSync')?.status === 'True'
          ? r
          : undefined;
      },
      { timeoutMs: 30_000 },
    );
    expect(inSync.status?.rollout?.state).toBe('Progressing');

    // kubectl edit, right after InSync turned True: another field manager changes a field convoy owns.
    const core = env.kc.makeApiClient(CoreV1Api);
    await core.patchNamespacedConfigMap(
      {
        name: 'rolling-cfg',
        namespace: env.ns.name,
        body: { data: { mode: 'edited' } },
        fieldManager: 'kubectl-edit',
      },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    const editedAt = Date.now();
    // The rollout is rechecked every 10 s meanwhile; the next drift check (≤ 20 s + a tick) reports it.
    const drifted = await until(
      'InSync False/Drifted',
      async () => {
        const r = await env.getRelease('rolling');
        return conditionOf(r, 'InSync')?.reason === 'Drifted' ? r : undefined;
      },
      { timeoutMs: 75_000, intervalMs: 250 },
    ); // a safety net ≥ 3× the 20-s drift interval
    expect(conditionOf(drifted, 'InSync')?.message).toContain('ConfigMap');
    expect(conditionOf(drifted, 'InSync')?.message).toContain('/data/mode');
    process.stdout.write(`drift made during the rollout → Drifted: ${Date.now() - editedAt} ms\n`);
    // Not silently re-applied by the rollout's rechecks (mode Detect): the edit is still there.
    expect(
      (await core.readNamespacedConfigMap({ name: 'rolling-cfg', namespace: env.ns.name })).data?.['mode'],
    ).toBe('edited');
    expect(runs('rolling').length).toBeGreaterThanOrEqual(2); // rechecks did run meanwhile
    await env.deleteRelease('rolling');
  }, 180_000);

  it('2: Healthy turns Unknown/Pending as soon as the current render changes: told by the reconcile that applied it, not by its interval (healthAssessment.interval 1m)', async () => {
    const repo = await env.repo('pending', {
      'v1/cm.yaml': configMap('pending-cfg', { v: '1' }),
      // The next render waits at a wave: wave 0 never becomes healthy.
      'v2/deploy.yaml': stuckDeployment('pending-web', 0),
      'v2/cm.yaml': configMap('pending-cfg', { v: '2' }, 1),
    });
    await env.createRelease('pending', {
      source: { git: { url: repo.url, ref: { branch: 'main' }, path: 'v1' } },
      healthAssessment: { interval: '1m' },
    });
    const healthy = await until(
      'Healthy True/Healthy',
      async () => {
        const r = await env.getRelease('pending');
        return conditionOf(r, 'Healthy')?.reason === 'Healthy' ? r : undefined;
      },
      { timeoutMs: 30_000 },
    );
    const firstRender = healthy.status?.lastAttempted?.renderRef;

    await env.api.patchMerge('Release', env.ns.name, 'pending', {
      spec: { source: { git: { path: 'v2' } } },
    });
    const changed = await until(
      'lastAttempted names the new render',
      async () => {
        const r = await env.getRelease('pending');
        const ref = r.status?.lastAttempted?.renderRef;
        return ref !== undefined && ref !== firstRender ? Date.now() : undefined;
      },
      { timeoutMs: 20_000, intervalMs: 50 },
    );
    const pending = await until(
      'Healthy Unknown/Pending',
      async () => {
        const r = await env.getRelease('pending');
        return conditionOf(r, 'Healthy')?.reason === 'Pending' ? Date.now() : undefined;
      },
      { timeoutMs: 10_000, intervalMs: 50 },
    );
    process.stdout.write(`render changed → Healthy Pending: ${pending - changed} ms\n`);
    // Causal, not timed: the health run that reported Pending was sent by the reconcile that
    // applied the new render (no interval tick: healthAssessment.interval is 1m). The speed is the bench's.
    // The health run logs 'health assessed' after its status write, the write the wait above saw.
    const pendingRuns = await until(
      'the health run that wrote Pending has logged',
      () => {
        const lines = env
          .recordLines('pending', { loop: 'health', msg: 'health assessed' })
          .filter((l) => l['healthy'] === 'Pending');
        return lines.length > 0 ? lines : undefined;
      },
      { timeoutMs: 10_000, intervalMs: 50 },
    );
    const newRender = (await env.getRelease('pending')).status?.lastAttempted?.renderRef;
    expect(pendingRuns[0]?.['cause']).toBe(`applied ${newRender ?? ''}`);
    expect(pendingRuns[0]?.['receiveCount']).toBe(1);
    const r = await env.getRelease('pending');
    expect(appliedOf(r)?.reason).toBe('WaitingForWaveHealth');
    expect(conditionOf(r, 'Healthy')?.status).toBe('Unknown');
    await env.deleteRelease('pending');
  });

  it('3: a malformed convoy.dev/pin ends with Applied False/Pinned naming the annotation, once, without a retry loop', async () => {
    const repo = await env.repo('pinned', { 'cm.yaml': configMap('pinned-cfg', { v: '1' }) });
    const values = ['garbage', `sha256:${'AB'.repeat(32)}`, `sha256:${'a'.repeat(2000)}`];
    for (const [i, value] of values.entries()) {
      const name = `pinned-${i}`;
      await env.api.create(
        'Release',
        env.ns.name,
        name,
        {
          cluster: { name: 'local' },
          targetNamespace: env.ns.name,
          source: { git: { url: repo.url, ref: { branch: 'main' } } },
        },
        { annotations: { 'convoy.dev/pin': value } },
      );
      const applied = await until(
        `${name}: Applied False/Pinned`,
        async () => {
          const a = appliedOf(await env.getRelease(name));
          return a?.reason === 'Pinned' ? a : undefined;
        },
        { timeoutMs: 20_000 },
      );
      expect(applied.status).toBe('False');
      expect(applied.message).toContain('convoy.dev/pin');
      expect(applied.message).toContain('not a renderRef');
      const release = await env.getRelease(name);
      expect(release.status?.lastAttempted?.phase).toBe('Failed');
      expect(release.status?.lastAttempted?.failure?.stage).toBe('Rendering');
      expect(release.status?.lastAttempted?.renderRef).toBeUndefined();
      expect(release.status?.pin?.state).toBe('NotFound');
    }
    await sleep(3_000);
    for (const i of values.keys()) {
      // Stopped, not retried: one run, and no error from a refused status write.
      expect(runs(`pinned-${i}`)).toHaveLength(1);
      expect(
        env.recordLines(`pinned-${i}`, { msg: 'stopped until the next interval or change' }),
      ).toHaveLength(1);
      expect(env.recordLines(`pinned-${i}`).filter((l) => l.level === 'error')).toEqual([]);
      await env.deleteRelease(`pinned-${i}`);
    }
  });

  it('5: a failing Release keeps its backoff across interval ticks (interval 3s, backoff 1s ×2)', async () => {
    const repo = await env.repo('failing', { 'cm.yaml': configMap('failing-cfg', { v: '1' }) });
    await env.createRelease('failing', {
      source: { git: { url: repo.url, ref: { branch: 'no-such-branch' } } },
      syncPolicy: { interval: '3s', retryBackoff: { initial: '1s', factor: 2, max: '1m' } },
    });
    await until('the first attempt', () => runs('failing').length >= 1);
    const started = Date.parse(runs('failing')[0].time);
    await sleep(Math.max(0, started + 30_000 - Date.now()));
    const attempts = runs('failing').filter((l) => Date.parse(l.time) <= started + 30_000);
    const retries = env
      .recordLines('failing', { msg: 'failed; retrying with backoff' })
      .map((l) => l['visibilitySeconds'] as number);
    // Without the fix each 3 s tick starts over at 1 s: ~20 attempts in 30 s. With it: 0, 1, 3, 7, 15(, 31).
    expect(attempts.length).toBeLessThanOrEqual(7);
    expect(Math.max(...retries)).toBeGreaterThanOrEqual(8);
    const ticksDropped = env
      .recordLines('failing', { msg: 'dropped' })
      .filter((l) => String(l['reason']).includes('interval tick waits'));
    expect(ticksDropped.length).toBeGreaterThanOrEqual(1);
    expect(appliedOf(await env.getRelease('failing'))?.reason).toBe('SourceNotReady');
    await env.deleteRelease('failing');
  });

  it('6: four copies of a message in one batch, and a late copy, cost one full run', async () => {
    const repo = await env.repo('copies', { 'cm.yaml': configMap('copies-cfg', { v: '1' }) });
    const created = await env.createRelease('copies', {
      source: { git: { url: repo.url, ref: { branch: 'main' } } },
    });
    await until('Applied True', async () => appliedOf(await env.getRelease('copies'))?.status === 'True', {
      timeoutMs: 20_000,
    });
    await sleep(1_500);
    const before = runs('copies').length;
    const body = env.messageBody('copies', created.metadata.uid!, 'test: duplicated');
    const ids = await env.sendRaw('reconcile', [body, body, body, body]);
    const ended = (id: string) =>
      env.recordLines('copies', { messageId: id }).some((l) => l['outcome'] !== undefined);
    await until('every copy ended', () => ids.every(ended), { timeoutMs: 20_000 });
    expect(runs('copies').length - before).toBe(1);
    const drops = ids.flatMap((id) => env.recordLines('copies', { messageId: id, msg: 'dropped' }));
    expect(drops).toHaveLength(3);
    // The same message once more, after its run finished: already handled.
    const [late] = await env.sendRaw('reconcile', [body]);
    await until('the late copy ended', () => ended(late ?? ''), { timeoutMs: 10_000 });
    const lateLines = [
      env.recordLines('copies'),
      await env.lease(created.metadata.uid!),
      (await env.getRelease('copies')).status,
    ];
    expect(
      String(env.recordLines('copies', { messageId: late, msg: 'dropped' })[0]?.['reason']),
      JSON.stringify(lateLines),
    ).toContain('already handled');
    expect(runs('copies').length - before).toBe(1);
    await env.deleteRelease('copies');
  });
});

describe('a Lease left behind by a crashed run', () => {
  // maxReceiveCount 2: a message that spent receives while waiting would be dead-lettered at once.
  let env: RuntimeEnv;
  beforeAll(async () => {
    env = await startRuntimeEnv(kubeConfigFor(inject('kubeconfigPath')), 'crashed', {
      relayTickMs: 200,
      visibilityTimeoutSeconds: 5,
      maxReceiveCount: 2,
    });
  });
  afterAll(async () => {
    await env?.close();
  });

  it('4: messages wait for the crashed Lease as new delayed messages (none dead-lettered) and run once it expires', async () => {
    const repo = await env.repo('apps', { 'cm.yaml': configMap('crash-cfg', { v: '1' }) });
    const created = await env.createRelease('crash', {
      source: { git: { url: repo.url, ref: { branch: 'main' } } },
    });
    const uid = created.metadata.uid!;
    await until('Applied True', async () => appliedOf(await env.getRelease('crash'))?.status === 'True', {
      timeoutMs: 20_000,
    });
    await until('the first run ended', () =>
      env.recordLines('crash').some((l) => l['outcome'] !== undefined),
    );

    // A run crashed 40 s ago holding the Lease for 55 s (it renewed nothing since): it expires in ~15 s.
    const kube = createKubeClient(fromKubeconfigFile(inject('kubeconfigPath')));
    const crashedAt = microTime(new Date(Date.now() - 40_000));
    const name = leaseName('reconcile', uid);
    await kube.patch(
      `/apis/coordination.k8s.io/v1/namespaces/${env.installation.name}/leases/${name}`,
      {
        apiVersion: 'coordination.k8s.io/v1',
        kind: 'Lease',
        metadata: { name, namespace: env.installation.name, labels: { 'convoy.dev/release-uid': uid } },
        spec: {
          holderIdentity: 'reconcile-crashed',
          leaseDurationSeconds: 55,
          acquireTime: crashedAt,
          renewTime: crashedAt,
        },
      },
      { type: 'apply', fieldManager: 'crashed-run', force: true },
    );
    const requestedAt = new Date().toISOString();
    await env.api.patchMerge('Release', env.ns.name, 'crash', {
      metadata: { annotations: { 'convoy.dev/force-sync-requested-at': requestedAt } },
    });
    const started = Date.now();
    const handled = await until(
      'the force sync is handled',
      async () => {
        const r = await env.getRelease('crash');
        return r.status?.lastHandledForceSyncAt === requestedAt ? r : undefined;
      },
      { timeoutMs: 40_000, intervalMs: 250 },
    );
    expect(appliedOf(handled)?.status).toBe('True');
    const waited = Date.now() - started;
    expect(waited).toBeGreaterThanOrEqual(10_000);
    const waits = env
      .recordLines('crash', { msg: 'requeued' })
      .filter((l) => String(l['reason']).startsWith('lease held by reconcile-crashed'));
    expect(waits.length).toBeGreaterThanOrEqual(1);
    expect(waits.every((l) => l['asNewMessage'] === true && (l['receiveCount'] as number) === 1)).toBe(true);
    // The production-length Lease: the wait is one delayed message of at most 15 minutes, not a receive per second.
    expect(waits.some((l) => (l['visibilitySeconds'] as number) >= 10)).toBe(true);
    expect(await env.dlqMessages('reconcile')).toEqual([]);
    await env.deleteRelease('crash');
  });
});
