import { createLeasePort } from '../../adapters/kube/lease.ts';
import { createBatchingSqs } from '../../adapters/sqs/batching.ts';
import { sqsVisibilityPort } from '../../adapters/sqs/queues.ts';
import { createS3RenderStore } from '../../adapters/store/s3-render-store.ts';
import type { LeasePort } from '../../domain/runtime/lease.ts';
import { LEASE_SECONDS } from '../../domain/runtime/timings.ts';
import type { QueueLoop } from '../../domain/runtime/queue-message.ts';
import type { FunctionClients } from './clients.ts';
import type { FunctionConfig } from './config.ts';
import { withLease } from './lease-guard.ts';
import type { Logger } from '../../platform/logger.ts';
import type { LeaseMarks } from './release-reads.ts';
import type { LoopRun } from './run-commit.ts';
import { withRunMetrics } from './run-metrics.ts';
import { createNotifier } from './notifier.ts';
import { createSqsBatchHandler, type RecordHandler, type SqsBatchHandler } from './sqs-batch-handler.ts';
import { createQueueBacklog, type QueueBacklog } from '../../adapters/sqs/queue-backlog.ts';
import { withBurstYield } from './burst-guard.ts';
import type { SQSRecord } from './sqs-event.ts';

export interface HandlerOptions {
  /** The dev poller passes the emulator's queue URL; on AWS it comes from the event source ARN. */
  queueUrlOf?: (record: SQSRecord) => string;
  /** The container's reader of the reconcile queue's backlog (reconcileBacklogOf); default: one of the handler's own. */
  reconcileBacklog?: QueueBacklog;
}

/** What every loop's record handler may need from the container. */
export function sharedPorts(config: FunctionConfig, clients: FunctionClients) {
  return {
    store: config.CONVOY_RENDER_BUCKET
      ? createS3RenderStore({ s3: clients.s3, bucket: config.CONVOY_RENDER_BUCKET })
      : undefined,
    notify: createNotifier(createBatchingSqs(clients.sqs), {
      reconcile: config.CONVOY_RECONCILE_QUEUE_URL,
      drift: config.CONVOY_DRIFT_QUEUE_URL,
      health: config.CONVOY_HEALTH_QUEUE_URL,
    }),
  };
}

/**
 * A loop's run as a function: SQS batch → Lease (one run per Release, or per ReleaseSet for fleet)
 * → the loop's decision → its commit under the Lease (run-commit.ts) → SQS.
 */
export function loopHandler<S>(
  loop: QueueLoop,
  run: LoopRun<S>,
  config: FunctionConfig,
  clients: FunctionClients,
  logger: Logger,
  options: HandlerOptions = {},
  /** The loop's status marks: its status write closes its Lease (release-reads.ts); unset: runs give it back. */
  marks?: LeaseMarks,
  /**
   * Verifies the message's object on the live API before the Lease; default: the marks' (release-reads.ts admit).
   * Gets the loop's Lease port (the fleet reads its Lease before the admission: lease-guard.ts withLeasePeek).
   */
  admit: (guarded: RecordHandler, leases: LeasePort) => RecordHandler = (guarded) => admitted(marks, guarded),
): SqsBatchHandler {
  const leases = createLeasePort(clients.kc, config.CONVOY_NAMESPACE);
  // The message's Release is verified on the live API before the Lease (release-reads.ts admit).
  const guarded = admit(
    withLease(run.decide, {
      loop,
      leases,
      // One duration for every run (domain/runtime/timings.ts): the construct checks the timeout and visibility against it.
      durationSeconds: LEASE_SECONDS,
      marks,
      commit: run.commit,
    }),
    leases,
  );
  return createSqsBatchHandler({
    loop,
    handleRecord: withRunMetrics(
      loop,
      // During a reconcile burst, observer checks and rechecks wait before any request (burst-guard.ts).
      loop === 'fleet'
        ? guarded
        : withBurstYield(guarded, {
            loop,
            reconcileBacklog: options.reconcileBacklog ?? reconcileBacklogOf(config, clients, logger),
          }),
      // EMF only where CloudWatch reads stdout (in Lambda); convoy dev and tests get none.
      process.env['AWS_LAMBDA_FUNCTION_NAME'] !== undefined,
    ),
    sqs: sqsVisibilityPort(clients.sqs, createBatchingSqs(clients.sqs)),
    logger,
    ...(options.queueUrlOf ? { queueUrlOf: options.queueUrlOf } : {}),
  });
}

/** The reconcile queue's backlog, read at most every few seconds by this container (adapters/sqs/queue-backlog.ts). */
export function reconcileBacklogOf(
  config: FunctionConfig,
  clients: FunctionClients,
  logger: Logger,
): QueueBacklog {
  return createQueueBacklog(clients.sqs, config.CONVOY_RECONCILE_QUEUE_URL, {
    onError: (error) =>
      logger.warn("could not read the reconcile queue's backlog; nothing waits for a burst", {
        error: error instanceof Error ? error.message : String(error),
      }),
  });
}

const admitted = (marks: LeaseMarks | undefined, guarded: RecordHandler): RecordHandler =>
  marks?.admit === undefined ? guarded : marks.admit(guarded);
