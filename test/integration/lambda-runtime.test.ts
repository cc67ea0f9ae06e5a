/**
 * The functions as Lambda runs them (dev/lambda): the bundles of the construct's template under the
 * Runtime Interface Emulator + the Node runtime interface client, with the template's handler,
 * memory, timeout and environment, fed by SQS event source mappings with the template's batch size,
 * window and maximum concurrency — driving a Release through the same runtime (relay, fauxqs, the
 * shipped identities) the in-process tests use. Needs scripts/build-lambda-runtime.sh (.ci/run).
 */
import {
  CreateQueueCommand,
  DeleteQueueCommand,
  GetQueueAttributesCommand,
  PurgeQueueCommand,
  SendMessageCommand,
} from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { kubeConfigFor } from '../harness/kube.ts';
import { appliedOf, startRuntimeEnv, until, type RuntimeEnv } from '../harness/runtime-env.ts';
import type { Release } from '../../domain/api/objects.ts';
import type { QueueLoop } from '../../domain/runtime/queue-message.ts';
import { settleInvocation } from '../../dev/lambda/batch-semantics.ts';
import { startEventSourceDriver } from '../../dev/lambda/esm-driver.ts';
import { createLogger } from '../../platform/logger.ts';

const configMap = (name: string, data = 'v') =>
  `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\ndata: {k: ${data}}\n`;
const condition = (release: Release, type: string) =>
  release.status?.conditions?.find((c) => c.type === type);

