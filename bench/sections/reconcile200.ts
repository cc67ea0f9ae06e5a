// reconcile200: a 200-object render applied into an empty namespace through the
// reconcile function's record handler, then the same inputs again.
// Target: the unchanged run issues no object writes and exactly one status apply.
import { CoreV1Api, RbacAuthorizationV1Api, type KubeConfig } from '@kubernetes/client-node';
import { DEFAULT_TENANCY } from '../../domain/tenancy/settings.ts';
import type { Release } from '../../domain/api/objects.ts';
import type { Outcome } from '../../domain/runtime/outcome.ts';
import { startReconcileEnv, type ReconcileEnv } from '../../test/harness/reconcile-env.ts';
import { measureRequests, type RequestSummary } from '../lib/apiserver-metrics.ts';
import type { ClientRequestCount, ClientRequestCounter } from '../lib/client-requests.ts';
import { MIX_200, objectCount, renderFiles } from '../lib/fixtures.ts';
import { markDeploymentsAvailable } from '../lib/kube.ts';
import { log } from '../lib/stdout.ts';

export const RELEASE_200 = 'render-200';

/** env.reconcile() reads the Release before and after the handler runs (test/harness/reconcile-env.ts). */
const HARNESS_GETS = 2;

export interface RunReport {
  wallMs: number;
  outcome: string;
  applied: { status: string | undefined; reason: string | undefined };
  phase: string | undefined;
  rollout: string | undefined;
  /** Requests the target-cluster adapter sent (its own RequestCounter; discovery and /version included). */
  targetClusterRequests: number;
  /** Every request to the API server seen on the client side (undici diagnostics channel). */
  client: ClientRequestCount & { withoutHarness: number };
  /** From the API server's apiserver_request_total, without its own work (resource requests only: no discovery). */
  apiserver: RequestSummary & { withoutHarness: number; statusApplies: number };
  /** The API server's own requests meanwhile (IPAddress allocation for new Services, lease, endpoints). */
  apiserverOwn: Record<string, number>;
}

export interface Reconcile200 {
  report: Record<string, unknown>;
  /** Kept open for the observers section; close() it when done. */
  env: ReconcileEnv;
  objects: number;
  /** Date.now() at the end of the last run that wrote objects. */
  lastObjectWriteAt: number;
}

