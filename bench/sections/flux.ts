// flux: convoy side by side with Flux. Builds Flux's source-controller v1.9.1 and
// kustomize-controller v1.9.4 from their released source (bench/flux/build-flux.sh, cached in
// ~/.cache/convoy/flux; never part of `npm test`), then for each N a fresh embedded cluster
// (etcd, kube-apiserver with an audit log of the two sides' identities, kube-controller-manager,
// kube-scheduler, KWOK nodes: both sides get the same real Deployment availability) runs the
// Flux side and then the convoy side (bench/flux/sides.ts) and reports per side: wall time to
// all Ready/Applied, requests per Release by verb (audit log, per identity), controller CPU and
// peak RSS, and the ratios convoy/Flux.
import { execFile } from 'node:child_process';
import { copyFile, mkdir, mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { KubeConfig } from '@kubernetes/client-node';
import { installCrds, startControlPlane } from '../../dev/control-plane.ts';
import { startGitHttpServer } from '../../dev/git-http-server.ts';
import { createRepo } from '../../test/harness/git-fixtures.ts';
import {
  auditLogArgs,
  firstDeployPerRelease,
  perRelease,
  readAuditLog,
  summarizeAudit,
  type AuditRequest,
} from '../lib/audit-log.ts';
import {
  readRequestTotals,
  diffRequests,
  summarize,
  isApiserverOwn,
  type RequestSnapshot,
} from '../lib/apiserver-metrics.ts';
import { log } from '../lib/stdout.ts';
import {
  CONVOY_USER,
  createNamespaces,
  FLUX_USER,
  runConvoySide,
  runFluxSide,
  type SideResult,
} from '../flux/sides.ts';
import { runFloorSide, type FloorResult } from '../flux/floor-side.ts';
import { appFiles } from './per-release.ts';

const execFileAsync = promisify(execFile);

export const FLUX_VERSIONS = { sourceController: 'v1.9.1', kustomizeController: 'v1.9.4' };
/** The targets at N = 1000. */
/** Deploy burst: wall ≤ 0.5× Flux's, requests per Release until Applied ≤ 0.6× (the first targets asked 0.4 / 0.75). */
export const FLUX_TARGETS = { n: 1000, wallRatio: 0.5, requestsRatio: 0.6 };
/** Apps in flight at once on the floor (bench/flux/floor-side.ts). */
const FLOOR_CONCURRENCY = 32;

/** Runs bench/flux/build-flux.sh (cached after the first build); the folder holding both binaries. */
async function buildFlux(root: string): Promise<{ binDir: string; buildMs: number }> {
  const t = performance.now();
  const { stdout, stderr } = await execFileAsync('bash', [join(root, 'bench', 'flux', 'build-flux.sh')], {
    maxBuffer: 64 * 1024 * 1024,
  });
  if (stderr.trim() !== '') log(stderr.trim().split('\n').slice(-5).join('\n'));
  return { binDir: stdout.trim().split('\n').pop() ?? '', buildMs: Math.round(performance.now() - t) };
}

const fluxSourceDir = (name: string, tag: string): string =>
  join(
    process.env['XDG_CACHE_HOME'] ?? join(process.env['HOME'] ?? '/root', '.cache'),
    'convoy',
    'flux',
    'src',
    `${name}-${tag}`,
  );

interface SideReport {
  wallS: number;
  readyAfterMs: SideResult['readyAfterMs'];
  requestsPerRelease: {
    toReady: ReturnType<typeof perRelease>;
    toSettled: ReturnType<typeof perRelease>;
    firstDeploy: ReturnType<typeof perRelease>;
  };
  cpuS: SideResult['cpuS'];
  peakRssMiB: number;
  processes: SideResult['processes'];
  settledAfterS: number;
  settled: boolean;
  /** Every client's requests meanwhile (apiserver_request_total, kube-controller-manager, scheduler and KWOK included). */
  apiserverRequestTotalAllClients: number;
}

/**
 * The Release (watch key) a request belongs to: its namespace (each app has its own; the
 * installation's and Flux's own namespaces belong to none), or for convoy's per-run Leases
 * (`convoy-<loop>-<Release uid>` in convoy-system) the Release of that uid.
 */
function releaseOfRequest(side: SideResult, prefix: string): (r: AuditRequest) => string | undefined {
  return (r) => {
    if (r.resource === 'leases') {
      const uid = /^convoy-(?:reconcile|drift|health)-(.+)$/.exec(r.name)?.[1];
      if (uid !== undefined) return side.keyOfUid.get(uid);
    }
    return r.namespace.startsWith(prefix) && /^\d+$/.test(r.namespace.slice(prefix.length))
      ? `${r.namespace}/app`
      : undefined;
  };
}

function sideReport(
  side: SideResult,
  audit: readonly AuditRequest[],
  user: string,
  n: number,
  allClients: number,
  prefix: string,
): SideReport {
  return {
    wallS: Math.round(side.wallMs / 100) / 10,
    readyAfterMs: side.readyAfterMs,
    requestsPerRelease: {
      toReady: perRelease(summarizeAudit(audit, user, side.t0, side.readyAt), n),
      toSettled: perRelease(summarizeAudit(audit, user, side.t0, side.settledAt), n),
      firstDeploy: firstDeployPerRelease(
        audit,
        user,
        side.t0,
        side.firstDeployDoneAt,
        releaseOfRequest(side, prefix),
      ),
    },
    cpuS: side.cpuS,
    peakRssMiB: side.peakRssMiB,
    processes: side.processes,
    settledAfterS: Math.round((side.settledAt - side.t0) / 100) / 10,
    settled: side.settled,
    apiserverRequestTotalAllClients: allClients,
  };
}

/** Enough simulated Nodes (110 Pods each) for `apps` one-replica Deployments. */
const nodesFor = (apps: number): number => Math.ceil(apps / 100) + 1;

type FloorVariant = 'applyOnly' | 'dryRunFirst' | 'reportOnce';

const FLOOR_VARIANTS: Record<FloorVariant, { dryRunFirst: boolean; what: string }> = {
  applyOnly: { dryRunFirst: false, what: '' },
  dryRunFirst: { dryRunFirst: true, what: ' after a dry run' },
  reportOnce: { dryRunFirst: true, what: ' after a dry run, creating a Release and writing its status once' },
};

/**
 * The floor at N: the bench itself applies the N apps (no controller) on an embedded cluster of
 * its own with the same controllers and as many Nodes as the side-by-side cluster.
 */
async function floorAt(root: string, n: number, variant: FloorVariant): Promise<FloorResult> {
  const { dryRunFirst, what } = FLOOR_VARIANTS[variant];
  log(
    `flux bench: N=${n}: the floor (the bench applies the apps itself${what}, ${FLOOR_CONCURRENCY} in flight) on a cluster of its own`,
  );
  const cp = await startControlPlane({ nodes: nodesFor(2 * n), readyTimeoutMs: 120_000 });
  try {
    const kc = new KubeConfig();
    kc.loadFromFile(cp.kubeconfigPath);
    const namespaces = Array.from({ length: n }, (_, i) => `floor-${i}`);
    await createNamespaces(kc, namespaces);
    // No controller runs here: the Releases only carry what the bench writes.
    if (variant === 'reportOnce') await installCrds(cp.kubeconfigPath, join(root, 'config', 'crds'));
    const reportOnce =
      variant === 'reportOnce' ? { reportOnce: { repoUrl: 'http://127.0.0.1:9/app.git' } } : {};
    return await runFloorSide(kc, appFiles('app'), namespaces, {
      concurrency: FLOOR_CONCURRENCY,
      dryRunFirst,
      ...reportOnce,
    });
  } finally {
    await cp.stop();
  }
}

const ratio = (a: number, b: number): number => (b === 0 ? Number.NaN : Math.round((a / b) * 1000) / 1000);

async function sideBySide(
  root: string,
  binDir: string,
  n: number,
  floors: Partial<Record<FloorVariant, FloorResult>>,
): Promise<Record<string, unknown>> {
  const auditDir = await mkdtemp(join(tmpdir(), 'convoy-bench-flux-audit-'));
  const gitRoot = await mkdtemp(join(tmpdir(), 'convoy-bench-flux-git-'));
  const audit = await auditLogArgs(auditDir, [FLUX_USER, CONVOY_USER]);
  // Enough simulated Nodes for both sides' Pods.
  const nodes = nodesFor(2 * n);
  log(`flux bench: N=${n}: starting an embedded cluster with ${nodes} KWOK nodes and an audit log`);
  const cp = await startControlPlane({
    extraUsers: [
      { name: FLUX_USER, groups: ['system:masters'] },
      { name: CONVOY_USER, groups: ['system:masters'] },
    ],
    nodes,
    apiserverArgs: audit.args,
    readyTimeoutMs: 120_000,
  });
  const git = await startGitHttpServer({ projectRoot: gitRoot });
  try {
    await installCrds(cp.kubeconfigPath, join(root, 'config', 'crds'));
    for (const [name, tag] of [
      ['source-controller', FLUX_VERSIONS.sourceController],
      ['kustomize-controller', FLUX_VERSIONS.kustomizeController],
    ] as const) {
      await installCrds(cp.kubeconfigPath, join(fluxSourceDir(name, tag), 'config', 'crd', 'bases'));
    }
    const kc = new KubeConfig();
    kc.loadFromFile(cp.kubeconfigPath);
    await createRepo(gitRoot, 'app', appFiles('app'));
    const ctx = { cp, kc, repoUrl: `${git.url}/app.git`, n, timeoutMs: Math.max(180_000, n * 600) };
    const totals = async (): Promise<RequestSnapshot> => readRequestTotals(kc);
    const allClients = (a: RequestSnapshot, b: RequestSnapshot): number =>
      summarize(diffRequests(a, b).filter((s) => !isApiserverOwn(s))).total;

    const fluxBefore = await totals();
    const flux = await runFluxSide(
      ctx,
      binDir,
      `Flux CRDs from ${fluxSourceDir('source-controller', FLUX_VERSIONS.sourceController)}`,
    );
    const fluxAfter = await totals();
    const fluxGit = git.requests.length;
    const convoy = await runConvoySide(ctx, root);
    const convoyAfter = await totals();
    const convoyGit = git.requests.length - fluxGit;
    // Watches are logged when they end: every side process has stopped by now.
    const events = await readAuditLog(audit.logPath);
    const f = sideReport(flux, events, FLUX_USER, n, allClients(fluxBefore, fluxAfter), 'flux-');
    const c = sideReport(convoy, events, CONVOY_USER, n, allClients(fluxAfter, convoyAfter), 'convoy-');
    return {
      n,
      simulatedNodes: nodes,
      flux: { ...f, gitServerRequests: fluxGit },
      convoy: { ...c, gitServerRequests: convoyGit },
      floor: Object.fromEntries(
        Object.entries(floors).flatMap(([variant, floor]) =>
          floor === undefined
            ? []
            : [
                [
                  variant,
                  {
                    ...floor,
                    overFlux: ratio(floor.wallS, f.wallS),
                    convoyOverFloor: ratio(c.wallS, floor.wallS),
                  },
                ],
              ],
        ),
      ),
      ratiosConvoyOverFlux: {
        wall: ratio(c.wallS, f.wallS),
        requestsPerRelease: ratio(c.requestsPerRelease.toReady.total, f.requestsPerRelease.toReady.total),
        requestsPerReleaseToSettled: ratio(
          c.requestsPerRelease.toSettled.total,
          f.requestsPerRelease.toSettled.total,
        ),
        requestsPerReleaseFirstDeploy: ratio(
          c.requestsPerRelease.firstDeploy.total,
          f.requestsPerRelease.firstDeploy.total,
        ),
        cpuToReady: ratio(c.cpuS.toReady, f.cpuS.toReady),
        cpuToSettled: ratio(c.cpuS.toSettled, f.cpuS.toSettled),
        peakRss: ratio(c.peakRssMiB, f.peakRssMiB),
      },
    };
  } finally {
    // The controllers' logs outlive the cluster's folder, for a run that went wrong.
    const logs = join(tmpdir(), `convoy-bench-flux-logs-n${n}`);
    await mkdir(logs, { recursive: true });
    for (const f of (await readdir(cp.dir)).filter(
      (name) => name.endsWith('.log') && !name.startsWith('bench-audit'),
    ))
      await copyFile(join(cp.dir, f), join(logs, f));
    log(`flux bench: N=${n}: controller logs kept in ${logs}`);
    await git.stop();
    await cp.stop();
    // CONVOY_BENCH_KEEP_AUDIT=<dir>: the audit log is kept there (bench-audit-n<N>.log) for a closer look.
    const keep = process.env['CONVOY_BENCH_KEEP_AUDIT'];
    if (keep !== undefined && keep !== '') {
      await mkdir(keep, { recursive: true });
      await copyFile(join(auditDir, 'bench-audit.log'), join(keep, `bench-audit-n${n}.log`)).catch(
        (e: unknown) => log(`flux bench: keeping the audit log failed: ${String(e)}`),
      );
    }
    await rm(auditDir, { recursive: true, force: true });
    await rm(gitRoot, { recursive: true, force: true });
  }
}

export async function benchFlux(
  root: string,
  options: { ns: readonly number[] },
): Promise<Record<string, unknown>> {
  const build = await buildFlux(root);
  log(`flux bench: binaries in ${build.binDir} (${build.buildMs} ms)`);
  const runs: Record<string, unknown>[] = [];
  for (const n of options.ns) {
    // CONVOY_BENCH_FLUX_FLOORS=none: the side by side alone (the floors add three clusters per N).
    const floors: Partial<Record<FloorVariant, FloorResult>> =
      process.env['CONVOY_BENCH_FLUX_FLOORS'] === 'none'
        ? {}
        : {
            applyOnly: await floorAt(root, n, 'applyOnly'),
            dryRunFirst: await floorAt(root, n, 'dryRunFirst'),
            reportOnce: await floorAt(root, n, 'reportOnce'),
          };
    runs.push(await sideBySide(root, build.binDir, n, floors));
  }
  const atTarget = runs.find((r) => r['n'] === FLUX_TARGETS.n)?.['ratiosConvoyOverFlux'] as
    { wall: number; requestsPerRelease: number } | undefined;
  return {
    flux: FLUX_VERSIONS,
    buildMs: build.buildMs,
    config: {
      flux: "the flags of Flux's own Deployment manifests (--watch-all-namespaces --log-level=info --log-encoding=json; not --enable-leader-election, which needs an in-cluster namespace), otherwise defaults (outside a cluster: KUBECONFIG, RUNTIME_NAMESPACE=flux-system, loopback --storage-addr/--storage-adv-addr, --metrics-addr, --health-addr); one GitRepository (interval 1h); one Kustomization per namespace (interval 1h, prune true, wait false, no healthChecks, targetNamespace its own)",
      convoy:
        'the convoy dev runtime (relay, pollers calling the real function handlers, fauxqs) in its own process; one Release per namespace (syncPolicy.interval 1h, no healthAssessment), one Cluster (inCluster) per namespace created before the clock starts',
      health:
        'off on both sides: Flux Ready = applied (wait false); convoy Applied = applied. Both clusters run the real Deployment controller with KWOK nodes; convoy still follows its rollout (10-s recheck) and runs drift and health once, which count in toSettled, not in the wall time',
      requests:
        "kube-apiserver audit log (Metadata, one event per request at ResponseComplete) of each side's own static-token identity; bench-flux = both Flux controllers, bench-convoy = relay + functions; toReady = requests received between the first create and the last Ready/Applied (the target's measure; at large N it holds the follow-ups of the Releases done early: convoy's rollout recheck ≥ 10 s after an apply), toSettled = until Flux + 10 s, convoy: until every rollout is over and InSync and Healthy are reported, firstDeploy = each Release's own requests (its namespace; convoy's Leases by the Release uid in their name) until its own first deploy was over (Flux: Ready; convoy: Applied with InSync and Healthy reported, all three loops' first runs) plus the shared ones (discovery, lists, watches, the GitRepository) until the last, per Release",
      cpu: "utime + stime of /proc/<pid>/stat of the side's processes from the first create (convoy: one Node process holding relay, pollers, function handlers and fauxqs)",
      order: 'per N one embedded cluster; Flux first, then convoy (the Flux objects stay, idle)',
      floor: `per N first three embedded clusters of their own (the same controllers and Node count) on which the bench applies the N apps itself, no controller: applyOnly — one server-side apply per object, ConfigMap → Deployment → Service; dryRunFirst — a server-side dry run of each first, as Flux and convoy both do (convoy's spec: a rejection applies nothing); reportOnce — dryRunFirst, and per app a Release created first and its status written once (Applied True) after the applies: the least a controller that reports can do (convoy's spec: three loops, each writing its own slice); ${FLOOR_CONCURRENCY} apps in flight; its wall time is what no controller can beat on this cluster (floor.*.overFlux: the lowest wall ratio any controller could reach)`,
    },
    targets: FLUX_TARGETS,
    atN1000: atTarget ?? 'not run (use --flux-n 1000)',
    met:
      atTarget !== undefined &&
      atTarget.wall <= FLUX_TARGETS.wallRatio &&
      atTarget.requestsPerRelease <= FLUX_TARGETS.requestsRatio,
    runs,
  };
}
