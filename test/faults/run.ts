// `npm run test:faults`: convoy under injected faults, on the real control plane (with controllers
// and KWOK), fauxqs and a git server. Each scenario prints one JSON line: time to converge, runs
// per Release and loop, overlapping runs, dead-lettered messages, status fields lost and duplicate
// hook Jobs; the process exits 1 when an invariant breaks (overlap, DLQ, lost fields, no converge).
//
// Sizes: FAULT_N Releases per scenario (default 10), FAULT_BURST_N for the burst (default 500),
// FAULT_DUP_N for the duplicate-cost pair (default 200), FAULT_FREEZE_S (default 45) and
// FAULT_GIT_DOWN_S (default 60); FAULT_ONLY=a,b runs a subset; FAULT_LOG_DIR=<dir> writes each
// scenario's function log lines there (<scenario>.jsonl). Each line also carries the host's load.
//
// FAULT_SUBSET=ci (`npm run test:faults:ci`, run by .ci/run after `npm test`, ~6 min): the
// scenarios whose time is the system's own — duplicates, a crashed Lease, kill -9 mid-wave and
// mid-hook, two processes, a burst of 50 — without the timed outages (Git down, apiserver frozen),
// the duplicates-cost pair and the 500-Release burst; FAULT_ONLY and the sizes still override.
import { randomUUID } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { createKubeClient } from '../../adapters/kube/http.ts';
import { fromKubeconfigFile } from '../../adapters/kube/kubeconfig.ts';
import { microTime } from '../../adapters/kube/lease.ts';
import type { Release } from '../../domain/api/objects.ts';
import { leaseName } from '../../domain/runtime/lease.ts';
import { startGitHttpServer } from '../../dev/git-http-server.ts';
import type { Relay } from '../../relay/relay.ts';
import {
  appRepo,
  conditionOf,
  converged,
  createNamespace,
  deadLettered,
  deleteNamespace,
  freshQueues,
  missingFields,
  releaseSpec,
  runStats,
  sampleLoad,
  startFunctions,
  startScenarioRelay,
  startWorld,
  trackJobs,
  waitConverged,
  type FaultWorld,
  type Functions,
  type LogLine,
} from './harness.ts';

const CI_SUBSET = process.env['FAULT_SUBSET'] === 'ci';
const N = Number(process.env['FAULT_N'] ?? 10);
const BURST_N = Number(process.env['FAULT_BURST_N'] ?? (CI_SUBSET ? 50 : 500));
const DUP_N = Number(process.env['FAULT_DUP_N'] ?? 200);
const LOG_DIR = process.env['FAULT_LOG_DIR'];
const FREEZE_S = Number(process.env['FAULT_FREEZE_S'] ?? 45);
const GIT_DOWN_S = Number(process.env['FAULT_GIT_DOWN_S'] ?? 60);
const CI_SCENARIOS = [
  'every-message-twice',
  'crashed-lease',
  'kill-9-mid-wave',
  'kill-9-mid-hook',
  'two-processes',
  'burst',
];
const CONVERGE_TIMEOUT_MS = Number(process.env['FAULT_TIMEOUT_S'] ?? 300) * 1000;
/** The bursts (FAULT_BURST_N, FAULT_DUP_N) converge at the functions' throughput: a longer limit. */
const BURST_TIMEOUT_MS = Number(process.env['FAULT_BURST_TIMEOUT_S'] ?? 1800) * 1000;

interface Scenario {
  world: FaultWorld;
  name: string;
  ns: string;
  installation: string;
  logs: LogLine[];
  relays: Relay[];
  functions: Functions[];
  releases: string[];
  jobs: ReturnType<typeof trackJobs>;
  load: ReturnType<typeof sampleLoad>;
}

async function scenario(world: FaultWorld, name: string): Promise<Scenario> {
  const suffix = randomUUID().slice(0, 6);
  const ns = `${name}-${suffix}`;
  const installation = `${name}-sys-${suffix}`;
  await createNamespace(world, ns);
  await createNamespace(world, installation);
  await world.api.create('Cluster', ns, 'local', { inCluster: true });
  await freshQueues(world, `${name}-${suffix}`);
  return {
    world,
    name,
    ns,
    installation,
    logs: [],
    relays: [],
    functions: [],
    releases: [],
    jobs: trackJobs(world, ns),
    load: sampleLoad(),
  };
}

