// fleet: one ReleaseSet rolled out to 500 Clusters in 4 steps, through the production
// path: the relay as its own process (relay/main.ts, so /proc measures it alone) watching the
// set, its children and the Clusters and sending fleet messages; fauxqs SQS; the real handlers
// (dev/runtime.ts' pollers for reconcile, drift and health; the fleet function's handler
// createFleetHandler on its own poller). The 500 Clusters all point at this section's own
// kube-apiserver (a kubeConfig Secret with a token user), each child in its own namespace
// (targetNamespace: ${cluster.name}); the app is one ConfigMap (bare apiserver, no controllers:
// the bench measures the set, not pods).
//
// The fleet function acts as its own token user (in system:masters: the bench measures cost, not
// authorization), so the requests it sends — the set's side of a rollout — are told apart from
// the children's own loops by the bearer token, counted client-side as the bench's other request
// counts (lib/client-requests.ts' keys).
//
// Reports, per rollout (1: the set created, 500 children written; 2: a template change, 500
// children updated): wall time from the write to RolloutSucceeded True, and that minus the steps'
// soak (minHealthyTime × 4); fleet runs (messages the fleet function handled) and the requests of
// the set's side per Cluster; the peak size of the set's status (JSON, polled every 500 ms); the
// relay's RSS (after its first list, and its peak). Targets: ≤ 3 requests per Cluster per rollout
// on the set's side, status ≤ 64 KiB. A rollout whose status does not change for 2 minutes is
// reported as stalled (complete: false, where it stopped) instead of waited for: watching a
// rollout and what it cost is fleet-rollout.ts.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  CoreV1Api,
  CustomObjectsApi,
  KubeConfig,
  PatchStrategy,
  RbacAuthorizationV1Api,
  setHeaderOptions,
} from '@kubernetes/client-node';
import { stringify } from 'yaml';
import { fromClientNodeKubeConfig } from '../../adapters/kube/client-node-config.ts';
import { ensureQueueWithDlq } from '../../adapters/sqs/queues.ts';
import { freePorts } from '../../dev/control-plane/processes.ts';
import { installCrds, startControlPlane, type ControlPlane } from '../../dev/control-plane.ts';
import { startGitHttpServer } from '../../dev/git-http-server.ts';
import { startConvoyRuntime } from '../../dev/runtime.ts';
import { startPoller } from '../../dev/sqs-poller.ts';
import { API_GROUP, API_VERSION } from '../../domain/api/common.ts';
import { parseReleaseSet, type ReleaseSet } from '../../domain/api/release-set.ts';
import { createFleetHandler } from '../../functions/fleet/create-handler.ts';
import { hintKey } from '../../functions/runtime/applied-hint.ts';
import { functionEnvSchema } from '../../functions/runtime/config.ts';
import { createLogger } from '../../platform/logger.ts';
import { tenancyFromEnv } from '../../platform/tenancy-config.ts';
import { createRepo } from '../../test/harness/git-fixtures.ts';
import { inPool, startSideProcess, waitUntil } from '../flux/side-process.ts';
import { rssMiB } from '../lib/proc-stats.ts';
import { log } from '../lib/stdout.ts';
import { countRequestsWithToken, fleetLogTally, watchRollout } from './fleet-rollout.ts';

const NS = 'fleet-bench';
const SET = 'web';
const FLEET_USER = 'convoy-fleet-bench';
const TARGET_USER = 'convoy-fleet-bench-target';
const SOAK_SECONDS = 10;
/** At most 3 requests of the set's side per Cluster per rollout; a status of at most 64 KiB. */
export const FLEET_TARGETS = { requestsPerClusterPerRollout: 3, statusBytes: 64 * 1024 } as const;

export interface FleetBenchOptions {
  /** Clusters (default 500). */
  clusters: number;
}

/** Ring of Cluster i: 1% canary, 9% early, 30% main, the rest (60%) in the implicit last step. */
function ringOf(i: number, n: number): string {
  if (i < Math.max(1, Math.round(n * 0.01))) return 'canary';
  if (i < Math.round(n * 0.1)) return 'early';
  if (i < Math.round(n * 0.4)) return 'main';
  return 'late';
}

const clusterName = (i: number): string => `c-${String(i).padStart(4, '0')}`;

