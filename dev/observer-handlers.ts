// The drift and health functions' handlers for the local runtime.
import type { Loop } from '../domain/runtime/queue-message.ts';
import { createObserverCaches } from '../adapters/reconcile/port-caches.ts';
import { createDriftHandler } from '../functions/drift/create-handler.ts';
import { createHealthHandler } from '../functions/health/create-handler.ts';
import type { FunctionClients } from '../functions/runtime/clients.ts';
import type { FunctionConfig } from '../functions/runtime/config.ts';
import type { Logger } from '../platform/logger.ts';
import type { SqsBatchHandler } from '../functions/runtime/sqs-batch-handler.ts';

export function observerHandlers(
  config: FunctionConfig,
  clients: FunctionClients,
  logger: Logger,
  queueUrlOf: (loop: Loop) => () => string,
): Partial<Record<Loop, SqsBatchHandler>> {
  // One process: drift and health share the Cluster list and discovery (per process, never module-level).
  const caches = createObserverCaches();
  return {
    drift: createDriftHandler(
      config,
      clients,
      logger.child({ fn: 'drift' }),
      { queueUrlOf: queueUrlOf('drift') },
      caches,
    ),
    health: createHealthHandler(
      config,
      clients,
      logger.child({ fn: 'health' }),
      { queueUrlOf: queueUrlOf('health') },
      caches,
    ),
  };
}
