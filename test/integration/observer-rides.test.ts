// Lean at rest: the observers' interval checks ride on a settled reconcile.
// The three functions as production composes them (functions/*/create-handler.ts: SQS batch →
// Release admitted → Lease → record handler → SQS), on fauxqs queues, the real apiserver, as the
// shipped functions identity acting as the tenant's ServiceAccount. The test drives the queues
// as the relay would: the reconcile's interval message; the messages the reconcile sends drift
// and health; an observer's own timer tick where its interval is shorter.
//
// Guarantees proven here:
// - a settled reconcile sends drift and health its sealed answers, and the relay counts its
//   status write as both observers' sends (observersNotified), so they need no reads;
// - drift with nothing to change takes no Lease and writes nothing (InSync and its
//   lastTransitionTime as they were); health writes Healthy (lastTransitionTime kept) and a new
//   checkedAt under convoy-health, the same verdict as its own tick that reads the cluster;
// - a change made while nothing else happened (a label edited by hand, an object deleted) is
//   still found: by drift's own tick (Drifted), and by the reconcile's check of every object,
//   which writes it back (Event DriftCorrected); drift, told, then takes its Lease and turns
//   InSync True again under convoy-observe.
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { setTimeout as sleep } from 'node:timers/promises';
import { AppsV1Api, CoordinationV1Api, CoreV1Api } from '@kubernetes/client-node';
import {
  ChangeMessageVisibilityBatchCommand,
  DeleteMessageBatchCommand,
  ReceiveMessageCommand,
  SendMessageBatchCommand,
  SQSClient,
} from '@aws-sdk/client-sqs';
import { startFauxqs } from 'fauxqs';
import { createKubeRequest } from '../../adapters/kube/target-cluster.ts';
import { ensureQueueWithDlq, type QueueWithDlq } from '../../adapters/sqs/queues.ts';
import type { Release } from '../../domain/api/objects.ts';
import { observersNotified } from '../../domain/relay/timers.ts';
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
const NAME = 'rides';

const files = {
  'deploy.yaml': `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  labels: {app: web, tier: web}
spec:
  replicas: 1
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: main, image: "registry.invalid/web:1"}]}
`,
  'cm.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: web-cfg\ndata: {greeting: hello}\n',
  'svc.yaml':
    'apiVersion: v1\nkind: Service\nmetadata:\n  name: web\nspec:\n  selector: {app: web}\n  ports: [{port: 80}]\n',
};

const conditionOf = releaseCondition;
const managerOf = statusManagerOf;

