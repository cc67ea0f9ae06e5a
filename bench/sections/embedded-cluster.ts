// embeddedCluster: the cluster `convoy dev` and the integration tests run (etcd, kube-apiserver,
// kube-controller-manager, kube-scheduler, KWOK with simulated nodes), started on its own:
// - start time: etcd spawn → apiserver ready, and apiserver ready → controllers and nodes ready;
// - RSS of each process, right after the start and after the examples are Ready;
// - the cold build time of the binaries (the build log of scripts/build-control-plane.sh when it
//   is at hand, else the gaps between the binaries' modification times);
// - `kubectl apply -f examples/` → every example Release Ready (combined verdict), through the
//   convoy dev runtime (relay → SQS → functions) and its Git server.
import { readFileSync, statSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  CustomObjectsApi,
  KubeConfig,
  KubernetesObjectApi,
  PatchStrategy,
  loadAllYaml,
  type KubernetesObject,
} from '@kubernetes/client-node';
import {
  installCrds,
  locateControlPlaneBinaries,
  startControlPlane,
  type ControlPlane,
} from '../../dev/control-plane.ts';
import { EXAMPLES_NAMESPACE, provideExampleSources } from '../../dev/dev-examples.ts';
import { buildExampleRepos } from '../../dev/example-repos.ts';
import { startGitHttpServer } from '../../dev/git-http-server.ts';
import { startConvoyRuntime } from '../../dev/runtime.ts';
import { API_GROUP, API_VERSION } from '../../domain/api/common.ts';
import { parseRelease } from '../../domain/api/objects.ts';
import { combinedVerdict } from '../../domain/status/verdict.ts';
import { createLogger } from '../../platform/logger.ts';
import { log } from '../lib/stdout.ts';

const EXAMPLES_TIMEOUT_MS = 120_000;

export async function benchEmbeddedCluster(
  root: string,
  opts: { buildLog?: string; buildTimeLog?: string } = {},
): Promise<Record<string, unknown>> {
  log('embeddedCluster: starting a second, separate embedded cluster');
  const cp = await startControlPlane({ extraUsers: [{ name: 'convoy-admin', groups: ['system:masters'] }] });
  const cleanups: (() => Promise<void>)[] = [() => cp.stop()];
  try {
    const rssAtStart = rssOf(cp);
    await installCrds(cp.kubeconfigPath, join(root, 'config', 'crds'));
    const kc = new KubeConfig();
    kc.loadFromFile(cp.kubeconfigPath);

    const repos = await buildExampleRepos(join(root, 'examples', 'repos'));
    cleanups.push(() => repos.remove());
    const git = await startGitHttpServer({ projectRoot: repos.root });
    cleanups.push(() => git.stop());
    await provideExampleSources(kc, git.url, repos.names);
    const runtime = await startConvoyRuntime({
      kc,
      logger: createLogger({
        base: { bench: 'embeddedCluster' },
        level: 'warn',
        write: (l) => void process.stderr.write(`${l}\n`),
      }),
    });
    cleanups.push(() => runtime.stop());

    const examples = await applyExamplesUntilReady(kc, join(root, 'examples'));
    const rssAfterExamples = rssOf(cp);
    const stopStarted = performance.now();
    // The runtime, the Git server and the example repos; then the cluster's own stop, timed.
    await cleanups.pop()?.();
    await cleanups.pop()?.();
    await cleanups.pop()?.();
    const t = performance.now();
    await cp.stop();
    cleanups.length = 0;
    return {
      startup: {
        etcdSpawnToApiserverReadyMs: cp.startupMs,
        apiserverReadyToControllersAndNodesReadyMs: cp.clusterReadyMs,
        simulatedNodes: cp.nodeNames.length,
      },
      rssMiB: { afterStart: rssAtStart, afterExamplesReady: rssAfterExamples },
      examples,
      stopMs: { runtimeAndGit: Math.round(t - stopStarted), cluster: Math.round(performance.now() - t) },
      coldBuild: coldBuild(opts.buildLog ?? '/tmp/cp-build.log', opts.buildTimeLog ?? '/tmp/cp-time.log'),
    };
  } finally {
    for (const c of cleanups.reverse())
      await c().catch((e: unknown) => log(`embeddedCluster cleanup failed: ${String(e)}`));
  }
}

