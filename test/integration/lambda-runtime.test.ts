/**
 * The functions as Lambda runs them (dev/lambda): the bundles of the construct's template under the
 * Runtime Interface Emulator + the Node runtime interface client, with the template's handler,
 * memory, timeout and environment, fed by SQS event source mappings with the template's batch size,
 * window and maximum concurrency — driving a Release through the same runtime (relay, fauxqs, the
 * shipped identities) the in-process tests use. Needs scripts/build-lambda-runtime.sh (.ci/run).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { SendMessageCommand } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { kubeConfigFor } from '../harness/kube.ts';
import { appliedOf, startRuntimeEnv, until, type RuntimeEnv } from '../harness/runtime-env.ts';
import type { Release } from '../../domain/api/objects.ts';
import type { Loop } from '../../domain/runtime/queue-message.ts';

const configMap = (name: string, data = 'v') => `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\ndata: {k: ${data}}\n`;
const condition = (release: Release, type: string) => release.status?.conditions?.find((c) => c.type === type);

/** What the functions printed, per loop (the emulator's and the runtime's lines). */
const printed: Record<Loop, string[]> = { reconcile: [], drift: [], health: [] };
const measured: Record<string, unknown> = {};

describe('the functions under the Lambda runtime emulator', () => {
  let env: RuntimeEnv;

  beforeAll(async () => {
    const t = performance.now();
    env = await startRuntimeEnv(kubeConfigFor(inject('kubeconfigPath')), 'lambda-rt', {
      relayTickMs: 200,
      lambda: {
        // Two slots per mapping (the template's MaximumConcurrency; 2 is the least it accepts) on CI's two cores.
        props: { maxConcurrency: 2 },
        waitTimeSeconds: 1,
        onLine: (loop, slot, line) => {
          printed[loop].push(`[${slot}] ${line}`);
          if (process.env['CONVOY_TEST_LOGS'] === '1') process.stderr.write(`${loop}[${slot}] ${line}\n`);
        },
      },
    });
    measured['startMs'] = Math.round(performance.now() - t);
  }, 180_000);

  afterAll(async () => {
    const invocations = env?.lambda()?.invocations() ?? [];
    measured['invocations'] = invocations.length;
    measured['coldStarts'] = invocations.filter((i) => i.result.initMs !== undefined).map((i) => `${i.loop}:${Math.round(i.result.initMs ?? 0)}ms`);
    console.info(`lambda-runtime measurements: ${JSON.stringify(measured)}`);
    await env?.close();
  });

  it('reads the template: handler, memory, timeout, mapping settings', () => {
    const lambda = env.lambda();
    expect(lambda).toBeDefined();
    expect(Object.keys(lambda?.drivers ?? {}).sort()).toEqual(['drift', 'health', 'reconcile']);
  });

  it('a first deploy: the Release is applied and healthy, each function ran as a bundle', async () => {
    const repo = await env.repo('app', { 'app/cm.yaml': configMap('lambda-config') });
    await env.createRelease('first', { source: { git: { url: repo.url, ref: { branch: 'main' } , path: 'app' } } });
    const t = performance.now();
    const release = await until(
      'the Release is Applied, InSync and Healthy',
      async () => {
        const r = await env.getRelease('first');
        return ['Applied', 'InSync', 'Healthy'].every((type) => condition(r, type)?.status === 'True') ? r : undefined;
      },
      { timeoutMs: 90_000, intervalMs: 250 },
    ).catch((error: unknown) => {
      void env.getRelease('first').then((r) => console.error(`status: ${JSON.stringify(r.status)}`));
      console.error(`printed:\n${[...printed.reconcile, ...printed.drift, ...printed.health].filter((l) => l.includes('"level"')).slice(-40).join('\n')}`);
      throw error;
    });
    measured['firstDeployMs'] = Math.round(performance.now() - t);
    expect(appliedOf(release)?.status).toBe('True');
    const loops = new Set((env.lambda()?.invocations() ?? []).map((i) => i.loop));
    expect(loops.has('reconcile')).toBe(true);
    // The hint key came from the Secrets Manager stand-in at init.
    expect(env.lambda()?.secrets.reads.length).toBeGreaterThan(0);
  }, 150_000);

  it('a malformed message fails alone; the valid one of the same batch is done', async () => {
    const before = env.lambda()?.invocations().length ?? 0;
    const sqs = env.runtime.sqs;
    const url = env.runtime.queues.health.queueUrl;
    await sqs.send(new SendMessageCommand({ QueueUrl: url, MessageBody: '{not json' }));
    await until('the malformed message is in the DLQ', async () => (await env.dlqMessages('health')).length > 0 || undefined, { timeoutMs: 60_000, intervalMs: 500 }).catch(() => undefined);
    const after = (env.lambda()?.invocations() ?? []).slice(before).filter((i) => i.loop === 'health');
    expect(after.length).toBeGreaterThan(0);
    // Each invocation that carried it answered with it alone in batchItemFailures: the batch did not fail.
    for (const i of after) expect(i.settlement.kind).toBe('succeeded');
    await sleep(0);
  }, 120_000);
});
