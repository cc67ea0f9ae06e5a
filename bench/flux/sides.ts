// The two sides of the Flux bench on one control plane, one after the other, with the same
// workload: N apps (ConfigMap + Deployment + Service), each in its own namespace, from one Git
// repository served by convoy's git http-backend server.
// - Flux: source-controller + kustomize-controller with the flags of Flux's own Deployment
//   manifests (log level info; leader election off, see MANIFEST_ARGS) and otherwise their defaults, plus what
//   running outside a cluster needs (kubeconfig, loopback addresses for the artifact server,
//   metrics and health), one GitRepository and N Kustomizations (interval 1h, wait false, no health
//   checks); done when every Kustomization is Ready.
// - convoy: the `convoy dev` runtime in a process of its own (bench/flux/convoy-side.ts), N
//   Releases (interval 1h, no healthAssessment); done when every Release is Applied.
// Each side runs as its own identity (a static-token user in system:masters), which the audit
// log tells apart.
import { mkdir, readFile, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { CoreV1Api, CustomObjectsApi, type KubeConfig } from '@kubernetes/client-node';
import type { ControlPlane } from '../../dev/control-plane.ts';
import { freePorts } from '../../dev/control-plane/processes.ts';
import { API_GROUP, API_VERSION } from '../../domain/api/common.ts';
import { conditionTrue, watchCondition, type WatchedObject } from '../lib/condition-watch.ts';
import { cpuSnapshot, usageOf } from '../lib/proc-stats.ts';
import { log } from '../lib/stdout.ts';
import { inPool, startSideProcess, waitUntil, type SideProcess } from './side-process.ts';

export const FLUX_USER = 'bench-flux';
export const CONVOY_USER = 'bench-convoy';
/** Creates in flight at once (namespaces, Kustomizations, Releases). */
const CREATE_CONCURRENCY = 8;
/** Flux has nothing left to do once its Kustomizations are Ready (wait: false); this long is watched anyway. */
const FLUX_SETTLE_MS = 10_000;
/** convoy's rollout recheck, drift and health after the last Applied are watched for at most this long. */
const CONVOY_SETTLE_MAX_MS = 120_000;
/**
 * The flags of both controllers' Deployments in Flux's own manifests (config/manager/deployment.yaml)
 * but --enable-leader-election: outside a cluster controller-runtime cannot tell the election's
 * namespace ("not running in-cluster") and Flux has no flag for it, so leader election stays off.
 */
const MANIFEST_ARGS = ['--watch-all-namespaces', '--log-level=info', '--log-encoding=json'];

export interface SideContext {
  readonly cp: ControlPlane;
  /** Admin client (the bench's own requests are not in the audit log). */
  readonly kc: KubeConfig;
  readonly repoUrl: string;
  readonly n: number;
  readonly timeoutMs: number;
}

export interface SideResult {
  /** Date.now() at the first create of the workload, when every object was Ready/Applied, and when the side had settled. */
  readonly t0: number;
  readonly readyAt: number;
  readonly settledAt: number;
  readonly wallMs: number;
  /** False when the side had not settled within its limit (toSettled then ends at the limit). */
  readonly settled: boolean;
  /** From t0 to ready and to settled: CPU seconds of the side's processes, and their summed peak RSS. */
  readonly cpuS: { toReady: number; toSettled: number };
  readonly peakRssMiB: number;
  readonly processes: Record<string, { cpuS: number; peakRssMiB: number }>;
  /** Ready/Applied after the first create: p50 and max. */
  readonly readyAfterMs: { p50: number; max: number };
  /**
   * When each object's first deploy was over (`namespace/name` → Date.now()): Flux its Ready;
   * convoy Applied with InSync and Healthy reported (all three loops' first runs) — or its
   * Applied time when the observers had not reported by the end.
   */
  readonly firstDeployDoneAt: ReadonlyMap<string, number>;
  /** metadata.uid → `namespace/name` of every watched object. */
  readonly keyOfUid: ReadonlyMap<string, string>;
}

/** A kubeconfig whose current context is `user` (a token user of the control plane). */
async function kubeconfigFor(cp: ControlPlane, user: string): Promise<string> {
  const path = join(cp.dir, `kubeconfig-${user}`);
  await writeFile(path, cp.kubeconfigYaml.replace(/^current-context: .*$/m, `current-context: ${user}`), {
    mode: 0o600,
  });
  return path;
}

/** The spec of the one Release per namespace both the convoy side and the reportOnce floor create. */
export function benchReleaseSpec(repoUrl: string): Record<string, unknown> {
  return {
    cluster: { name: 'local' },
    source: { git: { url: repoUrl, ref: { branch: 'main' }, path: 'app' } },
    syncPolicy: { interval: '1h' },
  };
}

export async function createNamespaces(kc: KubeConfig, names: readonly string[]): Promise<void> {
  const core = kc.makeApiClient(CoreV1Api);
  await inPool(names, CREATE_CONCURRENCY, async (name) => {
    await core.createNamespace({ body: { metadata: { name } } });
  });
}

async function measure(
  ctx: SideContext,
  processes: readonly SideProcess[],
  watchPath: string,
  predicate: (o: WatchedObject) => boolean,
  create: () => Promise<void>,
  settle: (latest: ReadonlyMap<string, WatchedObject>) => Promise<boolean>,
  firstDeployDone?: (o: WatchedObject) => boolean,
): Promise<SideResult> {
  const watch = await watchCondition(
    ctx.kc,
    watchPath,
    predicate,
    (e) => log(`flux bench: watch ${watchPath}: ${String(e)}`),
    firstDeployDone,
  );
  try {
    const pids = processes.map((p) => p.pid);
    const cpu0 = cpuSnapshot(pids);
    const t0 = Date.now();
    await create();
    await watch.waitForCount(ctx.n, ctx.timeoutMs);
    const readyAt = Math.max(...watch.reachedAt.values());
    const atReady = usageOf(pids, cpu0);
    const settled = await settle(watch.latest);
    const settledAt = Date.now();
    const atSettled = usageOf(pids, cpu0);
    const after = [...watch.reachedAt.values()].map((t) => t - t0).sort((a, b) => a - b);
    return {
      t0,
      readyAt,
      settledAt,
      wallMs: readyAt - t0,
      settled,
      cpuS: { toReady: atReady.total.cpuS, toSettled: atSettled.total.cpuS },
      peakRssMiB: atSettled.total.peakRssMiB,
      processes: Object.fromEntries(
        processes.map((p) => [p.name, atSettled.byPid[String(p.pid)] ?? { cpuS: 0, peakRssMiB: 0 }]),
      ),
      readyAfterMs: { p50: after[Math.floor(after.length / 2)] ?? 0, max: after[after.length - 1] ?? 0 },
      firstDeployDoneAt: new Map(
        [...watch.reachedAt].map(([key, at]) => [
          key,
          firstDeployDone === undefined ? at : (watch.alsoReachedAt.get(key) ?? at),
        ]),
      ),
      keyOfUid: new Map(
        [...watch.latest].flatMap(([key, o]) =>
          o.metadata?.uid === undefined ? [] : [[o.metadata.uid, key] as const],
        ),
      ),
    };
  } finally {
    watch.stop();
  }
}

export async function runFluxSide(ctx: SideContext, binDir: string, crdNote: string): Promise<SideResult> {
  const { cp, kc, n } = ctx;
  log(`flux bench: Flux side, N=${n} (${crdNote})`);
  const kubeconfig = await kubeconfigFor(cp, FLUX_USER);
  await createNamespaces(kc, ['flux-system', ...Array.from({ length: n }, (_, i) => `flux-${i}`)]);
  const [storagePort, scMetrics, scHealth, kcMetrics, kcHealth] = await freePorts(5);
  const storage = join(cp.dir, 'flux-storage');
  await mkdir(storage);
  const env = { ...process.env, KUBECONFIG: kubeconfig, RUNTIME_NAMESPACE: 'flux-system' };
  const pidsFile = join(cp.dir, 'pids');
  // Started through links in the control plane's folder: the reaper kills only processes whose command line names it.
  for (const bin of ['source-controller', 'kustomize-controller'])
    await symlink(join(binDir, bin), join(cp.dir, bin));
  const source = startSideProcess({
    name: 'source-controller',
    file: join(cp.dir, 'source-controller'),
    args: [
      ...MANIFEST_ARGS,
      `--storage-path=${storage}`,
      `--storage-addr=127.0.0.1:${storagePort}`,
      `--storage-adv-addr=127.0.0.1:${storagePort}`,
      `--metrics-addr=127.0.0.1:${scMetrics}`,
      `--health-addr=127.0.0.1:${scHealth}`,
    ],
    env,
    log: join(cp.dir, 'source-controller.log'),
    pidsFile,
  });
  const kustomize = startSideProcess({
    name: 'kustomize-controller',
    file: join(cp.dir, 'kustomize-controller'),
    args: [...MANIFEST_ARGS, `--metrics-addr=127.0.0.1:${kcMetrics}`, `--health-addr=127.0.0.1:${kcHealth}`],
    env,
    log: join(cp.dir, 'kustomize-controller.log'),
    pidsFile,
  });
  const processes = [source, kustomize];
  try {
    const ready = (port: number | undefined) => async () =>
      (await fetch(`http://127.0.0.1:${port}/readyz`)).ok;
    await waitUntil('source-controller /readyz', ready(scHealth), processes, 60_000);
    await waitUntil('kustomize-controller /readyz', ready(kcHealth), processes, 60_000);
    await sleep(2_000); // informers listed
    const custom = kc.makeApiClient(CustomObjectsApi);
    const names = Array.from({ length: n }, (_, i) => `flux-${i}`);
    return await measure(
      ctx,
      processes,
      '/apis/kustomize.toolkit.fluxcd.io/v1/kustomizations',
      (o) => conditionTrue(o, 'Ready'),
      async () => {
        await custom.createNamespacedCustomObject({
          group: 'source.toolkit.fluxcd.io',
          version: 'v1',
          namespace: 'flux-system',
          plural: 'gitrepositories',
          body: {
            apiVersion: 'source.toolkit.fluxcd.io/v1',
            kind: 'GitRepository',
            metadata: { name: 'app', namespace: 'flux-system' },
            spec: { interval: '1h', url: ctx.repoUrl, ref: { branch: 'main' } },
          },
        });
        await inPool(names, CREATE_CONCURRENCY, async (namespace) => {
          await custom.createNamespacedCustomObject({
            group: 'kustomize.toolkit.fluxcd.io',
            version: 'v1',
            namespace,
            plural: 'kustomizations',
            body: {
              apiVersion: 'kustomize.toolkit.fluxcd.io/v1',
              kind: 'Kustomization',
              metadata: { name: 'app', namespace },
              spec: {
                interval: '1h',
                path: './app',
                prune: true,
                wait: false,
                targetNamespace: namespace,
                sourceRef: { kind: 'GitRepository', name: 'app', namespace: 'flux-system' },
              },
            },
          });
        });
      },
      () => sleep(FLUX_SETTLE_MS).then(() => true),
    );
  } finally {
    await Promise.all(processes.map((p) => p.stop()));
  }
}

/** Condition `type` is present (any status) for the object's current generation. */
function reported(o: WatchedObject, type: string): boolean {
  return (
    o.status?.conditions?.some(
      (c) => c.type === type && (c.observedGeneration ?? 0) >= (o.metadata?.generation ?? 1),
    ) ?? false
  );
}

/** Applied, and both observers have reported on the current generation: the three loops' first runs are over. */
function convoyFirstDeployDone(o: WatchedObject): boolean {
  return conditionTrue(o, 'Applied') && reported(o, 'InSync') && reported(o, 'Healthy');
}

/** Every Release's rollout is over and both observers have reported on its current generation. */
function convoySettled(o: WatchedObject): boolean {
  const rollout = o.status?.['rollout'] as { state?: string } | undefined;
  return rollout?.state !== 'Progressing' && reported(o, 'InSync') && reported(o, 'Healthy');
}

export async function runConvoySide(ctx: SideContext, root: string): Promise<SideResult> {
  const { cp, kc, n } = ctx;
  log(`flux bench: convoy side, N=${n}`);
  const kubeconfig = await kubeconfigFor(cp, CONVOY_USER);
  const names = Array.from({ length: n }, (_, i) => `convoy-${i}`);
  await createNamespaces(kc, names);
  const custom = kc.makeApiClient(CustomObjectsApi);
  const convoyObject = (kind: string, namespace: string, spec: unknown) => ({
    group: API_GROUP,
    version: API_VERSION,
    namespace,
    plural: `${kind.toLowerCase()}s`,
    body: {
      apiVersion: `${API_GROUP}/${API_VERSION}`,
      kind,
      metadata: { name: kind === 'Cluster' ? 'local' : 'app', namespace },
      spec,
    },
  });
  await inPool(names, CREATE_CONCURRENCY, async (namespace) => {
    await custom.createNamespacedCustomObject(convoyObject('Cluster', namespace, { inCluster: true }));
  });
  const side = startSideProcess({
    name: 'convoy (relay + functions + fauxqs)',
    file: process.execPath,
    args: [join(root, 'bench', 'flux', 'convoy-side.ts'), cp.dir],
    env: { ...process.env, KUBECONFIG: kubeconfig },
    log: join(cp.dir, 'convoy-side.log'),
    pidsFile: join(cp.dir, 'pids'),
  });
  try {
    // The child writes `ready` once its relay has listed everything; its stdout goes to its log.
    await waitUntil(
      'the convoy runtime ready',
      async () => /^ready$/m.test(await readFile(side.log, 'utf8')),
      [side],
      90_000,
    );
    await sleep(1_000);
    return await measure(
      ctx,
      [side],
      `/apis/${API_GROUP}/${API_VERSION}/releases`,
      (o) => conditionTrue(o, 'Applied'),
      () =>
        inPool(names, CREATE_CONCURRENCY, async (namespace) => {
          await custom.createNamespacedCustomObject(
            convoyObject('Release', namespace, benchReleaseSpec(ctx.repoUrl)),
          );
        }),
      async (latest) => {
        const deadline = Date.now() + CONVOY_SETTLE_MAX_MS;
        while (Date.now() < deadline) {
          const settled = [...latest.values()].filter(convoySettled).length;
          if (settled >= n) return true;
          await sleep(500);
        }
        log(
          `flux bench: not every convoy Release settled (rollout over, InSync and Healthy) within ${CONVOY_SETTLE_MAX_MS} ms of the last Applied`,
        );
        return false;
      },
      convoyFirstDeployDone,
    );
  } finally {
    await side.stop(10_000);
  }
}
