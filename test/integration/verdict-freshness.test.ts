/**
 * The verdict never goes stale, through convoy's whole runtime (dev/runtime.ts:
 * fauxqs SQS, the relay, the real function handlers) on the real kube-apiserver:
 *
 * - a suspended Release is its own verdict, Suspended (not "Waiting (ObservedGeneration)");
 * - after a resume the Release is Ready again because the reconcile that handled the new
 *   generation told drift and health (cause `generation … handled`), not at their interval
 *   ticks (drift 10 min, health 10 min here; `convoy wait --timeout 2m` used to time out);
 * - after drift is corrected (mode Correct), InSync turns True because the correcting reconcile
 *   told drift (cause `corrected …`), not at the drift interval (10 min here).
 *
 * Causal, not timed: each assertion names the message that brought the change. The waits are
 * safety nets (120 s: the `--timeout 2m` of the issue).
 */
import { CoreV1Api, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { Condition } from '../../domain/api/common.ts';
import type { Release } from '../../domain/api/objects.ts';
import type { QueueMessage } from '../../domain/runtime/queue-message.ts';
import { combinedVerdict } from '../../domain/status/verdict.ts';
import { verdictLine, verdictWord } from '../../cli/verdict-line.ts';
import { kubeConfigFor } from '../harness/kube.ts';
import { startRuntimeEnv, until, type LogLine, type RuntimeEnv } from '../harness/runtime-env.ts';

const conditionOf = (release: Release, type: string): Condition | undefined =>
  release.status?.conditions?.find((c) => c.type === type);
const configMap = (name: string, data: Record<string, string>) =>
  `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\ndata: ${JSON.stringify(data)}\n`;
const SAFETY_NET_MS = 120_000;

describe('the verdict never goes stale', () => {
  let env: RuntimeEnv;

  beforeAll(async () => {
    env = await startRuntimeEnv(kubeConfigFor(inject('kubeconfigPath')), 'verdict-fresh', {
      relayTickMs: 200,
      visibilityTimeoutSeconds: 5,
    });
  });
  afterAll(async () => {
    await env?.close();
  });

  const ready = (name: string) =>
    until(
      `${name} is Ready`,
      async () => {
        const r = await env.getRelease(name);
        return combinedVerdict(r).ready ? r : undefined;
      },
      { timeoutMs: SAFETY_NET_MS, intervalMs: 200 },
    );

  /** Log lines of one loop for a Release after index `from` of the log. */
  const linesAfter = (
    name: string,
    loop: 'drift' | 'health' | 'reconcile',
    msg: string,
    from: number,
  ): LogLine[] =>
    env.logs
      .slice(from)
      .filter(
        (l) => l['namespace'] === env.ns.name && l['name'] === name && l['loop'] === loop && l.msg === msg,
      );

  it('suspend → the verdict is Suspended; resume → Ready, brought by the reconcile of the new generation telling drift and health', async () => {
    const repo = await env.repo('paused', { 'cm.yaml': configMap('paused-cfg', { v: '1' }) });
    await env.createRelease('paused', {
      source: { git: { url: repo.url, ref: { branch: 'main' } } },
      // Long intervals: no tick of either observer can bring the new generation within the test.
      driftDetection: { interval: '10m' },
      healthAssessment: { interval: '10m' },
    });
    const before = await ready('paused');
    const generationBefore = before.metadata.generation ?? 0;

    // convoy suspend: a merge patch of spec.suspend (cli/annotate.ts).
    await env.api.patchMerge('Release', env.ns.name, 'paused', { spec: { suspend: true } });
    const suspended = await env.getRelease('paused');
    expect(suspended.metadata.generation).toBe(generationBefore + 1);
    // Every condition is from the older generation: judged as before, this was "Waiting (ObservedGeneration)".
    expect(suspended.status?.conditions?.every((c) => c.observedGeneration === generationBefore)).toBe(true);
    const verdict = combinedVerdict(suspended);
    expect(verdict).toMatchObject({ ready: false, kind: 'suspended', signal: 'Suspended' });
    expect(verdictWord(verdict)).toBe('Suspended');
    expect(verdictLine(verdict)).toContain(`convoy resume paused -n ${env.ns.name}`);

    // convoy resume, then what `convoy wait --timeout 2m` polls: the combined verdict.
    const mark = env.logs.length;
    await env.api.patchMerge('Release', env.ns.name, 'paused', { spec: { suspend: false } });
    const resumedAt = Date.now();
    const resumed = await ready('paused');
    process.stdout.write(`resume → Ready: ${Date.now() - resumedAt} ms\n`);
    const generation = resumed.metadata.generation ?? 0;
    expect(generation).toBe(generationBefore + 2);
    for (const type of ['Applied', 'InSync', 'Healthy'])
      expect(conditionOf(resumed, type)?.observedGeneration).toBe(generation);

    // The cause: the reconcile of the new generation sent both observers a message, and each
    // observer ran that message (a first delivery); no interval tick ran after the resume. Another
    // reconcile of the settled Release may run beside it (e.g. the suspend's own message, handled
    // after the resume, covers the generation and the resume's message then finds it settled):
    // its `settled …` notice may reach an observer's Lease first, so the line is found by its
    // cause, not by its place (a CI run at f56641f saw drift's `settled` line first).
    const cause = `generation ${generation} handled (was ${generationBefore})`;
    // A loop logs its line after its status write and Events: wait for the lines, not for time.
    const told = (loop: 'drift' | 'health', msg: string) =>
      until(
        `${loop} logged its run of the generation's message`,
        () => {
          const lines = linesAfter('paused', loop, msg, mark);
          return lines.some((l) => l['cause'] === cause) ? lines : undefined;
        },
        { timeoutMs: SAFETY_NET_MS, intervalMs: 100 },
      );
    for (const lines of [await told('drift', 'drift checked'), await told('health', 'health assessed')]) {
      expect(lines.find((l) => l['cause'] === cause)?.['receiveCount']).toBe(1);
      expect(lines.filter((l) => String(l['cause']).startsWith('timer:'))).toEqual([]);
    }
    await env.deleteRelease('paused');
  }, 200_000);

  it('drift corrected (mode Correct) → InSync True, brought by the correcting reconcile telling drift, not the 10-min drift interval', async () => {
    const repo = await env.repo('healing', { 'cm.yaml': configMap('healing-cfg', { mode: 'a' }) });
    const created = await env.createRelease('healing', {
      source: { git: { url: repo.url, ref: { branch: 'main' } } },
      driftDetection: { mode: 'Correct', interval: '10m' },
    });
    await ready('healing');

    // kubectl edit: another field manager changes a field convoy owns.
    const core = env.kc.makeApiClient(CoreV1Api);
    await core.patchNamespacedConfigMap(
      {
        name: 'healing-cfg',
        namespace: env.ns.name,
        body: { data: { mode: 'edited' } },
        fieldManager: 'kubectl-edit',
      },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    // A drift check now (the interval is 10 min): a plain message, as the relay's timer would send.
    const mark = env.logs.length;
    const check: QueueMessage = {
      v: 1,
      loop: 'drift',
      namespace: env.ns.name,
      name: 'healing',
      uid: created.metadata.uid ?? '',
      cause: 'test: check drift now',
      sentAt: new Date().toISOString(),
    };
    await env.sendRaw('drift', [JSON.stringify(check)]);

    const inSync = await until(
      'InSync True again after the correction',
      () => {
        const lines = linesAfter('healing', 'drift', 'drift checked', mark);
        return lines.length >= 2 && lines.at(-1)?.['inSync'] === 'InSync' ? lines : undefined;
      },
      { timeoutMs: SAFETY_NET_MS, intervalMs: 200 },
    );

    // 1. The test's check found the drift and asked for a correction.
    expect(inSync[0]).toMatchObject({ cause: 'test: check drift now', inSync: 'Drifted', corrected: true });
    // 2. The reconcile it sent re-applied the ConfigMap and told drift.
    const reconciles = linesAfter('healing', 'reconcile', 'reconciled', mark);
    expect(reconciles[0]?.['cause']).toBe('drift: 1 objects drifted (mode Correct)');
    const renderRef = (await env.getRelease('healing')).status?.lastSuccessful?.renderRef ?? '';
    // 3. InSync True came from that message (first delivery), the very next drift run.
    expect(inSync).toHaveLength(2);
    expect(inSync[1]).toMatchObject({
      cause: `corrected ${renderRef}: 1 objects applied again`,
      receiveCount: 1,
      inSync: 'InSync',
    });
    const r = await env.getRelease('healing');
    expect(conditionOf(r, 'InSync')).toMatchObject({ status: 'True', reason: 'InSync' });
    expect(
      (await core.readNamespacedConfigMap({ name: 'healing-cfg', namespace: env.ns.name })).data?.['mode'],
    ).toBe('a');
    expect(combinedVerdict(r).ready).toBe(true);
    await env.deleteRelease('healing');
  }, 200_000);
});