export async function benchReconcile200(kc: KubeConfig, client: ClientRequestCounter): Promise<Reconcile200> {
  const env = await startReconcileEnv(kc, 'bench-reconcile200');
  try {
    const objects = objectCount(MIX_200);
    const repo = await env.repo('render-200', renderFiles('app', MIX_200));
    await env.api.create('Release', env.ns.name, RELEASE_200, {
      cluster: { name: 'local' },
      source: { git: { url: repo.url, ref: { branch: 'main' }, path: 'app' } },
      healthAssessment: {},
    });
    // Ports are built once, as a function container does, and count the target-cluster requests.
    const counter = { count: 0 };
    const ports = env.ports({ wiring: { requestCounter: counter } });
    let lastObjectWriteAt = Date.now();

    const run = async (label: string, with_ = ports): Promise<RunReport> => {
      counter.count = 0;
      log(`reconcile200: ${label}`);
      const measured = await measureRequests(kc, client, () => env.reconcile(RELEASE_200, with_));
      const { outcome, release } = measured.value;
      if (measured.apiserver.objectWrites > 0) lastObjectWriteAt = Date.now();
      // Server-side apply is counted as verb APPLY (a PATCH with the apply-patch content type).
      const statusApplies =
        (measured.apiserver.byResource['APPLY releases/status'] ?? 0) +
        (measured.apiserver.byResource['PATCH releases/status'] ?? 0);
      return {
        wallMs: measured.wallMs,
        outcome: describeOutcome(outcome),
        applied: appliedOf(release),
        phase: release.status?.lastAttempted?.phase,
        rollout: release.status?.rollout?.state,
        targetClusterRequests: counter.count,
        client: { ...measured.client, withoutHarness: measured.client.total - HARNESS_GETS },
        apiserver: {
          ...measured.apiserver,
          withoutHarness: measured.apiserver.total - HARNESS_GETS,
          statusApplies,
        },
        apiserverOwn: measured.apiserverOwn,
      };
    };

    const first = await run('first run (empty namespace)');
    // No kube-controller-manager runs: play the Deployment controller so the workloads become available.
    const deployments = await markDeploymentsAvailable(kc, env.ns.name);
    const second = await run('second run (nothing changed)');
    const third = await run('third run (nothing changed, rollout already finished)');
    // Impersonation is headers only: the same steady state as the Release's ServiceAccount.
    const asServiceAccount = await steadyStateAsServiceAccount(kc, env, (label, p) => run(label, p), counter);

    const firstApplied = first.applied.status === 'True';
    const met =
      firstApplied &&
      second.apiserver.objectWrites === 0 &&
      second.apiserver.statusWrites === 1 &&
      second.apiserver.statusApplies === 1;
    return {
      env,
      objects,
      lastObjectWriteAt,
      report: {
        objects,
        mix: MIX_200,
        targets: {
          unchangedRun: {
            objectWrites: 0,
            statusApplies: 1,
            note: 'counted by the API server (apiserver_request_total): object writes = POST/PUT/PATCH/APPLY/DELETE without dryRun and not on a status subresource; status apply = server-side apply of releases/status',
          },
        },
        measured: {
          unchangedRun: {
            objectWrites: second.apiserver.objectWrites,
            statusApplies: second.apiserver.statusApplies,
            statusWrites: second.apiserver.statusWrites,
          },
        },
        met,
        notes: [
          `between the first and the second run the bench set status.availableReplicas on the ${deployments} Deployments (no controller-manager runs), so the second run finishes the rollout (wave health check reads every object); the third run is the steady state`,
          `counts include ${HARNESS_GETS} GET releases made by the test harness around the handler (withoutHarness subtracts them)`,
          'apiserver_request_total has no non-resource requests (discovery, /version); the client-side count has them',
        ],
        impersonation: {
          note: 'steady state (nothing changed) without and with spec.serviceAccountName (impersonated on the management cluster, installation defaultServiceAccount set); target-cluster requests counted by the client',
          withoutServiceAccount: {
            targetClusterRequests: third.targetClusterRequests,
            apiserver: third.apiserver.withoutHarness,
          },
          withServiceAccount: {
            targetClusterRequests: asServiceAccount.targetClusterRequests,
            apiserver: asServiceAccount.apiserver.withoutHarness,
            applied: asServiceAccount.applied,
          },
          addedRequests: asServiceAccount.targetClusterRequests - third.targetClusterRequests,
        },
        firstRun: first,
        secondRun: second,
        thirdRun: third,
      },
    };
  } catch (error) {
    await env.close().catch(() => undefined);
    throw error;
  }
}

/** The Release acts as a ServiceAccount with `admin` in its namespace; one warm-up run (its ports are new), then the measured one. */
async function steadyStateAsServiceAccount(
  kc: KubeConfig,
  env: ReconcileEnv,
  run: (label: string, ports: ReturnType<typeof env.ports>) => Promise<RunReport>,
  counter: { count: number },
): Promise<RunReport> {
  const ns = env.ns.name;
  await kc
    .makeApiClient(CoreV1Api)
    .createNamespacedServiceAccount({ namespace: ns, body: { metadata: { name: 'deployer' } } });
  await kc.makeApiClient(RbacAuthorizationV1Api).createNamespacedRoleBinding({
    namespace: ns,
    body: {
      metadata: { name: 'deployer' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'admin' },
      subjects: [{ kind: 'ServiceAccount', name: 'deployer', namespace: ns }],
    },
  });
  await env.api.patchMerge('Release', ns, RELEASE_200, { spec: { serviceAccountName: 'deployer' } });
  const ports = env.ports({
    wiring: { requestCounter: counter, tenancy: { ...DEFAULT_TENANCY, defaultServiceAccount: 'default' } },
  });
  await run('as ServiceAccount: warm-up (new ports)', ports);
  return run('as ServiceAccount: steady state', ports);
}

export function describeOutcome(outcome: Outcome): string {
  switch (outcome.kind) {
    case 'requeueAfter':
      return `requeueAfter ${outcome.delayMs} ms (${outcome.reason})`;
    case 'retry':
      return `retry (${outcome.error.message})`;
    case 'dropped':
      return `dropped (${outcome.reason})`;
    default:
      return outcome.kind;
  }
}

function appliedOf(release: Release): { status: string | undefined; reason: string | undefined } {
  const applied = release.status?.conditions?.find((c) => c.type === 'Applied');
  return { status: applied?.status, reason: applied?.reason };
}
