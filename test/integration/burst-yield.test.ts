// Deploy burst: while the reconcile queue holds a backlog of first deploys,
// the observers' first checks wait — with no request to Kubernetes — and run once it drained.
// The three functions as production composes them (functions/*/create-handler.ts: SQS batch →
// burst guard → Release admitted → Lease → record handler → SQS), on fauxqs queues (the backlog
// is the queue's own ApproximateNumberOfMessages over the real SQS wire protocol), the real
// apiserver, as the shipped functions identity. The test drives the queues as the relay would.
//
// Guarantees proven here:
// - after a first deploy, drift's and health's notices meet a backlog of reconcile messages
//   waiting for a function: each is sent again as a delayed message (the record acknowledged, no
//   receive spent), takes no Lease and writes nothing (the Release's resourceVersion unchanged);
// - once the backlog drained, the delayed notices come back and run: InSync and Healthy written
//   by their own field managers under their own Leases;
// - a reconcile message's first delivery never waits: the burst is made of them;
// - a first deploy whose rollout will be rechecked sends drift and health nothing during a burst;
//   the run that finishes the rollout tells them (cause `settled`).
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import {
  AppsV1Api,
  CoordinationV1Api,
  CoreV1Api,
  PatchStrategy,
  setHeaderOptions,
} from '@kubernetes/client-node';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  ChangeMessageVisibilityCommand,
  DeleteMessageBatchCommand,
  GetQueueAttributesCommand,
  ReceiveMessageCommand,
  SendMessageBatchCommand,
  SQSClient,
} from '@aws-sdk/client-sqs';
import { startFauxqs } from 'fauxqs';
import { ensureQueueWithDlq, type QueueWithDlq } from '../../adapters/sqs/queues.ts';
import type { Release } from '../../domain/api/objects.ts';
import { DEFAULT_BURST_POLICY } from '../../domain/runtime/burst-yield.ts';
import { leaseName } from '../../domain/runtime/lease.ts';
import {
  parseQueueMessage,
  queueMessageBody,
  type Loop,
  type QueueMessage,
} from '../../domain/runtime/queue-message.ts';
import { recordsToDelete, toSqsEvent } from '../../dev/sqs-poller.ts';
import { createDriftHandler } from '../../functions/drift/create-handler.ts';
import { createHealthHandler } from '../../functions/health/create-handler.ts';
import { createReconcileHandler } from '../../functions/reconcile/create-handler.ts';
import { hintKey } from '../../functions/runtime/applied-hint.ts';
import type { FunctionClients } from '../../functions/runtime/clients.ts';
import { functionEnvSchema } from '../../functions/runtime/config.ts';
import { createLogger } from '../../platform/logger.ts';
import type { SqsBatchHandler } from '../../functions/runtime/sqs-batch-handler.ts';
import { kubeConfigFor } from '../harness/kube.ts';
import { releaseCondition, statusManagerOf } from '../harness/status-managers.ts';
import { startReconcileEnv, type ReconcileEnv } from '../harness/reconcile-env.ts';

const LOOPS: readonly Loop[] = ['reconcile', 'drift', 'health'];
const NAME = 'burst';
const BACKLOG = DEFAULT_BURST_POLICY.backlogThreshold + 5;

const files = {
  'cm.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: web-cfg\ndata: {greeting: hello}\n',
};

const conditionOf = releaseCondition;
const managerOf = statusManagerOf;