describe('the observers ride on a settled reconcile', () => {
  let env: ReconcileEnv;
  let aws: Awaited<ReturnType<typeof startFauxqs>>;
  let sqs: SQSClient;
  const queues = {} as Record<Loop, QueueWithDlq>;
  const handlers = {} as Record<Loop, SqsBatchHandler>;
  let uid = '';

  beforeAll(async () => {
    env = await startReconcileEnv(kubeConfigFor(inject('kubeconfigPath')), 'observer-rides');
    aws = await startFauxqs({ port: 0, logger: false });
    sqs = new SQSClient({
      endpoint: `http://127.0.0.1:${aws.port}`,
      region: 'us-east-1',
      credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
    });
    for (const loop of LOOPS)
      queues[loop] = await ensureQueueWithDlq(sqs, `rides-${loop}`, {
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
    // One container per function, one hint key for the three (an installation's shared key).
    const clients: FunctionClients = {
      kc: env.functionsConfig,
      sqs,
      s3: env.s3,
      tenancy: env.tenancy,
      hintKey: hintKey(undefined),
    };
    const logger = createLogger({ base: { test: 'observer-rides' }, level: 'error' });
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
    await settle();
  });
  afterAll(async () => {
    await aws?.stop();
    sqs?.destroy();
    await env?.close();
  });

  const release = () => env.api.getRelease(env.ns.name, NAME);

  /** Sends one message for the Release to `loop`'s queue, as the relay's timer does. */
  async function send(loop: Loop, cause: string): Promise<void> {
    const body = queueMessageBody({
      v: 1,
      loop,
      namespace: env.ns.name,
      name: NAME,
      uid,
      cause,
      sentAt: new Date().toISOString(),
    });
    await sqs.send(
      new SendMessageBatchCommand({
        QueueUrl: queues[loop].queueUrl,
        Entries: [{ Id: 'm0', MessageBody: body }],
      }),
    );
  }

  /**
   * Hands the first deliveries of `loop`'s queue to its function until `expect` were handled or
   * `timeoutMs` passed; returns the messages handled. A redelivery (a recheck) is left for later.
   */
  async function drain(loop: Loop, expect: number, timeoutMs = 20_000): Promise<QueueMessage[]> {
    const handled: QueueMessage[] = [];
    const deadline = Date.now() + timeoutMs;
    while (handled.length < expect && Date.now() < deadline) {
      const { Messages = [] } = await sqs.send(
        new ReceiveMessageCommand({
          QueueUrl: queues[loop].queueUrl,
          MaxNumberOfMessages: 10,
          WaitTimeSeconds: 1,
          AttributeNames: ['All'],
          MessageSystemAttributeNames: ['All'],
        }),
      );
      const first = Messages.filter((m) => Number(m.Attributes?.ApproximateReceiveCount ?? '1') <= 1);
      const later = Messages.filter((m) => !first.includes(m));
      if (later.length > 0) {
        await sqs.send(
          new ChangeMessageVisibilityBatchCommand({
            QueueUrl: queues[loop].queueUrl,
            Entries: later.map((m, i) => ({
              Id: `v${i}`,
              ReceiptHandle: m.ReceiptHandle ?? '',
              VisibilityTimeout: 0,
            })),
          }),
        );
      }
      if (first.length === 0) continue;
      const event = toSqsEvent(first, { queueArn: queues[loop].queueArn, awsRegion: 'us-east-1' });
      const verdict = recordsToDelete(event, await handlers[loop](event));
      for (const m of first) {
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

  /** Until the Release is settled: applied, the rollout done, InSync and Healthy True; every queue empty after. */
  async function settle(): Promise<void> {
    const apps = env.kc.makeApiClient(AppsV1Api);
    for (let i = 0; i < 60; i++) {
      await send('reconcile', 'test: settle');
      await drain('reconcile', 1);
      await drain('drift', 10, 1_500);
      await drain('health', 10, 1_500);
      const r = await release();
      const available = await apps.readNamespacedDeployment({ namespace: env.ns.name, name: 'web' }).then(
        (d) => (d.status?.availableReplicas ?? 0) >= 1,
        () => false,
      );
      if (
        available &&
        conditionOf(r, 'Applied')?.reason === 'Applied' &&
        r.status?.rollout?.state !== 'Progressing' &&
        conditionOf(r, 'Healthy')?.status === 'True' &&
        conditionOf(r, 'InSync')?.status === 'True'
      ) {
        for (const loop of LOOPS) await drain(loop, 10, 1_500);
        return;
      }
      // Waiting for the state meant (the Deployment's Pod on a KWOK node), not for a time.
      await sleep(500);
    }
    throw new Error(`the Release did not settle: ${JSON.stringify((await release()).status?.conditions)}`);
  }

  const coordination = () => env.kc.makeApiClient(CoordinationV1Api);
  const leaseVersion = (loop: Loop) =>
    coordination()
      .readNamespacedLease({ namespace: env.installationNamespace, name: leaseName(loop, uid) })
      .then(
        (l) => `${l.metadata?.resourceVersion ?? ''} ${l.spec?.holderIdentity ?? ''}`,
        () => 'none',
      );

  it('a settled reconcile sends drift and health its sealed answers; drift changes nothing and takes no Lease; health writes the same verdict as its own tick', async () => {
    const before = await release();
    await send('reconcile', 'timer: reconcile interval');
    expect(await drain('reconcile', 1)).toHaveLength(1);
    const reconciled = await release();
    // The relay counts this status write as drift's and health's sends: their own timers start over.
    expect(observersNotified(before, reconciled)).toBe(true);

    const driftLease = await leaseVersion('drift');
    const [driftMessage] = await drain('drift', 1);
    expect(driftMessage?.cause).toMatch(/^settled sha256:/);
    expect(driftMessage?.applied?.mac).toBeDefined();
    const afterDrift = await release();
    // Nothing to change: no status write (same resourceVersion), no Lease taken or given back.
    expect(afterDrift.metadata.resourceVersion).toBe(reconciled.metadata.resourceVersion);
    expect(await leaseVersion('drift')).toBe(driftLease);
    expect(conditionOf(afterDrift, 'InSync')).toEqual(conditionOf(before, 'InSync'));

    const [healthMessage] = await drain('health', 1);
    expect(healthMessage?.cause).toMatch(/^settled sha256:/);
    const afterHealth = await release();
    expect(conditionOf(afterHealth, 'Healthy')).toEqual(conditionOf(before, 'Healthy'));
    expect(afterHealth.status?.healthSummary?.checkedAt).not.toBe(before.status?.healthSummary?.checkedAt);
    expect(managerOf(afterHealth, 'Healthy')).toBe('convoy-health');
    expect(managerOf(afterHealth, 'InSync')).toBe('convoy-observe');

    // Health's own tick, which reads the cluster, finds the same verdict.
    await send('health', 'timer: health interval');
    expect(await drain('health', 1)).toHaveLength(1);
    const own = await release();
    expect(conditionOf(own, 'Healthy')).toEqual(conditionOf(afterHealth, 'Healthy'));
    const counts = (r: Release) => {
      const { checkedAt: _at, ...rest } = r.status?.healthSummary ?? {};
      return rest;
    };
    expect(counts(own)).toEqual(counts(afterHealth));
  });

  it("a label edited by hand while nothing else happened: Drifted at drift's own tick; the reconcile's check writes it back (DriftCorrected) and drift, told, turns InSync True under its Lease", async () => {
    const raw = createKubeRequest(env.config);
    const path = `/apis/apps/v1/namespaces/${env.ns.name}/deployments/web`;
    const edit = await raw({
      method: 'PATCH',
      path,
      query: { fieldManager: 'kubectl-edit' },
      contentType: 'application/merge-patch+json',
      body: JSON.stringify({ metadata: { labels: { tier: 'edited-by-hand' } } }),
    });
    expect(edit.status).toBe(200);

    await send('drift', 'timer: drift interval');
    expect(await drain('drift', 1)).toHaveLength(1);
    const drifted = await release();
    expect(conditionOf(drifted, 'InSync')).toMatchObject({ status: 'False', reason: 'Drifted' });
    expect(conditionOf(drifted, 'InSync')?.message).toContain(
      `Deployment ${env.ns.name}/web: /metadata/labels/tier`,
    );

    await send('reconcile', 'timer: reconcile interval');
    expect(await drain('reconcile', 1)).toHaveLength(1);
    const deployment = await env.kc
      .makeApiClient(AppsV1Api)
      .readNamespacedDeployment({ namespace: env.ns.name, name: 'web' });
    expect(deployment.metadata?.labels?.['tier']).toBe('web');

    const driftLease = await leaseVersion('drift');
    const [told] = await drain('drift', 1);
    expect(told?.cause).toMatch(/^corrected sha256:/);
    const resolved = await release();
    expect(conditionOf(resolved, 'InSync')).toMatchObject({ status: 'True', reason: 'InSync' });
    expect(managerOf(resolved, 'InSync')).toBe('convoy-observe');
    // InSync changed: that run took the Lease (its status write closed it).
    expect(await leaseVersion('drift')).not.toBe(driftLease);
    await drain('health', 1);

    const events = await env.kc.makeApiClient(CoreV1Api).listNamespacedEvent({ namespace: env.ns.name });
    const reasons = events.items.filter((e) => e.involvedObject.name === NAME).map((e) => e.reason);
    expect(reasons).toEqual(expect.arrayContaining(['DriftDetected', 'DriftCorrected', 'DriftResolved']));
  });

  it("an object deleted while nothing else happened: the reconcile's check re-creates it (DriftCorrected naming it); the observers ride on that run", async () => {
    const core = env.kc.makeApiClient(CoreV1Api);
    await core.deleteNamespacedConfigMap({ namespace: env.ns.name, name: 'web-cfg' });
    const before = await release();
    await send('reconcile', 'timer: reconcile interval');
    expect(await drain('reconcile', 1)).toHaveLength(1);
    expect((await core.readNamespacedConfigMap({ namespace: env.ns.name, name: 'web-cfg' })).data).toEqual({
      greeting: 'hello',
    });
    const [driftMessage] = await drain('drift', 1);
    expect(driftMessage?.cause).toMatch(/^corrected sha256:/);
    await drain('health', 1);
    const after = await release();
    expect(conditionOf(after, 'InSync')).toMatchObject({ status: 'True', reason: 'InSync' });
    expect(conditionOf(after, 'InSync')?.lastTransitionTime).toBe(
      conditionOf(before, 'InSync')?.lastTransitionTime,
    );
    const events = await core.listNamespacedEvent({ namespace: env.ns.name });
    const corrected = events.items
      .filter((e) => e.involvedObject.name === NAME && e.reason === 'DriftCorrected')
      .map((e) => e.message ?? '');
    expect(corrected.some((m) => m.includes('web-cfg'))).toBe(true);
  });
});
