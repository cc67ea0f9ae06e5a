// The three loop functions as production composes them (functions/*/create-handler.ts:
// SQS batch → Lease → record handler → SQS), on fauxqs queues and render store, driven
// queue by queue by the bench instead of pollers: `drain(loop)` hands every visible
// message of one queue to its function and deletes what succeeded, so the requests
// counted meanwhile belong to that loop alone.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import {
  ChangeMessageVisibilityBatchCommand,
  DeleteMessageBatchCommand,
  ReceiveMessageCommand,
  SendMessageBatchCommand,
  SQSClient,
} from '@aws-sdk/client-sqs';
import { startFauxqs } from 'fauxqs';
import type { KubeConfig } from '@kubernetes/client-node';
import { fromClientNodeKubeConfig } from '../../adapters/kube/client-node-config.ts';
import { ensureQueueWithDlq, type QueueWithDlq } from '../../adapters/sqs/queues.ts';
import { queueMessageBody, type Loop } from '../../domain/runtime/queue-message.ts';
import { toSqsEvent, recordsToDelete } from '../../dev/sqs-poller.ts';
import { createDriftHandler } from '../../functions/drift/create-handler.ts';
import { createHealthHandler } from '../../functions/health/create-handler.ts';
import { createReconcileHandler } from '../../functions/reconcile/create-handler.ts';
import type { FunctionClients } from '../../functions/runtime/clients.ts';
import { functionEnvSchema } from '../../functions/runtime/config.ts';
import { hintKey } from '../../functions/runtime/applied-hint.ts';
import { createLogger } from '../../platform/logger.ts';
import type { SqsBatchHandler } from '../../functions/runtime/sqs-batch-handler.ts';

export const LOOPS: readonly Loop[] = ['reconcile', 'drift', 'health'];

export interface Drained {
  messages: number;
  /** Handler time per message (ms), batch time divided by its records. */
  perMessageMs: number[];
}

export interface LoopRig {
  /** The fauxqs origin (SQS and S3), for counting AWS requests. */
  awsOrigin: string;
  /**
   * Sends one message per Release to a loop's queue, as the relay does (with the Release itself
   * on a reconcile message for a Release just added, `watch: Release added`).
   */
  send(
    loop: Loop,
    releases: readonly { namespace: string; name: string; uid: string; release?: Record<string, unknown> }[],
    cause: string,
  ): Promise<void>;
  /**
   * Hands `expect` messages of `loop`'s queue to its function, waiting up to `timeoutMs`
   * for them to become visible. `delivery: 'first'` takes first deliveries only (a
   * redelivery is put back for 30 s and not counted); `'any'` takes every message (a
   * recheck comes back as a redelivery or, after a busy Lease, as a new message).
   */
  drain(
    loop: Loop,
    options: { expect: number; delivery: 'first' | 'any'; timeoutMs?: number },
  ): Promise<Drained>;
  close(): Promise<void>;
}