describe('observers wait out a reconcile burst', () => {
  let env: ReconcileEnv;
  let aws: Awaited<ReturnType<typeof startFauxqs>>;
  let sqs: SQSClient;
  const queues = {} as Record<Loop, QueueWithDlq>;
  const handlers = {} as Record<Loop, SqsBatchHandler>;
  let uid = '';

  beforeAll(async () => {
    env = await startReconcileEnv(kubeConfigFor(inject('kubeconfigPath')), 'burst-yield');
    aws = await startFauxqs({ port: 0, logger: false });
    sqs = new SQSClient({
      endpoint: `http://127.0.0.1:${aws.port}`,
      region: 'us-east-1',
      credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
    });
    for (const loop of LOOPS)
      queues[loop] = await ensureQueueWithDlq(sqs, `burst-${loop}`, {
        maxReceiveCount: 100,
        visibilityTimeout: 60,
      });
    const config = functionEnvSchema.parse({
      CONVOY_NAMESPACE: env.installationNamespace,
      CONVOY_RENDER_BUCKET: env.bucket,
      CONVOY_RECONCILE_QUEUE_URL: queues.reconcile.queueUrl,
      CONVOY_DRIFT_QUEUE_URL: queues.drift.queueUrl,
      CONVOY_HEALTH_QUEUE_URL: queues.health.queueUrl,
      CONVOY_LOG_LEVEL: 'error',
    });
    const clients: FunctionClients = {
      kc: env.functionsConfig,
      sqs,
      s3: env.s3,
      tenancy: env.tenancy,
      hintKey: hintKey(undefined),
    };
    const logger = createLogger({ base: { test: 'burst-yield' }, level: 'error' });
    handlers.reconcile = createReconcileHandler(config, clients, logger, {
      queueUrlOf: () => queues.reconcile.queueUrl,
    });
    handlers.drift = createDriftHandler(config, clients, logger, { queueUrlOf: () => queues.drift.queueUrl });
    handlers.health = createHealthHandler(config, clients, logger, {
      queueUrlOf: () => queues.health.queueUrl,
    });

    const repo = await env.repo(NAME, files);
    const created = await env.api.create('Release', env.ns.name, NAME, {
      cluster: { name: 'local' },
      targetNamespace: env.ns.name,
      source: { git: { url: repo.url, ref: { branch: 'main' } } },
      healthAssessment: {},
    });
    uid = String((created.metadata as { uid?: string }).uid ?? '');
  });
  afterAll(async () => {
    await aws?.stop();
    sqs?.destroy();
    await env?.close();
  });

  const release = () => env.api.getRelease(env.ns.name, NAME);
  const hasLease = (loop: Loop) =>
    env.kc
      .makeApiClient(CoordinationV1Api)
      .readNamespacedLease({ namespace: env.installationNamespace, name: leaseName(loop, uid) })
      .then(
        () => true,
        () => false,
      );
  const attribute = async (
    loop: Loop,
    name: 'ApproximateNumberOfMessages' | 'ApproximateNumberOfMessagesDelayed',
  ) => {
    const { Attributes } = await sqs.send(
      new GetQueueAttributesCommand({ QueueUrl: queues[loop].queueUrl, AttributeNames: [name] }),
    );
    return Number(Attributes?.[name] ?? Number.NaN);
  };

  async function send(loop: Loop, entries: { name: string; uid: string; cause: string }[]): Promise<void> {
    for (let i = 0; i < entries.length; i += 10) {
      const chunk = entries.slice(i, i + 10);
      await sqs.send(
        new SendMessageBatchCommand({
          QueueUrl: queues[loop].queueUrl,
          Entries: chunk.map((e, j) => ({
            Id: `m${j}`,
            MessageBody: queueMessageBody({
              v: 1,
              loop,
              namespace: env.ns.name,
              name: e.name,
              uid: e.uid,
              cause: e.cause,
              sentAt: new Date().toISOString(),
            }),
          })),
        }),
      );
    }
  }

  /** Hands `loop`'s deliveries to its function until `expect` were handled or `timeoutMs` passed; returns them. */
  async function drain(loop: Loop, expect: number, timeoutMs: number): Promise<QueueMessage[]> {
    const handled: QueueMessage[] = [];
    const deadline = Date.now() + timeoutMs;
    while (handled.length < expect && Date.now() < deadline) {
      const { Messages = [] } = await sqs.send(
        new ReceiveMessageCommand({
          QueueUrl: queues[loop].queueUrl,
          MaxNumberOfMessages: 1,
          WaitTimeSeconds: 1,
          AttributeNames: ['All'],
          MessageSystemAttributeNames: ['All'],
        }),
      );
      if (Messages.length === 0) continue;
      const event = toSqsEvent(Messages, { queueArn: queues[loop].queueArn, awsRegion: 'us-east-1' });
      const verdict = recordsToDelete(event, await handlers[loop](event));
      for (const m of Messages) {
        const parsed = parseQueueMessage(m.Body ?? '');
        if (parsed.ok) handled.push(parsed.message);
      }
      if (verdict.ok && verdict.records.length > 0) {
        await sqs.send(
          new DeleteMessageBatchCommand({
            QueueUrl: queues[loop].queueUrl,
            Entries: verdict.records.map((r, i) => ({ Id: `d${i}`, ReceiptHandle: r.receiptHandle })),
          }),
        );
      }
    }
    return handled;
  }

  /** Hands the Release `name`'s reconcile deliveries to the function until `done` holds; every other message is put back at once (a standard queue keeps no order). */
  const reconcileUntil = async (
    name: string,
    what: string,
    done: (r: Release) => boolean,
  ): Promise<Release> => {
    // A safety net: a run that ends in a retry or a recheck comes back after its delay.
    const deadline = Date.now() + 120_000;
    while (Date.now() < deadline) {
      const { Messages = [] } = await sqs.send(
        new ReceiveMessageCommand({
          QueueUrl: queues.reconcile.queueUrl,
          MaxNumberOfMessages: 10,
          WaitTimeSeconds: 1,
          AttributeNames: ['All'],
          MessageSystemAttributeNames: ['All'],
        }),
      );
      const ours = Messages.filter((m) => (JSON.parse(m.Body ?? '{}') as QueueMessage).name === name);
      for (const m of Messages.filter((x) => !ours.includes(x))) {
        await sqs.send(
          new ChangeMessageVisibilityCommand({
            QueueUrl: queues.reconcile.queueUrl,
            ReceiptHandle: m.ReceiptHandle ?? '',
            VisibilityTimeout: 0,
          }),
        );
      }
      if (ours.length > 0) {
        const event = toSqsEvent(ours, { queueArn: queues.reconcile.queueArn, awsRegion: 'us-east-1' });
        const verdict = recordsToDelete(event, await handlers.reconcile(event));
        if (verdict.ok && verdict.records.length > 0)
          await sqs.send(
            new DeleteMessageBatchCommand({
              QueueUrl: queues.reconcile.queueUrl,
              Entries: verdict.records.map((r, j) => ({ Id: `d${j}`, ReceiptHandle: r.receiptHandle })),
            }),
          );
      }
      const r = await env.api.getRelease(env.ns.name, name);
      if (done(r)) return r;
      if (ours.length === 0) await sleep(100);
    }
    throw new Error(
      `${what}: not reached; status ${JSON.stringify((await env.api.getRelease(env.ns.name, name)).status ?? {})}`,
    );
  };

  it("a first deploy's notices to drift and health wait behind a backlog with no request, then run once it drained", async () => {
    // The first deploy: its reconcile message's first delivery runs whatever the backlog.
    await send('reconcile', [{ name: NAME, uid, cause: 'watch: Release added' }]);
    await send(
      'reconcile',
      Array.from({ length: BACKLOG }, (_, i) => ({
        name: `other-${i}`,
        uid: `uid-other-${i}`,
        cause: 'watch: Release added',
      })),
    );
    await reconcileUntil(NAME, 'the first deploy', (r) => conditionOf(r, 'Applied')?.reason === 'Applied');
    const applied = await release();
    expect(conditionOf(applied, 'Applied')).toMatchObject({ status: 'True', reason: 'Applied' });
    expect(await attribute('reconcile', 'ApproximateNumberOfMessages')).toBe(BACKLOG);

    // The notices meet the backlog: each goes back to its queue delayed; no Lease, no write.
    for (const loop of ['drift', 'health'] as const) {
      const [notice] = await drain(loop, 1, 20_000);
      expect(notice?.cause).toMatch(/^applied sha256:/);
      expect(await hasLease(loop)).toBe(false);
      expect(await attribute(loop, 'ApproximateNumberOfMessagesDelayed')).toBe(1);
      expect(await attribute(loop, 'ApproximateNumberOfMessages')).toBe(0);
    }
    const waited = await release();
    expect(waited.metadata.resourceVersion).toBe(applied.metadata.resourceVersion);

    // The backlog drains (the reconcile function took it): the delayed notices come back and run.
    const drained: string[] = [];
    while (drained.length < BACKLOG) {
      const { Messages: batch = [] } = await sqs.send(
        new ReceiveMessageCommand({
          QueueUrl: queues.reconcile.queueUrl,
          MaxNumberOfMessages: 10,
          WaitTimeSeconds: 1,
        }),
      );
      if (batch.length === 0) break;
      await sqs.send(
        new DeleteMessageBatchCommand({
          QueueUrl: queues.reconcile.queueUrl,
          Entries: batch.map((m, i) => ({ Id: `d${i}`, ReceiptHandle: m.ReceiptHandle ?? '' })),
        }),
      );
      drained.push(...batch.map((m) => m.MessageId ?? ''));
    }
    expect(drained).toHaveLength(BACKLOG);
    // The longest first wait is the policy's shortest wait plus its 20 % spread; the safety net is 3× that.
    const safetyNetMs = 3 * DEFAULT_BURST_POLICY.minWaitMs * 1.2;
    for (const loop of ['drift', 'health'] as const) {
      const [again] = await drain(loop, 1, safetyNetMs);
      expect(again?.cause).toMatch(/^applied sha256:/);
      expect(again?.followUpOf).toBeDefined();
      expect(await hasLease(loop)).toBe(true);
    }
    const observed = await release();
    expect(conditionOf(observed, 'InSync')).toMatchObject({ status: 'True', reason: 'InSync' });
    expect(managerOf(observed, 'InSync')).toBe('convoy-observe');
    expect(conditionOf(observed, 'Healthy')).toMatchObject({ status: 'True' });
    expect(managerOf(observed, 'Healthy')).toBe('convoy-health');
  });
  it('a first deploy with a rollout to recheck tells drift and health nothing during a burst; the run that finishes the rollout tells them', async () => {
    const name = 'burst-app';
    const repo = await env.repo(name, {
      'deploy.yaml':
        'apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  replicas: 1\n  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n    spec: {nodeSelector: {burst-yield.convoy.dev/ready: "true"}, containers: [{name: main, image: "registry.invalid/web:1"}]}\n',
    });
    const created = await env.api.create('Release', env.ns.name, name, {
      cluster: { name: 'local' },
      targetNamespace: env.ns.name,
      source: { git: { url: repo.url, ref: { branch: 'main' } } },
      healthAssessment: {},
    });
    const appUid = String((created.metadata as { uid?: string }).uid ?? '');
    await send('reconcile', [{ name, uid: appUid, cause: 'watch: Release added' }]);
    await send(
      'reconcile',
      Array.from({ length: BACKLOG }, (_, i) => ({
        name: `more-${i}`,
        uid: `uid-more-${i}`,
        cause: 'watch: Release added',
      })),
    );

    const applied = await reconcileUntil(
      name,
      'the first deploy',
      (r) => conditionOf(r, 'Applied')?.reason === 'Applied',
    );
    expect(applied.status?.rollout?.state).toBe('Progressing');
    for (const loop of ['drift', 'health'] as const) {
      expect(await attribute(loop, 'ApproximateNumberOfMessages')).toBe(0);
      expect(await attribute(loop, 'ApproximateNumberOfMessagesDelayed')).toBe(0);
    }

    // The Deployment's Pod waits for a Node with the label (so the first run cannot find the rollout
    // over however slow it is); a Node gets it and the Deployment becomes available on KWOK (the
    // state meant, not a time); the backlog drains.
    const node = inject('nodeNames')[0] ?? 'kwok-node-0';
    const labelNode = (value: string | null) =>
      env.kc
        .makeApiClient(CoreV1Api)
        .patchNode(
          { name: node, body: { metadata: { labels: { 'burst-yield.convoy.dev/ready': value } } } },
          setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
        );
    await labelNode('true');
    const apps = env.kc.makeApiClient(AppsV1Api);
    try {
      for (
        let i = 0;
        i < 240 &&
        !(await apps.readNamespacedDeployment({ namespace: env.ns.name, name: 'web' }).then(
          (d) => (d.status?.availableReplicas ?? 0) >= 1,
          () => false,
        ));
        i++
      )
        await sleep(500);
    } finally {
      await labelNode(null);
    }
    const rest: { ReceiptHandle?: string }[] = [];
    for (let left = BACKLOG; left > 0;) {
      const { Messages = [] } = await sqs.send(
        new ReceiveMessageCommand({
          QueueUrl: queues.reconcile.queueUrl,
          MaxNumberOfMessages: 10,
          WaitTimeSeconds: 1,
        }),
      );
      const backlog = Messages.filter((m) => (JSON.parse(m.Body ?? '{}') as QueueMessage).name !== name);
      rest.push(...Messages.filter((m) => !backlog.includes(m)));
      if (backlog.length > 0)
        await sqs.send(
          new DeleteMessageBatchCommand({
            QueueUrl: queues.reconcile.queueUrl,
            Entries: backlog.map((m, j) => ({ Id: `d${j}`, ReceiptHandle: m.ReceiptHandle ?? '' })),
          }),
        );
      left -= backlog.length;
    }
    for (const m of rest)
      await sqs.send(
        new ChangeMessageVisibilityCommand({
          QueueUrl: queues.reconcile.queueUrl,
          ReceiptHandle: m.ReceiptHandle ?? '',
          VisibilityTimeout: 0,
        }),
      );

    // The recheck finds the rollout over: that run tells both observers.
    const finished = await reconcileUntil(
      name,
      'the rollout finished',
      (r) => r.status?.rollout?.state === 'Succeeded',
    );
    expect(conditionOf(finished, 'Applied')).toMatchObject({ status: 'True', reason: 'Applied' });
    for (const loop of ['drift', 'health'] as const) {
      const [notice] = await drain(loop, 1, 20_000);
      // The run that finishes a rollout read only the Deployment: it has no answers for every
      // object to seal, so the observers read (the cost this trade moves after the burst).
      expect(notice?.cause).toMatch(/^settled sha256:/);
    }
    const observed = await env.api.getRelease(env.ns.name, name);
    expect(conditionOf(observed, 'InSync')).toMatchObject({ status: 'True', reason: 'InSync' });
    expect(conditionOf(observed, 'Healthy')).toMatchObject({ status: 'True' });
  }, 300_000);
});