/** What the functions printed, per loop (the emulator's and the runtime's lines). */
const printed: Record<QueueLoop, string[]> = { reconcile: [], drift: [], health: [], fleet: [] };
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
    measured['coldStarts'] = invocations
      .filter((i) => i.result.initMs !== undefined)
      .map((i) => `${i.loop}:${Math.round(i.result.initMs ?? 0)}ms`);
    console.info(`lambda-runtime measurements: ${JSON.stringify(measured)}`);
    await env?.close();
  });

  it('reads the template: handler, memory, timeout, mapping settings', () => {
    const lambda = env.lambda();
    expect(lambda).toBeDefined();
    expect(Object.keys(lambda?.drivers ?? {}).sort()).toEqual(['drift', 'fleet', 'health', 'reconcile']);
  });

  it('a first deploy: the Release is applied and healthy, each function ran as a bundle', async () => {
    const repo = await env.repo('app', { 'app/cm.yaml': configMap('lambda-config') });
    await env.createRelease('first', {
      source: { git: { url: repo.url, ref: { branch: 'main' }, path: 'app' } },
    });
    const t = performance.now();
    const release = await until(
      'the Release is Applied, InSync and Healthy',
      async () => {
        const r = await env.getRelease('first');
        return ['Applied', 'InSync', 'Healthy'].every((type) => condition(r, type)?.status === 'True')
          ? r
          : undefined;
      },
      { timeoutMs: 90_000, intervalMs: 250 },
    ).catch((error: unknown) => {
      void env.getRelease('first').then((r) => console.error(`status: ${JSON.stringify(r.status)}`));
      console.error(
        `printed:\n${[...printed.reconcile, ...printed.drift, ...printed.health]
          .filter((l) => l.includes('"level"'))
          .slice(-40)
          .join('\n')}`,
      );
      throw error;
    });
    measured['firstDeployMs'] = Math.round(performance.now() - t);
    expect(appliedOf(release)?.status).toBe('True');
    const loops = new Set((env.lambda()?.invocations() ?? []).map((i) => i.loop));
    expect(loops.has('reconcile')).toBe(true);
    // The hint key came from the Secrets Manager stand-in at init.
    expect(env.lambda()?.secrets.reads.length).toBeGreaterThan(0);
  }, 150_000);

  it("the fleet function: a fleet message runs the fleet bundle under the emulator with the template's settings, as the functions' shipped identity; it writes the ReleaseSet's child pinned to the commit and the set's status", async () => {
    const lambda = env.lambda();
    if (lambda === undefined) throw new Error('no Lambda runtime');
    // The construct's settings for the fourth function, read from the template.
    expect(lambda.functions.fleet).toMatchObject({
      handler: 'index.handler',
      runtime: 'nodejs24.x',
      memorySize: 256,
      eventSource: { batchSize: 1, reportBatchItemFailures: true, maximumConcurrency: 2 },
    });
    expect(lambda.functions.fleet.layerAssets).toEqual([]);
    const { commit } = await env.repo('fleet-app', { 'app/cm.yaml': configMap('lambda-fleet-config') });
    await env.api.create('ReleaseSet', env.ns.name, 'lset', {
      clusters: { names: ['local'] },
      template: {
        spec: {
          targetNamespace: env.ns.name,
          source: { git: { url: `${env.git.url}/fleet-app.git`, ref: { branch: 'main' }, path: 'app' } },
        },
      },
    });
    const set = await env.api.get('ReleaseSet', env.ns.name, 'lset');
    const uid = (set['metadata'] as { uid: string }).uid;
    const [messageId] = await env.sendRaw('fleet', [
      env.messageBody('lset', uid, 'lambda-rt: a ReleaseSet added', 'fleet'),
    ]);
    const child = await until(
      'the child Release lset-local exists',
      async () => {
        const r = await env.getRelease('lset-local').catch(() => undefined);
        return r?.spec !== undefined ? r : undefined;
      },
      { timeoutMs: 60_000, intervalMs: 250 },
    ).catch((error: unknown) => {
      console.error(`printed (fleet):\n${printed.fleet.slice(-40).join('\n')}`);
      throw error;
    });
    expect((child.spec as { source: { git: { ref: unknown } } }).source.git.ref).toEqual({ commit });
    const generated = await until(
      "the set's status says Generated True",
      async () => {
        const current = await env.api.get('ReleaseSet', env.ns.name, 'lset');
        const conditions =
          (current['status'] as { conditions?: { type: string; status: string }[] } | undefined)
            ?.conditions ?? [];
        return conditions.some((c) => c.type === 'Generated' && c.status === 'True') ? current : undefined;
      },
      { timeoutMs: 30_000, intervalMs: 250 },
    );
    expect(generated['status']).toBeDefined();
    // The fleet mapping delivered the message to the fleet bundle (its own JSON lines), never to a Release function.
    // (The relay may have sent the set its own message first: wait for this one's invocation.)
    const invocations = await until(
      'the fleet message was delivered and settled',
      () => {
        const carrying = lambda.invocations().filter((i) => i.messageIds.includes(messageId ?? ''));
        return carrying.length > 0 ? carrying : undefined;
      },
      { timeoutMs: 30_000, intervalMs: 250 },
    );
    expect(invocations[0]?.settlement.kind).toBe('succeeded');
    expect(invocations.map((i) => i.loop)).toEqual(expect.arrayContaining(['fleet']));
    expect(new Set(invocations.map((i) => i.loop))).toEqual(new Set(['fleet']));
    expect(printed.fleet.some((line) => line.includes('"level"'))).toBe(true);
    // As the shipped functions identity: nothing refused.
    expect(printed.fleet.filter((line) => /HTTP 403\b|forbidden|cannot impersonate/i.test(line))).toEqual([]);
    measured['fleetColdStarts'] = lambda
      .invocations()
      .filter((i) => i.loop === 'fleet' && i.result.initMs !== undefined)
      .map((i) => Math.round(i.result.initMs ?? 0));
    measured['fleetMaxRssMb'] = Math.max(
      0,
      ...lambda
        .invocations()
        .filter((i) => i.loop === 'fleet')
        .map((i) => Math.round((i.result.maxRssKb ?? 0) / 1024)),
    );
  }, 120_000);

  it('bad input: a malformed message in a batch is dead-lettered at its first receive (copied to the DLQ, then acknowledged); the valid one beside it is done and deleted', async () => {
    const first = await env.getRelease('first');
    const [junk, valid] = await env.sendRaw('reconcile', [
      '{not json',
      env.messageBody('first', first.metadata?.uid ?? '', 'lambda-rt: beside a malformed message'),
    ]);
    const carrying = (id: string | undefined) =>
      (env.lambda()?.invocations() ?? []).filter((i) => i.messageIds.includes(id ?? ''));
    await until(
      'both messages were delivered and settled',
      () => carrying(junk).length > 0 && carrying(valid).length > 0,
      { timeoutMs: 30_000 },
    );
    for (const invocation of carrying(junk)) {
      // The function answered (never a failed batch); the malformed record was copied to the
      // dead-letter queue and is acknowledged, so it is not received again.
      expect(invocation.settlement.kind).toBe('succeeded');
      if (invocation.settlement.kind === 'succeeded')
        expect(invocation.settlement.deleted.map((r) => r.messageId)).toContain(junk);
    }
    const validRun = carrying(valid)[0];
    expect(
      validRun?.settlement.kind === 'succeeded' && validRun.settlement.deleted.map((r) => r.messageId),
    ).toContain(valid);
  }, 60_000);

  it('bad input: a message over the queue limit is refused at send; a batch over the 6 MB payload limit is split, never sent whole', async () => {
    const sqs = env.runtime.sqs;
    const url = env.runtime.queues.health.queueUrl;
    await expect(
      sqs.send(new SendMessageCommand({ QueueUrl: url, MessageBody: 'x'.repeat(1024 * 1024 + 1) })),
    ).rejects.toThrow();
    // Seven ~900 KB junk messages: ~6.3 MB together, more than one invocation may carry.
    // One SendMessage each: a SendMessageBatch may not carry more than 1 MiB in all.
    const ids: string[] = [];
    for (let n = 0; n < 7; n++)
      ids.push(
        (
          await sqs.send(
            new SendMessageCommand({ QueueUrl: url, MessageBody: `${n}`.padEnd(900 * 1024, 'x') }),
          )
        ).MessageId ?? '',
      );
    const carrying = () =>
      (env.lambda()?.invocations() ?? []).filter((i) => i.messageIds.some((id) => ids.includes(id)));
    await until(
      'every large message was delivered',
      () => ids.every((id) => carrying().some((i) => i.messageIds.includes(id))),
      { timeoutMs: 30_000 },
    );
    for (const invocation of carrying()) {
      expect(invocation.payloadBytes).toBeLessThanOrEqual(6 * 1024 * 1024);
      expect(invocation.settlement.kind).toBe('succeeded');
    }
    measured['largeBatchInvocations'] = carrying().map((i) => `${i.records} records, ${i.payloadBytes} B`);
    // The junk would come back every second until its maxReceiveCount: drop it.
    await sqs.send(new PurgeQueueCommand({ QueueUrl: url }));
  }, 60_000);

  it('bad input: a missing required variable fails the init with one line naming it; the batch is retried, not lost', async () => {
    const lambda = env.lambda();
    if (lambda === undefined) throw new Error('no Lambda runtime');
    const emulator = await lambda.startEmulator('drift', (e) => {
      const { CONVOY_DRIFT_QUEUE_URL: _dropped, ...rest } = e;
      return rest;
    });
    const result = await emulator.invoke(JSON.stringify({ Records: [] }));
    expect(result.error?.type).toBe('ConfigError');
    expect(result.error?.message).toMatch(/CONVOY_DRIFT_QUEUE_URL/);
    expect(result.error?.message.split('\n')).toHaveLength(1);
    // The error answer is reported as such: a mapping would fail the whole batch (nothing deleted).
    expect(settleInvocation({ Records: [] }, result, true).kind).toBe('batchFailed');
    await emulator.stop();
  }, 60_000);

  it('bad input: a handler that throws at init — its batch is reported failed, retried after the visibility timeout, not lost', async () => {
    const lambda = env.lambda();
    if (lambda === undefined) throw new Error('no Lambda runtime');
    const sqs = env.runtime.sqs;
    // A queue of its own with a 2-s visibility timeout, fed to a driver whose function cannot start.
    const { QueueUrl } = await sqs.send(
      new CreateQueueCommand({
        QueueName: `lambda-rt-init-${Date.now()}`,
        Attributes: { VisibilityTimeout: '2' },
      }),
    );
    const queueUrl = QueueUrl ?? '';
    const attributes = await sqs.send(
      new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: ['QueueArn'] }),
    );
    const driver = startEventSourceDriver({
      loop: 'health',
      sqs,
      queueUrl,
      queueArn: attributes.Attributes?.['QueueArn'] ?? '',
      settings: { ...lambda.functions.health.eventSource },
      slots: 1,
      waitTimeSeconds: 1,
      logger: createLogger({ level: 'error', write: () => undefined }),
      // CONVOY_KUBECONFIG_PATH names no file: the container's init throws.
      startEmulator: () =>
        lambda.startEmulator('health', (e) => ({ ...e, CONVOY_KUBECONFIG_PATH: '/nonexistent/kubeconfig' })),
    });
    try {
      await sqs.send(
        new SendMessageCommand({
          QueueUrl: queueUrl,
          MessageBody: env.messageBody('first', 'u', 'init failure'),
        }),
      );
      await until('the message was delivered twice', () => driver.invocations.length >= 2, {
        timeoutMs: 30_000,
      });
      const [one, two] = driver.invocations;
      expect(one?.result.error?.message).toMatch(/kubeconfig/);
      expect(one?.settlement.kind).toBe('batchFailed');
      expect(two?.messageIds).toEqual(one?.messageIds);
      // Redelivered by SQS after the visibility timeout: its receive count went up.
      expect(two?.result.error).toBeDefined();
    } finally {
      await driver.stop();
      await sqs.send(new DeleteQueueCommand({ QueueUrl: queueUrl }));
    }
  }, 60_000);
});
