import { cachedClusterReader } from '../../adapters/kube/cluster-resolver.ts';
import {
  createObserverCaches,
  invalidateObserverCaches,
  type ObserverCaches,
} from '../../adapters/reconcile/port-caches.ts';
import { createObserverTargetResolver } from '../../adapters/kube/observer-target.ts';
import { createEventRecorder } from '../../adapters/kube/events.ts';
import { createStatusWriter } from '../../adapters/kube/status-writer.ts';
import type { FunctionClients } from '../runtime/clients.ts';
import type { FunctionConfig } from '../runtime/config.ts';
import type { Logger } from '../../platform/logger.ts';
import { loopHandler, sharedPorts, type HandlerOptions } from '../runtime/loop-handler.ts';
import type { SqsBatchHandler } from '../runtime/sqs-batch-handler.ts';
import { sharedReleaseReads } from '../runtime/release-reads.ts';
import { createReleaseSource } from '../../adapters/kube/release-source.ts';
import { createDriftRun, createDriftWithoutLease } from './drift-record.ts';

export type { HandlerOptions };

/** The drift function: SQS batch → Lease → drift check → convoy-observe status (InSync). */
/** `caches`: the container's (one per process: `convoy dev` shares one between drift and health). */
export function createDriftHandler(
  config: FunctionConfig,
  clients: FunctionClients,
  logger: Logger,
  options: HandlerOptions = {},
  caches: ObserverCaches = createObserverCaches(),
): SqsBatchHandler {
  const { store, notify } = sharedPorts(config, clients);
  // `caches` are kept by the container between runs; each message first applies their invalidation rule.
  // One Release read per run, shared with the Lease guard (its status write closes the Lease).
  // A hinted message whose check changes nothing ends before the Lease (drift-record.ts).
  const reads = sharedReleaseReads(createReleaseSource(clients.kc), 'drift', {
    hintKey: clients.hintKey,
    withoutLease: createDriftWithoutLease({ hintKey: clients.hintKey }),
  });
  const run = createDriftRun({
    releases: reads.releases,
    statusWriter: createStatusWriter(clients.kc),
    targets: createObserverTargetResolver({
      managementKubeConfig: clients.kc,
      readers: cachedClusterReader(clients.kc, caches.clusters),
      discovery: caches.discovery,
      tenancy: clients.tenancy,
      eks: clients.eks,
    }),
    renders: store,
    notify,
    events: createEventRecorder(clients.kc, {
      controller: 'convoy.dev/drift',
      instance: process.env.AWS_LAMBDA_FUNCTION_NAME ?? 'convoy-drift',
    }),
    hintKey: clients.hintKey,
    memory: caches.drift,
  });
  const decide: typeof run.decide = (message, ctx) => {
    invalidateObserverCaches(caches, message);
    return run.decide(message, ctx);
  };
  return loopHandler('drift', { ...run, decide }, config, clients, logger, options, reads.marks);
}
