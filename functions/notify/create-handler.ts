import { createEgress } from '../../adapters/egress/client.ts';
import { createEventRecorder } from '../../adapters/kube/events.ts';
import { createIdentityReads } from '../../adapters/kube/identity-reads.ts';
import { createNotificationStore } from '../../adapters/kube/notification-store.ts';
import { createReleaseSource } from '../../adapters/kube/release-source.ts';
import { createDeliver } from '../../adapters/notify/deliver.ts';
import { createEventBridgeClient } from '../../adapters/notify/eventbridge.ts';
import { sqsVisibilityPort } from '../../adapters/sqs/queues.ts';
import { createBatchingSqs } from '../../adapters/sqs/batching.ts';
import { STRICT_EGRESS } from '../../domain/egress/policy.ts';
import type { Deliver } from '../../domain/notify/event.ts';
import { DEFAULT_TENANCY } from '../../domain/tenancy/index.ts';
import type { Logger } from '../../platform/logger.ts';
import type { FunctionClients } from '../runtime/clients.ts';
import type { FunctionConfig } from '../runtime/config.ts';
import type { HandlerOptions } from '../runtime/loop-handler.ts';
import { withRunMetrics } from '../runtime/run-metrics.ts';
import { createSqsBatchHandler, type SqsBatchHandler } from '../runtime/sqs-batch-handler.ts';
import { createNotifyRun } from './notify-run.ts';

export type { HandlerOptions };

export interface NotifyHandlerOptions extends HandlerOptions {
  /** The destinations' delivery; default every adapter of adapters/notify through the installation's egress policy. */
  readonly deliver?: Deliver;
}

/**
 * The notify function: SQS batch → the live Release → the Notifications of its namespace that
 * watch it → record, claim, deliver, record (notify-run.ts). No Lease: the Notification's status
 * claims (written with a resourceVersion precondition) keep two runs from delivering the same
 * transition, and a run never waits for another loop's Lease.
 */
export function createNotifyHandler(
  config: FunctionConfig,
  clients: FunctionClients,
  logger: Logger,
  options: NotifyHandlerOptions = {},
): SqsBatchHandler {
  const tenancy = clients.tenancy ?? DEFAULT_TENANCY;
  const run = createNotifyRun({
    notifications: createNotificationStore(clients.kc),
    releases: createReleaseSource(clients.kc),
    secretsAs: createIdentityReads(clients.kc),
    tenancy,
    deliver:
      options.deliver ??
      createDeliver({
        egress: createEgress(tenancy.egress ?? STRICT_EGRESS),
        // The function's role and region (AWS_REGION); infra/notifications.ts grants PutEvents on the bus.
        eventBridge: createEventBridgeClient(),
      }),
    events: createEventRecorder(clients.kc, {
      controller: 'convoy.dev/notify',
      instance: process.env['AWS_LAMBDA_FUNCTION_NAME'] ?? 'convoy-notify',
    }),
    dashboardUrl: config.CONVOY_DASHBOARD_URL,
    eventBus: config.CONVOY_NOTIFY_EVENT_BUS,
  });
  return createSqsBatchHandler({
    loop: 'notify',
    handleRecord: withRunMetrics('notify', run, process.env['AWS_LAMBDA_FUNCTION_NAME'] !== undefined),
    sqs: sqsVisibilityPort(clients.sqs, createBatchingSqs(clients.sqs)),
    logger,
    ...(options.queueUrlOf ? { queueUrlOf: options.queueUrlOf } : {}),
  });
}