const releaseNames = (count: number) => Array.from({ length: count }, (_, i) => `r${i}`);

async function createReleases(
  s: Scenario,
  names: readonly string[],
  url: string,
  extraSpec: Record<string, unknown> = {},
): Promise<void> {
  for (let i = 0; i < names.length; i += 20) {
    await Promise.all(
      names
        .slice(i, i + 20)
        .map((n) => s.world.api.create('Release', s.ns, n, { ...releaseSpec(url, s.ns, n), ...extraSpec })),
    );
  }
  s.releases.push(...names);
}

async function finish(
  s: Scenario,
  startedAt: number,
  notes: Record<string, unknown> = {},
  timeoutMs = CONVERGE_TIMEOUT_MS,
): Promise<Record<string, unknown>> {
  const left = Math.max(timeoutMs - (Date.now() - startedAt), 1_000);
  const conv = await waitConverged(s.world, s.ns, s.releases, left);
  // A little longer, so that late duplicates and timers show up in the counts.
  await sleep(3_000);
  const list = (await s.world.api.raw.listNamespacedCustomObject({
    group: 'convoy.dev',
    version: 'v1alpha1',
    namespace: s.ns,
    plural: 'releases',
  })) as { items: Release[] };
  const lost = list.items.reduce((n, r) => n + missingFields(r).length, 0);
  const jobs = await s.jobs.stop();
  const result = {
    scenario: s.name,
    releases: s.releases.length,
    converged: conv.converged,
    timeToConvergeS: Math.round((Date.now() - startedAt - 3_000) / 100) / 10,
    ...runStats(s.logs, s.releases.length),
    deadLettered: await deadLettered(s.world),
    statusFieldsLost: lost,
    ...jobs,
    ...notes,
    ...s.load.stop(),
    notConverged: list.items
      .filter((r) => !converged(r))
      .slice(0, 3)
      .map((r) => ({
        name: r.metadata.name,
        applied: conditionOf(r, 'Applied')?.reason,
        inSync: conditionOf(r, 'InSync')?.reason,
        healthy: conditionOf(r, 'Healthy')?.reason,
      })),
  };
  for (const relay of s.relays) await relay.stop();
  for (const f of s.functions) {
    f.kill('SIGTERM');
    await f.exited;
  }
  // Its Pods would crowd the simulated Nodes of the next scenario.
  await deleteNamespace(s.world, s.ns).catch((error: unknown) =>
    process.stderr.write(`deleting namespace ${s.ns}: ${String(error)}\n`),
  );
  if (LOG_DIR !== undefined) {
    await mkdir(LOG_DIR, { recursive: true });
    await writeFile(join(LOG_DIR, `${s.name}.jsonl`), s.logs.map((l) => JSON.stringify(l)).join('\n') + '\n');
  }
  process.stdout.write(`${JSON.stringify(result)}\n`);
  return result;
}

