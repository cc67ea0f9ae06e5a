import { createManagementReaders } from '../../adapters/kube/cluster-resolver.ts';
import { createLeasePort } from '../../adapters/kube/lease.ts';
import { createObserverTargetResolver } from '../../adapters/kube/observer-target.ts';
import { createStatusWriter } from '../../adapters/kube/status-writer.ts';
import { sqsVisibilityPort } from '../../adapters/sqs/queues.ts';
import { createS3RenderStore } from '../../adapters/store/s3-render-store.ts';
import type { FunctionClients } from '../runtime/clients.ts';
import type { FunctionConfig } from '../runtime/config.ts';
import { withLease } from '../runtime/lease-guard.ts';
import type { Logger } from '../runtime/logger.ts';
import { createSqsBatchHandler, type SqsBatchHandler } from '../runtime/sqs-batch-handler.ts';
import type { SQSRecord } from '../runtime/sqs-event.ts';
import { createReleaseSource } from '../reconcile/reconcile-record.ts';
import { createHealthRecordHandler } from './health-record.ts';

export interface HandlerOptions {
  /** The dev poller passes the emulator's queue URL; on AWS it comes from the event source ARN. */
  queueUrlOf?: (record: SQSRecord) => string;
}

/** The health function: SQS batch → Lease → assessment → convoy-health status (Healthy, healthSummary). */
export function createHealthHandler(
  config: FunctionConfig,
  clients: FunctionClients,
  logger: Logger,
  options: HandlerOptions = {},
): SqsBatchHandler {
  const record = createHealthRecordHandler({
    releases: createReleaseSource(clients.kc),
    statusWriter: createStatusWriter(clients.kc),
    targets: createObserverTargetResolver({ managementKubeConfig: clients.kc, readers: createManagementReaders(clients.kc) }),
    renders: config.CONVOY_RENDER_BUCKET ? createS3RenderStore({ s3: clients.s3, bucket: config.CONVOY_RENDER_BUCKET }) : undefined,
  });
  return createSqsBatchHandler({
    loop: 'health',
    handleRecord: withLease(record, {
      loop: 'health',
      leases: createLeasePort(clients.kc, config.CONVOY_NAMESPACE),
      durationSeconds: config.CONVOY_LEASE_SECONDS,
    }),
    sqs: sqsVisibilityPort(clients.sqs),
    logger,
    ...(options.queueUrlOf ? { queueUrlOf: options.queueUrlOf } : {}),
  });
}
