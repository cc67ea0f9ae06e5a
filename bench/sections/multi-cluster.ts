// multiCluster: Releases on remote Clusters reached through kubeconfig Secrets with
// a token user, through the production path in one process (dev/runtime.ts: relay → fauxqs
// SQS → pollers → the real function handlers): 3 target kube-apiservers × `perCluster`
// Releases against 1 target × (3 × perCluster), back to back on the same management cluster.
// Reported per layout: time from the first create to every Release Applied (seen by a watch),
// and the requests per Release on the management apiserver and on the targets
// (apiserver_request_total growth, without the servers' own work), until all are Applied and
// after a settle period in which the drift and health loops run too.
// The app is a ConfigMap and a Service per Release (own target namespace): the targets are
// bare apiservers (no controllers), so a Deployment would keep its rollout Progressing and the
// 10-s rechecks would blur what the layout costs.
import { setTimeout as sleep } from 'node:timers/promises';
import { CoreV1Api, KubeConfig, RbacAuthorizationV1Api } from '@kubernetes/client-node';
import { stringify } from 'yaml';
import { startControlPlane, type ControlPlane } from '../../dev/control-plane.ts';
import { startConvoyRuntime } from '../../dev/runtime.ts';
import { createLogger } from '../../platform/logger.ts';
import { startReconcileEnv, type ReconcileEnv } from '../../test/harness/reconcile-env.ts';
import {
  diffRequests,
  isApiserverOwn,
  readRequestTotals,
  summarize,
  type RequestSnapshot,
  type RequestSummary,
} from '../lib/apiserver-metrics.ts';
import { watchApplied } from '../lib/kube.ts';
import { ms, percentile } from '../lib/stats.ts';
import { log } from '../lib/stdout.ts';

const DEPLOYER = 'convoy-deployer';
const TARGET_COUNT = 3;
const APPLIED_TIMEOUT_MS = 600_000;
const SETTLE_MS = 20_000;

export interface MultiClusterOptions {
  /** Releases per target in the 3-target layout; the 1-target layout gets 3 × this many. */
  perCluster: number;
}

interface Target {
  name: string;
  cp: ControlPlane;
  kc: KubeConfig;
}

function kubeconfigYaml(cp: ControlPlane): string {
  return stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [
      {
        name: 't',
        cluster: {
          server: cp.server,
          'certificate-authority-data': Buffer.from(cp.caPem).toString('base64'),
        },
      },
    ],
    users: [{ name: 'u', user: { token: cp.tokens[DEPLOYER] } }],
    contexts: [{ name: 't', context: { cluster: 't', user: 'u' } }],
    'current-context': 't',
  });
}

const appYaml = (name: string): string => `apiVersion: v1
kind: ConfigMap
metadata: {name: ${name}-config}
data: {LOG_LEVEL: info, GREETING: hello}
---
apiVersion: v1
kind: Service
metadata: {name: ${name}}
spec:
  selector: {app: ${name}}
  ports: [{port: 80, targetPort: 8080}]
`;

async function startTarget(name: string): Promise<Target> {
  const cp = await startControlPlane({ controllers: false, extraUsers: [{ name: DEPLOYER }] });
  const kc = new KubeConfig();
  kc.loadFromString(cp.kubeconfigYaml);
  // The deployer may do anything on its target: this bench measures cost, not authorization.
  await kc.makeApiClient(RbacAuthorizationV1Api).createClusterRoleBinding({
    body: {
      metadata: { name: 'convoy-deployer' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'cluster-admin' },
      subjects: [{ kind: 'User', name: DEPLOYER, apiGroup: 'rbac.authorization.k8s.io' }],
    },
  });
  return { name, cp, kc };
}

const perRelease = (s: RequestSummary, n: number) => ({
  total: ms(s.total / n),
  byVerb: Object.fromEntries(Object.entries(s.byVerb).map(([k, v]) => [k, ms(v / n)])),
});

async function totals(kcs: readonly KubeConfig[]): Promise<RequestSnapshot[]> {
  return Promise.all(kcs.map((kc) => readRequestTotals(kc)));
}

function grown(before: readonly RequestSnapshot[], after: readonly RequestSnapshot[]): RequestSummary {
  return summarize(
    before.flatMap((b, i) => diffRequests(b, after[i] ?? new Map())).filter((s) => !isApiserverOwn(s)),
  );
}