const scenarios: Record<string, (world: FaultWorld) => Promise<Record<string, unknown>>> = {
  async 'every-message-twice'(world) {
    const s = await scenario(world, 'twice');
    s.functions.push(await startFunctions(world, s.installation, s.logs, { duplicate: true }));
    s.relays.push(startScenarioRelay(world, s.installation, [s.ns], { duplicate: true }));
    const started = Date.now();
    const names = releaseNames(N);
    await createReleases(s, names, await appRepo(world, s.ns, names));
    return finish(s, started);
  },

  async 'crashed-lease'(world) {
    // Every Release's reconcile Lease is held by a run that crashed just now, with the production
    // Lease duration (60 s): its messages must wait (as new delayed messages), not dead-letter.
    const s = await scenario(world, 'crashed');
    s.relays.push(startScenarioRelay(world, s.installation, [s.ns]));
    const started = Date.now();
    const names = releaseNames(N);
    await createReleases(s, names, await appRepo(world, s.ns, names));
    const kube = createKubeClient(fromKubeconfigFile(world.cp.kubeconfigPath));
    const now = microTime(new Date());
    for (const name of s.releases) {
      const uid = (await world.api.getRelease(s.ns, name)).metadata.uid ?? '';
      const lease = leaseName('reconcile', uid);
      await kube.patch(
        `/apis/coordination.k8s.io/v1/namespaces/${s.installation}/leases/${lease}`,
        {
          apiVersion: 'coordination.k8s.io/v1',
          kind: 'Lease',
          metadata: { name: lease, namespace: s.installation, labels: { 'convoy.dev/release-uid': uid } },
          spec: {
            holderIdentity: 'reconcile-crashed',
            leaseDurationSeconds: 60,
            acquireTime: now,
            renewTime: now,
          },
        },
        { type: 'apply', fieldManager: 'fault-suite', force: true },
      );
    }
    s.functions.push(await startFunctions(world, s.installation, s.logs));
    return finish(s, started, { leaseDurationS: 60 });
  },

  async 'kill-9-mid-wave'(world) {
    const s = await scenario(world, 'kill9');
    const first = await startFunctions(world, s.installation, s.logs);
    s.relays.push(startScenarioRelay(world, s.installation, [s.ns]));
    const started = Date.now();
    const names = releaseNames(N);
    await createReleases(s, names, await appRepo(world, s.ns, names));
    // Wait until a Release waits at wave 0 (mid-wave), then kill -9 the functions.
    const deadline = Date.now() + 60_000;
    while (Date.now() < deadline && !s.logs.some((l) => l['applied'] === 'WaitingForWaveHealth'))
      await sleep(100);
    first.kill('SIGKILL');
    await first.exited;
    const killedAt = Date.now() - started;
    await sleep(2_000);
    s.functions.push(await startFunctions(world, s.installation, s.logs));
    return finish(s, started, { killedAfterS: Math.round(killedAt / 100) / 10 });
  },

  async 'kill-9-mid-hook'(world) {
    // Every Release runs a PreSync hook Job that takes 20 s (KWOK's run-for annotation); the
    // functions are killed -9 while the hook Jobs run. The next functions must wait for the same
    // Jobs (no second Job for a hook of a render) and converge.
    const s = await scenario(world, 'hook9');
    await world.api.create('Lifecycle', s.ns, 'migrate', {
      hooks: [
        {
          name: 'migrate',
          phase: 'PreSync',
          timeout: '5m',
          job: {
            backoffLimit: 0,
            template: {
              metadata: { annotations: { 'kwok.convoy.dev/run-for': '20s' } },
              spec: {
                restartPolicy: 'Never',
                containers: [{ name: 'migrate', image: 'registry.invalid/migrate:1' }],
              },
            },
          },
        },
      ],
    });
    const first = await startFunctions(world, s.installation, s.logs);
    s.relays.push(startScenarioRelay(world, s.installation, [s.ns]));
    const started = Date.now();
    const names = releaseNames(N);
    await createReleases(s, names, await appRepo(world, s.ns, names), { lifecycleRef: { name: 'migrate' } });
    // Wait until the hooks of most Releases run (their Jobs exist, WaitingForHook), then kill -9.
    const deadline = Date.now() + 60_000;
    const waiting = () =>
      new Set(s.logs.filter((l) => l['applied'] === 'WaitingForHook').map((l) => l['name'])).size;
    while (Date.now() < deadline && waiting() < Math.ceil(N / 2)) await sleep(100);
    const hooksRunningAtKill = waiting();
    first.kill('SIGKILL');
    await first.exited;
    const killedAt = Date.now() - started;
    await sleep(2_000);
    s.functions.push(await startFunctions(world, s.installation, s.logs));
    return finish(s, started, { killedAfterS: Math.round(killedAt / 100) / 10, hooksRunningAtKill });
  },

  async 'git-down'(world) {
    const s = await scenario(world, 'gitdown');
    const names = releaseNames(N);
    const url = await appRepo(world, s.ns, names);
    s.functions.push(await startFunctions(world, s.installation, s.logs));
    s.relays.push(startScenarioRelay(world, s.installation, [s.ns]));
    const port = world.git.port;
    await world.git.stop();
    const started = Date.now();
    await createReleases(s, names, url);
    await sleep(GIT_DOWN_S * 1000);
    world.git = await startGitHttpServer({ projectRoot: world.gitRoot, port });
    return finish(s, started, { gitDownS: GIT_DOWN_S });
  },

  async 'two-processes'(world) {
    const s = await scenario(world, 'two');
    for (const id of ['a', 'b']) {
      s.functions.push(await startFunctions(world, s.installation, s.logs));
      s.relays.push(startScenarioRelay(world, s.installation, [s.ns], { identity: `convoy-${id}` }));
    }
    const started = Date.now();
    const names = releaseNames(N);
    await createReleases(s, names, await appRepo(world, s.ns, names));
    return finish(s, started);
  },

  async 'duplicates-cost'(world) {
    // The performance figure: DUP_N Releases with every message delivered twice against the same
    // run without duplicates (first, in its own namespace and queues); ratio = twice / once.
    const runOnce = async (name: string, duplicate: boolean) => {
      const s = await scenario(world, name);
      s.functions.push(await startFunctions(world, s.installation, s.logs, { duplicate }));
      s.relays.push(startScenarioRelay(world, s.installation, [s.ns], { duplicate }));
      const started = Date.now();
      const names = releaseNames(DUP_N);
      await createReleases(s, names, await appRepo(world, s.ns, names));
      return finish(s, started, {}, BURST_TIMEOUT_MS);
    };
    const once = await runOnce('dupcost-once', false);
    const twice = await runOnce('dupcost-twice', true);
    const ratio = Number(twice['timeToConvergeS']) / Math.max(Number(once['timeToConvergeS']), 0.1);
    const summary = {
      ...twice,
      scenario: 'duplicates-cost',
      baselineTimeToConvergeS: once['timeToConvergeS'],
      ratio: Math.round(ratio * 100) / 100,
      ratioTarget: 1.2,
    };
    process.stdout.write(`${JSON.stringify(summary)}\n`);
    return summary;
  },

  async burst(world) {
    const s = await scenario(world, 'burst');
    s.functions.push(await startFunctions(world, s.installation, s.logs));
    s.relays.push(startScenarioRelay(world, s.installation, [s.ns]));
    const started = Date.now();
    const names = releaseNames(BURST_N);
    await createReleases(s, names, await appRepo(world, s.ns, names));
    return finish(s, started, {}, BURST_TIMEOUT_MS);
  },
  async 'apiserver-frozen'(world) {
    const s = await scenario(world, 'frozen');
    s.functions.push(await startFunctions(world, s.installation, s.logs));
    s.relays.push(startScenarioRelay(world, s.installation, [s.ns]));
    const started = Date.now();
    const names = releaseNames(N);
    // ConfigMaps only: kube-controller-manager exits when it loses its leader Lease during the
    // freeze (nothing restarts it in the embedded cluster), so this scenario runs last and its
    // convergence does not depend on Deployment controllers.
    await createReleases(s, names, await appRepo(world, s.ns, names, { configMapsOnly: true }));
    await sleep(1_000);
    process.kill(world.cp.pids.apiserver, 'SIGSTOP');
    await sleep(FREEZE_S * 1000);
    process.kill(world.cp.pids.apiserver, 'SIGCONT');
    const controllerManager = world.cp.pids.controllerManager;
    const alive = (pid: number | undefined) => {
      try {
        return pid !== undefined && process.kill(pid, 0);
      } catch {
        return false;
      }
    };
    return finish(s, started, { frozenS: FREEZE_S, controllerManagerSurvived: alive(controllerManager) });
  },
};

async function main(): Promise<void> {
  const only =
    process.env['FAULT_ONLY']?.split(',').filter((x) => x !== '') ?? (CI_SUBSET ? CI_SCENARIOS : undefined);
  const world = await startWorld({
    pods: Math.max(
      N,
      only === undefined || only.includes('burst') ? BURST_N : 0,
      only === undefined || only.includes('duplicates-cost') ? DUP_N : 0,
    ),
  });
  const results: Record<string, unknown>[] = [];
  try {
    for (const [name, run] of Object.entries(scenarios)) {
      if (only !== undefined && !only.includes(name)) continue;
      results.push(await run(world));
    }
  } finally {
    await world.stop();
  }
  const broken = results.filter(
    (r) =>
      r['overlappingRuns'] !== 0 ||
      r['deadLettered'] !== 0 ||
      r['statusFieldsLost'] !== 0 ||
      r['duplicateHookJobs'] !== 0 ||
      r['converged'] !== r['releases'],
  );
  process.stdout.write(
    `${JSON.stringify({ scenarios: results.length, broken: broken.map((r) => r['scenario']) })}\n`,
  );
  process.exitCode = broken.length === 0 ? 0 : 1;
}

await main();