export async function startLoopRig(
  kc: KubeConfig,
  options: { leaseNamespace: string; batchSize?: number },
): Promise<LoopRig> {
  const aws = await startFauxqs({ port: 0, logger: false });
  const endpoint = `http://127.0.0.1:${aws.port}`;
  const credentials = { accessKeyId: 'bench', secretAccessKey: 'bench' };
  const sqs = new SQSClient({ endpoint, region: 'us-east-1', credentials });
  const s3 = new S3Client({ endpoint, region: 'us-east-1', forcePathStyle: true, credentials });
  const bucket = 'convoy-renders';
  await s3.send(new CreateBucketCommand({ Bucket: bucket }));
  const queues = {} as Record<Loop, QueueWithDlq>;
  for (const loop of LOOPS)
    queues[loop] = await ensureQueueWithDlq(sqs, `bench-${loop}`, {
      maxReceiveCount: 100,
      visibilityTimeout: 60,
    });
  const cacheDir = await mkdtemp(join(tmpdir(), 'convoy-bench-cache-'));
  const config = functionEnvSchema.parse({
    CONVOY_NAMESPACE: options.leaseNamespace,
    CONVOY_RENDER_BUCKET: bucket,
    CONVOY_RECONCILE_QUEUE_URL: queues.reconcile.queueUrl,
    CONVOY_DRIFT_QUEUE_URL: queues.drift.queueUrl,
    CONVOY_HEALTH_QUEUE_URL: queues.health.queueUrl,
    CONVOY_CACHE_DIR: cacheDir,
    CONVOY_LOG_LEVEL: 'error',
  });
  // One hint key for the rig's three loops, as a Lambda installation shares one.
  const clients: FunctionClients = {
    kc: fromClientNodeKubeConfig(kc),
    sqs,
    s3,
    hintKey: hintKey(config.CONVOY_HINT_KEY),
  };
  const logger = createLogger({ base: { bench: 'loop-rig' }, level: 'error' });
  const opts = (loop: Loop) => ({ queueUrlOf: () => queues[loop].queueUrl });
  const handlers: Record<Loop, SqsBatchHandler> = {
    reconcile: createReconcileHandler(config, clients, logger, opts('reconcile')),
    drift: createDriftHandler(config, clients, logger, opts('drift')),
    health: createHealthHandler(config, clients, logger, opts('health')),
  };
  const batchSize = options.batchSize ?? 10;

  return {
    awsOrigin: endpoint,
    async send(loop, releases, cause) {
      for (let i = 0; i < releases.length; i += 10) {
        const chunk = releases.slice(i, i + 10);
        await sqs.send(
          new SendMessageBatchCommand({
            QueueUrl: queues[loop].queueUrl,
            Entries: chunk.map(({ release, ...r }, n) => ({
              Id: `m${n}`,
              MessageBody: queueMessageBody({
                v: 1,
                loop,
                ...r,
                cause,
                sentAt: new Date().toISOString(),
                ...(loop === 'reconcile' && cause.startsWith('watch: Release added') && release !== undefined
                  ? { release }
                  : {}),
              }),
            })),
          }),
        );
      }
    },
    async drain(loop, { expect, delivery, timeoutMs = 30_000 }) {
      const perMessageMs: number[] = [];
      let messages = 0;
      const deadline = Date.now() + timeoutMs;
      while (messages < expect && Date.now() < deadline) {
        const { Messages = [] } = await sqs.send(
          new ReceiveMessageCommand({
            QueueUrl: queues[loop].queueUrl,
            MaxNumberOfMessages: Math.min(batchSize, expect - messages),
            WaitTimeSeconds: 1,
            AttributeNames: ['All'],
            MessageSystemAttributeNames: ['All'],
            MessageAttributeNames: ['All'],
          }),
        );
        const first = (m: (typeof Messages)[number]): boolean =>
          Number(m.Attributes?.ApproximateReceiveCount ?? '1') <= 1;
        const wanted = Messages.filter((m) => delivery === 'any' || first(m));
        const other = Messages.filter((m) => delivery === 'first' && !first(m));
        if (other.length > 0) {
          await sqs.send(
            new ChangeMessageVisibilityBatchCommand({
              QueueUrl: queues[loop].queueUrl,
              Entries: other.map((m, i) => ({
                Id: `v${i}`,
                ReceiptHandle: m.ReceiptHandle ?? '',
                VisibilityTimeout: 30,
              })),
            }),
          );
        }
        if (wanted.length === 0) continue;
        const event = toSqsEvent(wanted, { queueArn: queues[loop].queueArn, awsRegion: 'us-east-1' });
        const t = performance.now();
        const response = await handlers[loop](event);
        const ms = (performance.now() - t) / event.Records.length;
        for (let i = 0; i < event.Records.length; i++) perMessageMs.push(ms);
        messages += event.Records.length;
        const verdict = recordsToDelete(event, response);
        if (verdict.ok && verdict.records.length > 0) {
          await sqs.send(
            new DeleteMessageBatchCommand({
              QueueUrl: queues[loop].queueUrl,
              Entries: verdict.records.map((r, n) => ({ Id: `d${n}`, ReceiptHandle: r.receiptHandle })),
            }),
          );
        }
      }
      return { messages, perMessageMs };
    },
    async close() {
      await aws.stop();
      sqs.destroy();
      s3.destroy();
      await rm(cacheDir, { recursive: true, force: true });
    },
  };
}