/** One layout: `releasesPerTarget` Releases on each of `targets`, all created at once. */
async function runLayout(
  label: string,
  mgmt: KubeConfig,
  env: ReconcileEnv,
  targets: readonly Target[],
  releasesPerTarget: number,
) {
  const ns = env.ns.name;
  const core = mgmt.makeApiClient(CoreV1Api);
  for (const t of targets) {
    await core.createNamespacedSecret({
      namespace: ns,
      body: { metadata: { name: `kubeconfig-${t.name}` }, stringData: { value: kubeconfigYaml(t.cp) } },
    });
    await env.api.create('Cluster', ns, t.name, {
      kubeConfig: { secretRef: { name: `kubeconfig-${t.name}` } },
    });
  }
  const names: { name: string; target: Target; targetNamespace: string }[] = [];
  for (const t of targets) {
    for (let i = 0; i < releasesPerTarget; i++)
      names.push({
        name: `${t.name}-${String(i).padStart(4, '0')}`,
        target: t,
        targetNamespace: `${label}-${i}`,
      });
  }
  // Target namespaces exist beforehand (the Releases do not create namespaces).
  for (const t of targets) {
    const tcore = t.kc.makeApiClient(CoreV1Api);
    for (let i = 0; i < releasesPerTarget; i += 50) {
      await Promise.all(
        Array.from({ length: Math.min(50, releasesPerTarget - i) }, (_, j) =>
          tcore.createNamespace({ body: { metadata: { name: `${label}-${i + j}` } } }),
        ),
      );
    }
  }
  const repo = await env.repo(`app-${label}`, { 'app.yaml': appYaml('app') });

  const logger = createLogger({
    base: { app: 'convoy-bench' },
    level: 'warn',
    write: (line) => process.stderr.write(`${line}\n`),
  });
  const runtime = await startConvoyRuntime({
    kc: mgmt,
    logger,
    namespace: `convoy-bench-${label}`,
    onlyNamespaces: [ns],
  });
  const watchErrors: string[] = [];
  const applied = await watchApplied(mgmt, ns, (e) =>
    watchErrors.push(e instanceof Error ? e.message : String(e)),
  );
  try {
    const kcs = [mgmt, ...targets.map((t) => t.kc)];
    const before = await totals(kcs);
    const started = performance.now();
    log(`multiCluster ${label}: ${names.length} Releases on ${targets.length} target(s)`);
    for (let i = 0; i < names.length; i += 50) {
      await Promise.all(
        names.slice(i, i + 50).map(({ name, target, targetNamespace }) =>
          env.api.create('Release', ns, name, {
            cluster: { name: target.name },
            targetNamespace,
            source: { git: { url: repo.url, ref: { branch: 'main' } } },
          }),
        ),
      );
    }
    const createsMs = ms(performance.now() - started);
    let complete = true;
    try {
      await applied.waitForAll(
        names.map((n) => n.name),
        APPLIED_TIMEOUT_MS,
      );
    } catch {
      complete = false;
    }
    const appliedTimes = names
      .map((n) => applied.appliedAt.get(n.name))
      .filter((t): t is number => t !== undefined);
    const allAppliedMs = complete ? ms(Math.max(...appliedTimes) - started) : undefined;
    const atApplied = await totals(kcs);
    await sleep(SETTLE_MS);
    const settled = await totals(kcs);
    const n = names.length;
    const mgmtUntilApplied = grown(before.slice(0, 1), atApplied.slice(0, 1));
    const targetUntilApplied = grown(before.slice(1), atApplied.slice(1));
    const mgmtSettled = grown(before.slice(0, 1), settled.slice(0, 1));
    const targetSettled = grown(before.slice(1), settled.slice(1));
    return {
      releases: n,
      targets: targets.length,
      complete,
      applied: appliedTimes.length,
      createsMs,
      allAppliedMs,
      appliedP50Ms: percentile(
        appliedTimes.map((t) => ms(t - started)),
        50,
      ),
      requestsPerRelease: {
        untilAllApplied: {
          management: perRelease(mgmtUntilApplied, n),
          targets: perRelease(targetUntilApplied, n),
          total: ms((mgmtUntilApplied.total + targetUntilApplied.total) / n),
        },
        afterSettle: {
          settleMs: SETTLE_MS,
          management: perRelease(mgmtSettled, n),
          targets: perRelease(targetSettled, n),
          total: ms((mgmtSettled.total + targetSettled.total) / n),
        },
      },
      perTargetObjectWrites: targets.map((t, i) => ({
        target: t.name,
        ...summarizeOne(before[i + 1], settled[i + 1]),
      })),
      watchErrors,
    };
  } finally {
    applied.stop();
    await runtime.stop();
  }
}

function summarizeOne(before: RequestSnapshot | undefined, after: RequestSnapshot | undefined) {
  const s = summarize(
    diffRequests(before ?? new Map(), after ?? new Map()).filter((x) => !isApiserverOwn(x)),
  );
  return { requests: s.total, objectWrites: s.objectWrites, dryRuns: s.dryRuns };
}

export async function benchMultiCluster(
  mgmt: KubeConfig,
  options: MultiClusterOptions,
): Promise<Record<string, unknown>> {
  const { perCluster } = options;
  log(`multiCluster: starting ${TARGET_COUNT} target kube-apiservers`);
  const targets = await Promise.all(Array.from({ length: TARGET_COUNT }, (_, i) => startTarget(`t${i}`)));
  const envs: ReconcileEnv[] = [];
  try {
    const oneEnv = await startReconcileEnv(mgmt, 'bench-mc-one');
    envs.push(oneEnv);
    const one = await runLayout('one', mgmt, oneEnv, targets.slice(0, 1), TARGET_COUNT * perCluster);
    const threeEnv = await startReconcileEnv(mgmt, 'bench-mc-three');
    envs.push(threeEnv);
    const three = await runLayout('three', mgmt, threeEnv, targets, perCluster);
    const ratio = (a: number | undefined, b: number | undefined) =>
      a !== undefined && b !== undefined && b > 0 ? Math.round((a / b) * 100) / 100 : undefined;
    return {
      how: 'dev/runtime.ts composition (relay, fauxqs SQS, one poller per queue, the real handlers) on the bench control plane as the management cluster; each target a bare kube-apiserver + etcd reached through a kubeconfig Secret with a token user (no impersonation on remote Clusters). Both layouts create all Releases at once (50 concurrent creates), one Git repository. allAppliedMs = first create → the watch has seen every Release Applied True.',
      app: 'ConfigMap + Service per Release, own target namespace',
      oneCluster: one,
      threeClusters: three,
      ratios: {
        wallThreeOverOne: ratio(three.allAppliedMs, one.allAppliedMs),
        requestsPerReleaseThreeOverOne: ratio(
          three.requestsPerRelease.untilAllApplied.total,
          one.requestsPerRelease.untilAllApplied.total,
        ),
      },
      met: one.complete && three.complete,
    };
  } finally {
    for (const env of envs.reverse())
      await env.close().catch((e: unknown) => log(`multiCluster cleanup failed: ${String(e)}`));
    await Promise.all(targets.map((t) => t.cp.stop()));
  }
}
