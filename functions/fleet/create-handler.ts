import { join } from 'node:path';
import { createEventRecorder } from '../../adapters/kube/events.ts';
import { createIdentityReads } from '../../adapters/kube/identity-reads.ts';
import { createManagementReader } from '../../adapters/kube/management-reader.ts';
import { createFleetKubePort } from '../../adapters/kube/release-set-port.ts';
import { createSourcePort } from '../../adapters/reconcile/source-port.ts';
import { createGitCache } from '../../adapters/source/git-cache.ts';
import { createTemplateSourceResolver } from '../../adapters/source/template-source.ts';
import type { FunctionClients } from '../runtime/clients.ts';
import type { FunctionConfig } from '../runtime/config.ts';
import type { Logger } from '../../platform/logger.ts';
import { withLeasePeek } from '../runtime/lease-guard.ts';
import { loopHandler, sharedPorts, type HandlerOptions } from '../runtime/loop-handler.ts';
import type { SqsBatchHandler } from '../runtime/sqs-batch-handler.ts';
import { createFleetRun, fleetAdmission } from './fleet-record.ts';

export type { HandlerOptions };

/** The fleet function: SQS batch → the live ReleaseSet → Lease → decideFleet → child writes → convoy-releaseset status. */
export function createFleetHandler(
  config: FunctionConfig,
  clients: FunctionClients,
  logger: Logger,
  options: HandlerOptions = {},
): SqsBatchHandler {
  const { store } = sharedPorts(config, clients);
  const kube = createFleetKubePort(clients.kc);
  // The reconcile's source port: the template resolves as its children will (credentials read as the template's ServiceAccount).
  const source = createSourcePort({
    reader: createManagementReader(clients.kc),
    readsAs: createIdentityReads(clients.kc),
    gitCache: createGitCache({ dir: join(config.CONVOY_CACHE_DIR, 'fleet-git'), maxEntries: 16 }),
    helmCacheDir: join(config.CONVOY_CACHE_DIR, 'fleet-charts'),
    tenancy: clients.tenancy,
    ociMaxArtifactBytes: config.CONVOY_OCI_MAX_ARTIFACT_BYTES,
    ecr: clients.ecr,
  });
  const run = createFleetRun({
    kube,
    resolveSource: createTemplateSourceResolver(source),
    renders: store,
    events: createEventRecorder(clients.kc, {
      controller: 'convoy.dev/fleet',
      instance: process.env.AWS_LAMBDA_FUNCTION_NAME ?? 'convoy-fleet',
    }),
  });
  // A message is a hint: the set is read (uid compared) before the Lease is taken, so a forged message
  // writes nothing. Before that, one read of the Lease: most of a set's messages come while a run is
  // under way, and wait or drop on that read alone (lease-guard.ts withLeasePeek).
  return loopHandler('fleet', run, config, clients, logger, options, undefined, (guarded, leases) =>
    withLeasePeek(fleetAdmission(kube, guarded), { loop: 'fleet', leases }),
  );
}
