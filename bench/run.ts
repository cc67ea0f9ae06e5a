// `npm run bench`: convoy's benchmarks against a real etcd + kube-apiserver that
// this process starts and stops. Prints ONE JSON document on stdout (logs go to
// stderr). Exits 0 when every section ran, whether or not its targets were met;
// non-zero only when a section failed with an error (the document says which).
//
//   node bench/run.ts [--only reconcile200,queueLatency,queueCadence,functions,observers] [--sequential 50] [--burst 200]
import { availableParallelism, cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import { installCrds, startControlPlane, type ControlPlane } from '../dev/control-plane.ts';
import { benchCelHostile } from './sections/cel-hostile.ts';
import { benchCelRedos } from './sections/cel-redos.ts';
import { benchCliStart } from './sections/cli-start.ts';
import { benchDashboard } from './sections/dashboard.ts';
import { benchEmbeddedCluster } from './sections/embedded-cluster.ts';
import { benchFleet } from './sections/fleet.ts';
import { benchFlux } from './sections/flux.ts';
import { benchFunctions } from './sections/functions.ts';
import { benchLambdaRuntime } from './sections/lambda-runtime.ts';
import { benchLargeRelease } from './sections/large-release.ts';
import { benchMultiCluster } from './sections/multi-cluster.ts';
import { benchObservers, observersMissing } from './sections/observers.ts';
import { benchOciResolve } from './sections/oci-resolve.ts';
import { benchPackage } from './sections/package.ts';
import { benchPerRelease } from './sections/per-release.ts';
import { benchQueueCadence } from './sections/queue-cadence.ts';
import { benchQueueLatency } from './sections/queue-latency.ts';
import { benchRelayMetrics } from './sections/relay-metrics.ts';
import { benchReconcile200, type Reconcile200 } from './sections/reconcile200.ts';
import { benchRelayScale } from './sections/relay-scale.ts';
import { benchRenderDiff } from './sections/render-diff.ts';
import { benchSlowGit } from './sections/slow-git.ts';
import { benchSteadyInterval } from './sections/steady-interval.ts';
import { benchServiceAllocation } from './sections/service-allocation.ts';
import { countClientRequests, type ClientRequestCounter } from './lib/client-requests.ts';
import { since } from './lib/stats.ts';
import { guardStdout, log } from './lib/stdout.ts';
import { benchOptions, type Section } from './lib/options.ts';

const root = join(import.meta.dirname, '..');

function errorReport(error: unknown): { error: string } {
  const e = error instanceof Error ? error : new Error(String(error));
  return { error: `${e.name}: ${e.message}` };
}

async function main(): Promise<number> {
  const out = guardStdout();
  const started = performance.now();
  const options = benchOptions();
  const { wanted } = options;

  const sections: Partial<Record<Section, Record<string, unknown>>> = {};
  let failed = false;
  const fail = (section: Section, error: unknown): void => {
    failed = true;
    sections[section] = errorReport(error);
    log(`${section} failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
  };
  /** Runs a section; its report gets the wall time and the host's 1-minute load average around it (timings are only comparable on a quiet host). */
  const run = async <T>(
    section: Section,
    work: () => Promise<T>,
    report: (value: T) => Record<string, unknown> | undefined,
  ): Promise<T | undefined> => {
    const load = (): number => Math.round((loadavg()[0] ?? 0) * 100) / 100;
    const startLoad = load();
    const t = performance.now();
    try {
      const value = await work();
      const r = report(value);
      if (r !== undefined)
        sections[section] = { ...r, sectionMs: since(t), hostLoad1m: { start: startLoad, end: load() } };
      return value;
    } catch (error) {
      fail(section, error);
      return undefined;
    }
  };

  let cp: ControlPlane | undefined;
  let r200: Reconcile200 | undefined;
  let controlPlane: Record<string, unknown> = {};
  let stopClient = (): void => undefined;
  try {
    const needsCluster =
      wanted('dashboard') ||
      wanted('reconcile200') ||
      wanted('queueLatency') ||
      wanted('queueCadence') ||
      wanted('observers') ||
      wanted('perRelease') ||
      wanted('relayScale') ||
      wanted('slowGit') ||
      wanted('serviceAllocation') ||
      wanted('multiCluster') ||
      wanted('celHostile') ||
      wanted('lambdaRuntime') ||
      wanted('largeRelease') ||
      wanted('steadyInterval');
    let kc: KubeConfig | undefined;
    let client: ClientRequestCounter | undefined;
    if (needsCluster) {
      log('starting the control plane');
      cp = await startControlPlane();
      await installCrds(cp.kubeconfigPath, join(root, 'config', 'crds'));
      kc = new KubeConfig();
      kc.loadFromFile(cp.kubeconfigPath);
      controlPlane = { startupMs: cp.startupMs };
      client = countClientRequests(cp.server);
      stopClient = () => client?.stop();
    }

    // Order matters: the relay of queueLatency watches every namespace, so it runs (and stops)
    // before reconcile200 creates its Release; the observers need reconcile200's applied render
    // and a minute of quiet after its apply, which the functions section fills.
    if (wanted('queueLatency') && kc && client) {
      const [k, c] = [kc, client];
      await run(
        'queueLatency',
        () => benchQueueLatency(k, c, { sequential: options.sequential, burst: options.burst }),
        (r) => r,
      );
    }
    if (wanted('queueCadence') && kc) {
      const k = kc;
      await run(
        'queueCadence',
        () => benchQueueCadence(k),
        (r) => r,
      );
    }
    if ((wanted('reconcile200') || wanted('observers')) && kc && client) {
      const [k, c] = [kc, client];
      r200 = await run(
        'reconcile200',
        () => benchReconcile200(k, c),
        (r) => (wanted('reconcile200') ? r.report : undefined),
      );
    }
    if (wanted('perRelease') && kc && client) {
      const [k, c] = [kc, client];
      await run(
        'perRelease',
        () => benchPerRelease(k, c, { n: options.perReleaseN }),
        (r) => r,
      );
    }
    if (wanted('steadyInterval') && kc && client) {
      const [k, c] = [kc, client];
      await run(
        'steadyInterval',
        () => benchSteadyInterval(k, c, { n: options.steadyN }),
        (r) => r,
      );
    }
    if (wanted('multiCluster') && kc) {
      const k = kc;
      await run(
        'multiCluster',
        () => benchMultiCluster(k, { perCluster: options.multiClusterN }),
        (r) => r,
      );
    }
    if (wanted('slowGit') && kc) {
      const k = kc;
      await run(
        'slowGit',
        () => benchSlowGit(k, { fast: 20, slow: 20 }),
        (r) => r,
      );
    }
    if (wanted('serviceAllocation') && kc) {
      const k = kc;
      await run(
        'serviceAllocation',
        () => benchServiceAllocation(k, { n: 1000, concurrency: 50 }),
        (r) => r,
      );
    }
    if (wanted('relayScale') && kc && cp) {
      const [k, dir] = [kc, cp.dir];
      await run(
        'relayScale',
        () =>
          benchRelayScale(k, root, dir, {
            releases: options.relayScaleN,
            changes: options.relayScaleChanges,
          }),
        (r) => r,
      );
    }
    if (wanted('celHostile') && kc) {
      const k = kc;
      await run(
        'celHostile',
        () => benchCelHostile(k, { ordinary: 20, hostile: 2, spacingMs: 1_000 }),
        (r) => r,
      );
    }
    if (wanted('lambdaRuntime') && kc) {
      const k = kc;
      await run(
        'lambdaRuntime',
        () => benchLambdaRuntime(k, { n: options.lambdaN, steadySeconds: 75, slots: 2 }),
        (r) => r,
      );
    }
    if (wanted('largeRelease') && kc && client) {
      const [k, c] = [kc, client];
      await run(
        'largeRelease',
        () => benchLargeRelease(k, c, root, { objects: options.largeReleaseN }),
        (r) => r,
      );
    }
    if (wanted('dashboard') && kc) {
      const k = kc;
      await run(
        'dashboard',
        () => benchDashboard(k),
        (r) => r,
      );
    }
    if (wanted('embeddedCluster'))
      await run(
        'embeddedCluster',
        () => benchEmbeddedCluster(root),
        (r) => r,
      );
    if (wanted('flux'))
      await run(
        'flux',
        () => benchFlux(root, { ns: options.fluxNs }),
        (r) => r,
      );
    if (wanted('functions')) {
      await run(
        'functions',
        () => benchFunctions(root),
        (r) => r,
      );
    }
    if (wanted('package'))
      await run(
        'package',
        () => benchPackage(root),
        (r) => r,
      );
    if (wanted('relayMetrics'))
      await run(
        'relayMetrics',
        () => benchRelayMetrics(),
        (r) => r,
      );
    if (wanted('celRedos'))
      await run(
        'celRedos',
        () => benchCelRedos(),
        (r) => r,
      );
    if (wanted('ociResolve'))
      await run(
        'ociResolve',
        () => benchOciResolve({ n: 50 }),
        (r) => r,
      );
    if (wanted('fleet'))
      await run(
        'fleet',
        () => benchFleet(root, { clusters: options.fleetN }),
        (r) => r,
      );
    if (wanted('cliStart')) {
      const cluster = cp === undefined ? undefined : { kubeconfigPath: cp.kubeconfigPath };
      await run(
        'cliStart',
        () => benchCliStart(root, cluster),
        (r) => r,
      );
    }
    if (wanted('renderDiff'))
      await run(
        'renderDiff',
        () => benchRenderDiff(root),
        (r) => r,
      );
    if (wanted('observers')) {
      const missing = observersMissing(root);
      if (missing !== undefined) {
        sections.observers = {
          skipped: `${missing}: the drift and health functions are not there yet`,
        };
      } else if (r200 === undefined || !kc || !client) {
        sections.observers = { skipped: 'needs the applied 200-object render of reconcile200, which failed' };
      } else {
        const [k, c, r] = [kc, client, r200];
        await run(
          'observers',
          () => benchObservers(k, c, r),
          (report) => report,
        );
      }
    }
  } finally {
    log('cleaning up');
    stopClient();
    await r200?.env.close().catch((e: unknown) => log(`closing the reconcile env failed: ${String(e)}`));
    await cp?.stop();
  }

  const met = Object.fromEntries(
    Object.entries(sections).map(([name, s]) => [
      name,
      'met' in s ? s['met'] : 'skipped' in s ? 'skipped' : 'error',
    ]),
  );
  const document = {
    bench: 'convoy',
    at: new Date().toISOString(),
    host: {
      cpus: availableParallelism(),
      cpuModel: cpus()[0]?.model,
      node: process.version,
      platform: `${process.platform}-${process.arch}`,
      note: 'each section has hostLoad1m {start, end}: a load above the CPU count means other processes competed for the CPUs and the timings are inflated',
    },
    controlPlane,
    met,
    totalMs: since(started),
    sections,
  };
  await out.emit(`${JSON.stringify(document, null, 2)}\n`);
  return failed ? 1 : 0;
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(
      `bench: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
    );
    process.exitCode = 1;
  },
);
