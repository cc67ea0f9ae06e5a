import { cachedClusterReader } from '../../adapters/kube/cluster-resolver.ts';
import {
  createObserverCaches,
  invalidateObserverCaches,
  type ObserverCaches,
} from '../../adapters/reconcile/port-caches.ts';
import { createObserverTargetResolver } from '../../adapters/kube/observer-target.ts';
import { createStatusWriter } from '../../adapters/kube/status-writer.ts';
import type { FunctionClients } from '../runtime/clients.ts';
import type { FunctionConfig } from '../runtime/config.ts';
import type { Logger } from '../../platform/logger.ts';
import { loopHandler, sharedPorts, type HandlerOptions } from '../runtime/loop-handler.ts';
import type { SqsBatchHandler } from '../runtime/sqs-batch-handler.ts';
import { sharedReleaseReads } from '../runtime/release-reads.ts';
import { createReleaseSource } from '../../adapters/kube/release-source.ts';
import { createHealthRun } from './health-record.ts';

export type { HandlerOptions };

/** The health function: SQS batch → Lease → assessment → convoy-health status (Healthy, healthSummary). */
/** `caches`: the container's (one per process: `convoy dev` shares one between drift and health). */
export function createHealthHandler(
  config: FunctionConfig,
  clients: FunctionClients,
  logger: Logger,
  options: HandlerOptions = {},
  caches: ObserverCaches = createObserverCaches(),
): SqsBatchHandler {
  // `caches` are kept by the container between runs; each message first applies their invalidation rule.
  // One Release read per run, shared with the Lease guard (its status write closes the Lease).
  const reads = sharedReleaseReads(createReleaseSource(clients.kc), 'health', { hintKey: clients.hintKey });
  const run = createHealthRun({
    releases: reads.releases,
    statusWriter: createStatusWriter(clients.kc),
    targets: createObserverTargetResolver({
      managementKubeConfig: clients.kc,
      readers: cachedClusterReader(clients.kc, caches.clusters),
      discovery: caches.discovery,
      tenancy: clients.tenancy,
      eks: clients.eks,
    }),
    renders: sharedPorts(config, clients).store,
    hintKey: clients.hintKey,
  });
  const decide: typeof run.decide = (message, ctx) => {
    invalidateObserverCaches(caches, message);
    return run.decide(message, ctx);
  };
  return loopHandler('health', { ...run, decide }, config, clients, logger, options, reads.marks);
}