function kubeconfigYaml(cp: ControlPlane, user: string): string {
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
    users: [{ name: 'u', user: { token: cp.tokens[user] } }],
    contexts: [{ name: 't', context: { cluster: 't', user: 'u' } }],
    'current-context': 't',
  });
}

export async function benchFleet(root: string, options: FleetBenchOptions): Promise<Record<string, unknown>> {
  const n = options.clusters;
  log(`fleet: starting a kube-apiserver for ${n} Clusters`);
  const cp = await startControlPlane({
    controllers: false,
    extraUsers: [
      { name: FLEET_USER, groups: ['system:masters'] },
      { name: TARGET_USER, groups: ['system:masters'] },
    ],
  });
  const cleanups: (() => Promise<void>)[] = [() => cp.stop()];
  try {
    await installCrds(cp.kubeconfigPath, join(root, 'config', 'crds'));
    const kc = new KubeConfig();
    kc.loadFromFile(cp.kubeconfigPath);
    const core = kc.makeApiClient(CoreV1Api);
    const objects = kc.makeApiClient(CustomObjectsApi);
    await kc.makeApiClient(RbacAuthorizationV1Api).listClusterRole(); // the apiserver answers RBAC (warm)

    // The fleet: the management namespace, one kubeconfig Secret, n Clusters and their target namespaces.
    await core.createNamespace({ body: { metadata: { name: NS } } });
    await core.createNamespacedSecret({
      namespace: NS,
      body: { metadata: { name: 'target' }, stringData: { value: kubeconfigYaml(cp, TARGET_USER) } },
    });
    const indexes = Array.from({ length: n }, (_, i) => i);
    log(`fleet: creating ${n} namespaces and Clusters`);
    await inPool(indexes, 25, async (i) => {
      await core.createNamespace({ body: { metadata: { name: clusterName(i) } } });
      await objects.createNamespacedCustomObject({
        group: API_GROUP,
        version: API_VERSION,
        namespace: NS,
        plural: 'clusters',
        body: {
          apiVersion: `${API_GROUP}/${API_VERSION}`,
          kind: 'Cluster',
          metadata: { name: clusterName(i), namespace: NS, labels: { ring: ringOf(i, n) } },
          spec: { kubeConfig: { secretRef: { name: 'target' } } },
        },
      });
    });

    const gitRoot = await mkdtemp(join(tmpdir(), 'convoy-bench-fleet-git-'));
    const git = await startGitHttpServer({ projectRoot: gitRoot });
    cleanups.push(async () => {
      await git.stop();
      await rm(gitRoot, { recursive: true, force: true });
    });
    await createRepo(gitRoot, 'app', {
      'app.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: app}\ndata: {GREETING: hello}\n',
    });

    // The runtime: the Release loops on dev/runtime.ts' pollers; its in-process relay sends nothing
    // (onlyNamespaces names no namespace): the relay process below is the one that drives the rollout.
    const tally = fleetLogTally();
    const logger = createLogger({
      base: { app: 'convoy-bench' },
      level: 'info',
      write: (line) => tally.onLine(line),
    });
    const runtime = await startConvoyRuntime({
      kc,
      logger,
      namespace: 'convoy-bench-fleet',
      onlyNamespaces: ['convoy-bench-no-namespace'],
    });
    cleanups.push(() => runtime.stop());

    // The fleet function on its own queue, as its own user.
    const fleetQueue = await ensureQueueWithDlq(runtime.sqs, 'convoy-bench-fleet', {
      maxReceiveCount: 10,
      visibilityTimeout: 60,
    });
    const cacheDir = await mkdtemp(join(tmpdir(), 'convoy-bench-fleet-cache-'));
    cleanups.push(() => rm(cacheDir, { recursive: true, force: true }));
    const config = functionEnvSchema.parse({
      CONVOY_NAMESPACE: 'convoy-bench-fleet',
      CONVOY_RENDER_BUCKET: runtime.bucket,
      CONVOY_RECONCILE_QUEUE_URL: runtime.queues.reconcile.queueUrl,
      CONVOY_DRIFT_QUEUE_URL: runtime.queues.drift.queueUrl,
      CONVOY_HEALTH_QUEUE_URL: runtime.queues.health.queueUrl,
      CONVOY_FLEET_QUEUE_URL: fleetQueue.queueUrl,
      CONVOY_CACHE_DIR: cacheDir,
    });
    const fleetKc = new KubeConfig();
    fleetKc.loadFromString(kubeconfigYaml(cp, FLEET_USER));
    const fleetHandler = createFleetHandler(
      config,
      {
        kc: fromClientNodeKubeConfig(fleetKc),
        sqs: runtime.sqs,
        s3: runtime.s3,
        hintKey: hintKey(config.CONVOY_HINT_KEY),
        // The bench's Git server is on loopback, which the default egress policy refuses (as convoy dev allows it).
        tenancy: tenancyFromEnv({ CONVOY_EGRESS_ALLOW: '127.0.0.0/8' }),
      },
      logger.child({ fn: 'fleet' }),
      { queueUrlOf: () => fleetQueue.queueUrl },
    );
    const fleetPoller = startPoller({
      sqs: runtime.sqs,
      queueUrl: fleetQueue.queueUrl,
      queueArn: fleetQueue.queueArn,
      handler: fleetHandler,
      logger: logger.child({ poller: 'fleet' }),
      waitTimeSeconds: 1,
      concurrency: 5,
    });
    cleanups.push(() => fleetPoller.stop());

    // The relay, as production runs it: its own process (from its sources), with the fleet queue.
    await core.createNamespace({ body: { metadata: { name: 'convoy-bench-fleet-relay' } } });
    const [port] = await freePorts(1);
    const relay = startSideProcess({
      name: 'relay',
      file: process.execPath,
      args: [join(root, 'relay', 'main.ts'), cp.dir],
      env: {
        ...process.env,
        KUBECONFIG: cp.kubeconfigPath,
        CONVOY_NAMESPACE: 'convoy-bench-fleet-relay',
        CONVOY_RECONCILE_QUEUE_URL: runtime.queues.reconcile.queueUrl,
        CONVOY_DRIFT_QUEUE_URL: runtime.queues.drift.queueUrl,
        CONVOY_HEALTH_QUEUE_URL: runtime.queues.health.queueUrl,
        CONVOY_FLEET_QUEUE_URL: fleetQueue.queueUrl,
        CONVOY_HTTP_HOST: '127.0.0.1',
        CONVOY_HTTP_PORT: String(port),
        CONVOY_HTTPS_PORT: '0',
        CONVOY_LOG_LEVEL: 'warn',
        AWS_ENDPOINT_URL: runtime.awsEndpoint,
        AWS_REGION: 'us-east-1',
        AWS_ACCESS_KEY_ID: 'convoy-dev',
        AWS_SECRET_ACCESS_KEY: 'convoy-dev',
      },
      log: join(cp.dir, 'fleet-relay.log'),
      pidsFile: join(cp.dir, 'pids'),
    });
    cleanups.push(() => relay.stop());
    const leading = async () =>
      /^convoy_relay_leader(\{[^}]*\})? 1$/m.test(
        await (await fetch(`http://127.0.0.1:${port}/metrics`)).text(),
      );
    await waitUntil(
      'the relay ready and leading',
      async () => (await fetch(`http://127.0.0.1:${port}/readyz`)).ok && (await leading()),
      [relay],
      120_000,
    );
    const relayAtReady = rssMiB(relay.pid);

    const counter = countRequestsWithToken(cp.server, cp.tokens[FLEET_USER] ?? '');
    cleanups.push(() => {
      counter.stop();
      return Promise.resolve();
    });
    const readSet = async (): Promise<ReleaseSet> => {
      const parsed = parseReleaseSet(
        await objects.getNamespacedCustomObject({
          group: API_GROUP,
          version: API_VERSION,
          namespace: NS,
          plural: 'releasesets',
          name: SET,
        }),
      );
      if (!parsed.ok) throw new Error(`the ReleaseSet does not parse: ${parsed.error}`);
      return parsed.value;
    };

    const rollout = (label: string, start: () => Promise<void>) =>
      watchRollout({ readSet, counter, tally, clusters: n, soakSeconds: SOAK_SECONDS }, label, start);

    const spec = (greeting: string) => ({
      clusters: { selector: { matchExpressions: [{ key: 'ring', operator: 'Exists' }] } },
      template: {
        metadata: { annotations: { 'bench.convoy.dev/greeting': greeting } },
        spec: {
          targetNamespace: '${cluster.name}',
          source: { git: { url: `${git.url}/app.git`, ref: { branch: 'main' } } },
        },
      },
      rollout: {
        minHealthyTime: `${SOAK_SECONDS}s`,
        stepTimeout: '20m',
        steps: [
          { name: 'canary', clusters: { matchLabels: { ring: 'canary' } }, maxConcurrent: 1 },
          { name: 'early', clusters: { matchLabels: { ring: 'early' } } },
          { name: 'main', clusters: { matchLabels: { ring: 'main' } } },
        ],
      },
    });
    log(`fleet: rollout 1 (create) over ${n} Clusters`);
    const first = await rollout('create', async () => {
      await objects.createNamespacedCustomObject({
        group: API_GROUP,
        version: API_VERSION,
        namespace: NS,
        plural: 'releasesets',
        body: {
          apiVersion: `${API_GROUP}/${API_VERSION}`,
          kind: 'ReleaseSet',
          metadata: { name: SET, namespace: NS },
          spec: spec('hello'),
        },
      });
    });
    log(`fleet: rollout 2 (template change) over ${n} Clusters`);
    if (!first.complete) throw new Error(`rollout 1 stalled: ${JSON.stringify(first.stalled)}`);
    const second = await rollout('update', async () => {
      await objects.patchNamespacedCustomObject(
        {
          group: API_GROUP,
          version: API_VERSION,
          namespace: NS,
          plural: 'releasesets',
          name: SET,
          body: {
            spec: { template: { metadata: { annotations: { 'bench.convoy.dev/greeting': 'bonjour' } } } },
          },
        },
        setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
      );
    });
    const relayEnd = rssMiB(relay.pid);
    const metrics = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
    const fleetNotices = Object.fromEntries(
      [...metrics.matchAll(/^convoy_relay_fleet_notices_total\{trigger="([^"]+)"\} ([0-9.e+]+)$/gm)].map(
        (m) => [m[1] ?? '', Number(m[2])],
      ),
    );
    const worstRequests = Math.max(first.setSideRequestsPerCluster, second.setSideRequestsPerCluster);
    const peakStatusBytes = Math.max(first.peakStatusBytes, second.peakStatusBytes);
    return {
      how: `${n} Clusters (kubeConfig Secret to this section's own bare kube-apiserver), a namespace per Cluster (targetNamespace \${cluster.name}), one ConfigMap app from Git; 4 steps (canary 1% maxConcurrent 1, early 9%, main 30%, the implicit rest 60%), minHealthyTime ${SOAK_SECONDS}s each. The relay runs as its own process (relay/main.ts) with the fleet queue; the fleet function (createFleetHandler) on its own poller as its own token user, whose requests are the set's side (counted client-side by bearer token); the children's loops on dev/runtime.ts' pollers. Rollout 1 creates the set; rollout 2 changes the template (an annotation). wall = the write to RolloutSucceeded True at the new generation.`,
      clusters: n,
      soakSecondsPerStep: SOAK_SECONDS,
      rollouts: { create: first, update: second },
      relay: {
        rssAtReadyMiB: relayAtReady.rss,
        rssEndMiB: relayEnd.rss,
        peakRssMiB: relayEnd.peak,
        fleetNotices,
      },
      targets: {
        setSideRequestsPerClusterPerRollout: {
          target: `<= ${FLEET_TARGETS.requestsPerClusterPerRollout}`,
          value: worstRequests,
          met: worstRequests <= FLEET_TARGETS.requestsPerClusterPerRollout,
        },
        peakStatusBytes: {
          target: `<= ${FLEET_TARGETS.statusBytes}`,
          value: peakStatusBytes,
          met: peakStatusBytes <= FLEET_TARGETS.statusBytes,
        },
      },
      met:
        first.complete &&
        second.complete &&
        worstRequests <= FLEET_TARGETS.requestsPerClusterPerRollout &&
        peakStatusBytes <= FLEET_TARGETS.statusBytes,
    };
  } finally {
    for (const cleanup of cleanups.reverse())
      await cleanup().catch((e: unknown) => log(`fleet cleanup failed: ${String(e)}`));
  }
}
