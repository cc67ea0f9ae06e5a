import { createEventRecorder } from '../../adapters/kube/events.ts';
import { createStatusWriter } from '../../adapters/kube/status-writer.ts';
import { createReconcilePorts } from '../../adapters/reconcile/create-ports.ts';
import type { FunctionClients } from '../runtime/clients.ts';
import type { FunctionConfig } from '../runtime/config.ts';
import type { Logger } from '../../platform/logger.ts';
import {
  loopHandler,
  reconcileBacklogOf,
  sharedPorts,
  type HandlerOptions,
} from '../runtime/loop-handler.ts';
import type { SqsBatchHandler } from '../runtime/sqs-batch-handler.ts';
import { createPortCaches, invalidateFor } from '../../adapters/reconcile/port-caches.ts';
import { createReleaseSource } from '../../adapters/kube/release-source.ts';
import { createReconcileRun } from './reconcile-record.ts';
import { sharedReleaseReads } from '../runtime/release-reads.ts';

export type { HandlerOptions };

/** The reconcile function: SQS batch → Lease → reconcile → its decision committed (convoy-release status, Events, notices). */
export function createReconcileHandler(
  config: FunctionConfig,
  clients: FunctionClients,
  logger: Logger,
  options: HandlerOptions = {},
): SqsBatchHandler {
  const { store, notify } = sharedPorts(config, clients);
  // Kept by the container between runs; each message first applies their invalidation rule.
  const caches = createPortCaches();
  // One reader of the queue's backlog for the container: the burst guard and the notices share it.
  const reconcileBacklog = options.reconcileBacklog ?? reconcileBacklogOf(config, clients, logger);
  // One Release read per run, shared with the Lease guard (its status write closes the Lease).
  const reads = sharedReleaseReads(createReleaseSource(clients.kc), 'reconcile', {
    hintKey: clients.hintKey,
  });
  const run = createReconcileRun({
    releases: reads.releases,
    statusWriter: createStatusWriter(clients.kc),
    ports: createReconcilePorts({
      managementKubeConfig: clients.kc,
      store,
      cacheDir: config.CONVOY_CACHE_DIR,
      caches,
      tenancy: clients.tenancy,
      eks: clients.eks,
      ociMaxArtifactBytes: config.CONVOY_OCI_MAX_ARTIFACT_BYTES,
      ecr: clients.ecr,
      renderLimits: {
        maxObjects: config.CONVOY_MAX_RENDER_OBJECTS,
        maxBytes: config.CONVOY_MAX_RENDER_BYTES,
      },
    }),
    // A run longer than the interval shows its progress in status (domain/reconcile/progress.ts).
    progress: { intervalMs: config.CONVOY_PROGRESS_INTERVAL_SECONDS * 1000 },
    notify,
    events: createEventRecorder(clients.kc, {
      controller: 'convoy.dev/reconcile',
      instance: process.env.AWS_LAMBDA_FUNCTION_NAME ?? 'convoy-reconcile',
    }),
    hintKey: clients.hintKey,
    reconcileBacklog,
  });
  const decide: typeof run.decide = (message, ctx) => {
    invalidateFor(caches, message);
    return run.decide(message, ctx);
  };
  return loopHandler(
    'reconcile',
    { ...run, decide },
    config,
    clients,
    logger,
    { ...options, reconcileBacklog },
    reads.marks,
  );
}