/** kubectl apply -f examples/ (server-side apply, as kubectl), then waits until every Release's combined verdict is Ready. */
async function applyExamplesUntilReady(kc: KubeConfig, dir: string): Promise<Record<string, unknown>> {
  const objects = KubernetesObjectApi.makeApiClient(kc);
  const releases: string[] = [];
  const applied = performance.now();
  for (const file of (await readdir(dir)).filter((f) => f.endsWith('.yaml')).sort()) {
    for (const doc of loadAllYaml(await readFile(join(dir, file), 'utf8')) as KubernetesObject[]) {
      await objects.patch(doc, undefined, undefined, 'kubectl', true, PatchStrategy.ServerSideApply);
      if (doc.kind === 'Release' && doc.metadata?.name) releases.push(doc.metadata.name);
    }
  }
  const custom = kc.makeApiClient(CustomObjectsApi);
  const readyAfterMs: Record<string, number> = {};
  const deadline = performance.now() + EXAMPLES_TIMEOUT_MS;
  while (Object.keys(readyAfterMs).length < releases.length) {
    for (const name of releases.filter((n) => readyAfterMs[n] === undefined)) {
      // The plain JSON (KubernetesObjectApi would turn timestamps into Dates).
      const raw: unknown = await custom.getNamespacedCustomObject({
        group: API_GROUP,
        version: API_VERSION,
        namespace: EXAMPLES_NAMESPACE,
        plural: 'releases',
        name,
      });
      const parsed = parseRelease(raw);
      if (parsed.ok && combinedVerdict(parsed.value).ready)
        readyAfterMs[name] = Math.round(performance.now() - applied);
    }
    if (performance.now() > deadline)
      throw new Error(`examples not Ready within ${EXAMPLES_TIMEOUT_MS} ms: ${JSON.stringify(readyAfterMs)}`);
    await sleep(200);
  }
  return {
    releases: releases.length,
    applyToAllReadyMs: Math.max(...Object.values(readyAfterMs)),
    readyAfterMs,
  };
}

function rssOf(cp: ControlPlane): Record<string, number> {
  const out: Record<string, number> = {};
  let total = 0;
  for (const [name, pid] of Object.entries(cp.pids)) {
    if (name === 'reaper' || pid === undefined || pid < 0) continue;
    try {
      const kib = Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 'NaN');
      out[name] = Math.round(kib / 1024);
      total += kib;
    } catch {
      out[name] = -1; // gone
    }
  }
  return { ...out, total: Math.round(total / 1024) };
}

/**
 * The cold build, from scripts/build-control-plane.sh's log ("built in Ns") and `time` output when
 * present; the binaries' modification times give each one's share (each is written when built).
 */
function coldBuild(buildLog: string, timeLog: string): Record<string, unknown> {
  const binaries = locateControlPlaneBinaries();
  const order = [
    ['etcd', binaries.etcd],
    ['kube-apiserver', binaries.kubeApiserver],
    ['kube-controller-manager', binaries.kubeControllerManager],
    ['kube-scheduler', binaries.kubeScheduler],
    ['kwok', binaries.kwok],
  ] as const;
  const mtimes = order.map(([name, file]) => [name, statSync(file).mtimeMs] as const);
  const gapS: Record<string, number> = {};
  for (let i = 1; i < mtimes.length; i++)
    gapS[mtimes[i][0]] = Math.round((mtimes[i][1] - mtimes[i - 1][1]) / 1000);
  const text = (file: string): string | undefined => {
    try {
      return readFileSync(file, 'utf8');
    } catch {
      return undefined;
    }
  };
  const builtIn = /built in (\d+)s/.exec(text(buildLog) ?? '')?.[1];
  const real = /real\s+(\d+)m([\d.]+)s/.exec(text(timeLog) ?? '');
  return {
    source: builtIn !== undefined ? buildLog : 'binary modification times only',
    allFiveS: builtIn !== undefined ? Number(builtIn) : undefined,
    wallS: real ? Math.round(Number(real[1]) * 60 + Number(real[2])) : undefined,
    /** Seconds between each binary and the previous one: kcm, scheduler and kwok are the extra binaries. */
    perBinaryS: gapS,
    extraBinariesS:
      (gapS['kube-controller-manager'] ?? 0) + (gapS['kube-scheduler'] ?? 0) + (gapS['kwok'] ?? 0),
    note: 'meaningful only when the binaries were built in one run of scripts/build-control-plane.sh on this machine',
  };
}
