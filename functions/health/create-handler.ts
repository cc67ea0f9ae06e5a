import { createManagementReaders } from '../../adapters/kube/cluster-resolver.ts';
import { createObserverTargetResolver } from '../../adapters/kube/observer-target.ts';
import { createStatusWriter } from '../../adapters/kube/status-writer.ts';
import type { FunctionClients } from '../runtime/clients.ts';
import type { FunctionConfig } from '../runtime/config.ts';
import type { Logger } from '../runtime/logger.ts';
import { loopHandler, sharedPorts, type HandlerOptions } from '../runtime/loop-handler.ts';
import type { SqsBatchHandler } from '../runtime/sqs-batch-handler.ts';
import { sharedReleaseReads } from '../runtime/release-reads.ts';
import { createReleaseSource } from '../reconcile/reconcile-record.ts';
import { createHealthRecordHandler } from './health-record.ts';

export type { HandlerOptions };

/** The health function: SQS batch → Lease → assessment → convoy-health status (Healthy, healthSummary). */
export function createHealthHandler(config: FunctionConfig, clients: FunctionClients, logger: Logger, options: HandlerOptions = {}): SqsBatchHandler {
  // One Release read per run, shared with the Lease guard (its status write closes the Lease).
  const reads = sharedReleaseReads(createReleaseSource(clients.kc), 'health', { hintKey: clients.hintKey });
  const record = createHealthRecordHandler({
    releases: reads.releases,
    statusWriter: createStatusWriter(clients.kc),
    targets: createObserverTargetResolver({
      managementKubeConfig: clients.kc,
      readers: createManagementReaders(clients.kc),
      tenancy: clients.tenancy,
      eks: clients.eks,
    }),
    renders: sharedPorts(config, clients).store,
    hintKey: clients.hintKey,
  });
  return loopHandler('health', record, config, clients, logger, options, reads.marks);
}
