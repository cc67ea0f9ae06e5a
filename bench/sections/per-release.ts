// perRelease: where a Release's API requests go, per loop and per purpose, for
// the app of the issue (ConfigMap + Deployment + Service, each Release in its own
// namespace, one Git repository), through the three functions as production composes them
// (lib/loop-rig.ts: SQS → Lease → record handler), the bench draining one queue at a time:
// - firstDeploy: one reconcile message per new Release, then the drift and health
//   messages the reconcile sent;
// - progressingRecheck: the reconcile message requeued while the Deployment is not available
//   yet (its Pods wait for a Node with this run's label), handled again;
// - finish: a reconcile after the bench labelled a Node and the embedded cluster's controllers
//   made the Deployments available;
// - steadyState: one reconcile message per Release (an interval tick), nothing changed,
//   more than a minute after the last apply; and one drift and one health tick.
// Targets: firstDeploy <= 15 requests per Release over all three loops, Leases included;
// steadyState (reconcile) <= 8; progressingRecheck <= 1 + objects of the waves waited on.
import { setTimeout as sleep } from 'node:timers/promises';
import {
  AppsV1Api,
  CoreV1Api,
  PatchStrategy,
  setHeaderOptions,
  type KubeConfig,
} from '@kubernetes/client-node';
import { startGitHttpServer } from '../../dev/git-http-server.ts';
import type { Loop } from '../../domain/runtime/queue-message.ts';
import { createRepo } from '../../test/harness/git-fixtures.ts';
import { convoyApi } from '../../test/harness/releases.ts';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { countAwsRequests } from '../lib/aws-requests.ts';
import type { ClientRequestCounter } from '../lib/client-requests.ts';
import { startLoopRig, type Drained } from '../lib/loop-rig.ts';
import { byPurpose } from '../lib/request-purpose.ts';
import { costModel, type LoopFigures } from '../lib/cost-model.ts';
import { percentile } from '../lib/stats.ts';
import { log } from '../lib/stdout.ts';

export const APP_OBJECTS = 3;

/** Labels one simulated Node (the embedded cluster's KWOK Nodes) so that the waiting Pods schedule. */
async function labelOneNode(core: CoreV1Api, label: string, value: string): Promise<void> {
  const nodes = await core.listNode({ labelSelector: 'type=kwok' });
  const name = nodes.items[0]?.metadata?.name;
  if (name === undefined)
    throw new Error('perRelease: the control plane has no simulated Node (type=kwok) to run the Pods on');
  await core.patchNode(
    { name, body: { metadata: { labels: { [label]: value } } } },
    setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
  );
}

/** Waits until every Deployment in `namespaces` has an available replica (the real Deployment controller's status). */
async function waitForAvailable(
  kc: KubeConfig,
  namespaces: readonly string[],
  timeoutMs: number,
): Promise<void> {
  const apps = kc.makeApiClient(AppsV1Api);
  const deadline = Date.now() + timeoutMs;
  for (const namespace of namespaces) {
    for (;;) {
      const list = await apps.listNamespacedDeployment({ namespace });
      if (list.items.length > 0 && list.items.every((d) => (d.status?.availableReplicas ?? 0) >= 1)) break;
      if (Date.now() > deadline)
        throw new Error(
          `perRelease: the Deployments of ${namespace} did not become available within ${timeoutMs / 1000} s`,
        );
      await sleep(500);
    }
  }
}

/** `nodeSelector`: the Deployment's Pods wait for a Node with these labels (the Progressing recheck below). */
export function appFiles(dir: string, nodeSelector?: Record<string, string>): Record<string, string> {
  const selector = nodeSelector === undefined ? '' : `\n      nodeSelector: ${JSON.stringify(nodeSelector)}`;
  return {
    [`${dir}/app.yaml`]: `apiVersion: v1
kind: ConfigMap
metadata: {name: app-config}
data: {LOG_LEVEL: info, GREETING: hello}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: app, labels: {app: app}}
spec:
  replicas: 1
  selector: {matchLabels: {app: app}}
  template:
    metadata: {labels: {app: app}}
    spec:
      containers:
        - name: app
          image: registry.k8s.io/pause:3.10
          envFrom: [{configMapRef: {name: app-config}}]${selector}
---
apiVersion: v1
kind: Service
metadata: {name: app}
spec:
  selector: {app: app}
  ports: [{port: 80, targetPort: 8080}]
`,
  };
}

/**
 * Recorded with this same section on main at 498de50 (HEAD before the request savings, with
 * the Leases of that commit), N = 20: requests per Release by purpose.
 */
export const BEFORE = {
  commit: '498de50',
  n: 20,
  firstDeploy: {
    total: 47,
    reconcile: { lease: 3, release: 1, config: 5, dryRun: 3, read: 6, apply: 3, status: 1, total: 22 },
    drift: { lease: 3, release: 1, config: 3, dryRun: 3, read: 3, apply: 0, status: 1, total: 14 },
    health: { lease: 3, release: 1, config: 3, dryRun: 0, read: 3, apply: 0, status: 1, total: 11 },
  },
  progressingRecheck: {
    total: 19,
    reconcile: { lease: 3, release: 1, config: 5, dryRun: 3, read: 6, apply: 0, status: 1, total: 19 },
  },
  steadyState: {
    total: 16,
    reconcile: { lease: 3, release: 1, config: 5, dryRun: 3, read: 3, apply: 0, status: 1, total: 16 },
    driftTick: { lease: 3, release: 1, config: 3, dryRun: 3, read: 0, apply: 0, status: 0, total: 10 },
    healthTick: { lease: 3, release: 1, config: 3, dryRun: 0, read: 3, apply: 0, status: 1, total: 11 },
  },
};

interface Phase {
  loops: Partial<
    Record<
      Loop,
      {
        messages: number;
        perRelease: ReturnType<typeof byPurpose>;
        byRequest: Record<string, number>;
        msPerMessage: { p50: number; mean: number };
      }
    >
  >;
  perRelease: ReturnType<typeof byPurpose>;
  aws: Record<string, number>;
}

const round = (n: number): number => Math.round(n * 100) / 100;

export async function benchPerRelease(
  kc: KubeConfig,
  client: ClientRequestCounter,
  options: { n: number },
): Promise<Record<string, unknown>> {
  const n = options.n;
  const core = kc.makeApiClient(CoreV1Api);
  const api = convoyApi(kc);
  const gitRoot = await mkdtemp(join(tmpdir(), 'convoy-bench-git-'));
  const git = await startGitHttpServer({ projectRoot: gitRoot });
  const leaseNamespace = 'convoy-bench-leases';
  await core.createNamespace({ body: { metadata: { name: leaseNamespace } } }).catch(() => undefined);
  const rig = await startLoopRig(kc, { leaseNamespace });
  const aws = countAwsRequests(rig.awsOrigin);
  const run = `${Date.now().toString(36)}`;
  const namespaces: string[] = [];
  try {
    // The Pods wait for a Node labelled for this run, so the rollout stays Progressing (the
    // embedded cluster's controllers would make it available within seconds) until the bench
    // labels one after the Progressing recheck.
    const readyLabel = 'convoy.bench/ready';
    await createRepo(gitRoot, 'app', appFiles('app', { [readyLabel]: run }));
    const url = `${git.url}/app.git`;
    const releases: { namespace: string; name: string; uid: string; release: Record<string, unknown> }[] = [];
    for (let i = 0; i < n; i++) {
      const namespace = `perrel-${run}-${i}`;
      namespaces.push(namespace);
      await core.createNamespace({ body: { metadata: { name: namespace } } });
      await api.create('Cluster', namespace, 'local', { inCluster: true });
      const created = await api.create('Release', namespace, 'app', {
        cluster: { name: 'local' },
        source: { git: { url, ref: { branch: 'main' }, path: 'app' } },
        healthAssessment: {},
      });
      releases.push({
        namespace,
        name: 'app',
        uid: String((created.metadata as { uid?: string }).uid ?? ''),
        release: created,
      });
    }

    const phase = async (
      label: string,
      loops: readonly Loop[],
      delivery: 'first' | 'any',
      before?: () => Promise<void>,
    ): Promise<Phase> => {
      log(`perRelease: ${label}`);
      await before?.();
      const out: Phase = { loops: {}, perRelease: byPurpose({}), aws: {} };
      const all: Record<string, number> = {};
      const awsCount = await aws.during(async () => {
        for (const loop of loops) {
          const { value, count } = await client.during(() =>
            rig.drain(loop, { expect: n, delivery, timeoutMs: delivery === 'any' ? 40_000 : 20_000 }),
          );
          const drained: Drained = value;
          for (const [k, v] of Object.entries(count.byRequest)) all[k] = (all[k] ?? 0) + v;
          out.loops[loop] = {
            messages: drained.messages,
            perRelease: byPurpose(count.byRequest, n),
            byRequest: count.byRequest,
            msPerMessage: {
              p50: round(percentile(drained.perMessageMs, 50) ?? 0),
              mean: round(
                drained.perMessageMs.reduce((a, b) => a + b, 0) / Math.max(1, drained.perMessageMs.length),
              ),
            },
          };
        }
      });
      out.perRelease = byPurpose(all, n);
      out.aws = Object.fromEntries(Object.entries(awsCount.byRequest).map(([k, v]) => [k, round(v / n)]));
      return out;
    };

    const firstDeploy = await phase('first deploy', ['reconcile', 'drift', 'health'], 'first', () =>
      rig.send('reconcile', releases, 'watch: Release added'),
    );
    const lastApplyAt = Date.now();
    const reasonsAfterFirstDeploy: Record<string, number> = {};
    for (const r of releases) {
      const got = await api.getRelease(r.namespace, r.name);
      const applied = got.status?.conditions?.find((c) => c.type === 'Applied');
      const key = `${applied?.reason ?? 'none'}${applied?.reason === 'Applied' ? '' : `: ${applied?.message ?? ''}`.slice(0, 300)}`;
      reasonsAfterFirstDeploy[key] = (reasonsAfterFirstDeploy[key] ?? 0) + 1;
    }
    log(`perRelease: Applied after the first deploy: ${JSON.stringify(reasonsAfterFirstDeploy)}`);
    // The rollout is Progressing: the reconcile requeued each message for a recheck in 10 s.
    const progressingRecheck = await phase('progressing recheck', ['reconcile'], 'any');
    await labelOneNode(core, readyLabel, run);
    await waitForAvailable(kc, namespaces, 90_000);
    // The next reconcile finds the rollout finished (a fresh message: the recheck may already have ended).
    const finish = await phase(
      'reconcile after the Deployments became available',
      ['reconcile'],
      'first',
      () => rig.send('reconcile', releases, 'bench: recheck'),
    );
    const wait = lastApplyAt + 63_000 - Date.now();
    if (wait > 0) {
      log(`perRelease: waiting ${Math.round(wait / 1000)} s until the last apply is more than a minute old`);
      await sleep(wait);
    }
    const steadyState = await phase(
      'steady state (interval tick, nothing changed)',
      ['reconcile'],
      'first',
      () => rig.send('reconcile', releases, 'bench: interval'),
    );
    const observersTick = await phase(
      'steady state drift and health ticks',
      ['drift', 'health'],
      'first',
      async () => {
        await rig.send('drift', releases, 'bench: interval');
        await rig.send('health', releases, 'bench: interval');
      },
    );

    const recheckTarget = 1 + APP_OBJECTS;
    const figures = (p: Phase, loop: Loop): LoopFigures => {
      const l = p.loops[loop];
      const aws = p.aws;
      const share = (key: string): number => (aws[key] ?? 0) / Math.max(1, Object.keys(p.loops).length);
      return {
        msPerMessage: l?.msPerMessage.mean ?? 0,
        apiserverRequests: l?.perRelease.total ?? 0,
        sqsRequests: share('SQS ChangeMessageVisibility') + share('SQS SendMessage'),
        s3Get: share('S3 GET'),
        s3Other: share('S3 PUT') + share('S3 HEAD') + share('S3 LIST'),
      };
    };
    const steadyLoops = {
      reconcile: figures(steadyState, 'reconcile'),
      drift: figures(observersTick, 'drift'),
      health: figures(observersTick, 'health'),
    };
    const measured = {
      firstDeploy: firstDeploy.perRelease.total,
      steadyState: steadyState.perRelease.total,
      progressingRecheck: progressingRecheck.perRelease.total,
    };
    const targets = { firstDeploy: 15, steadyState: 8, progressingRecheck: recheckTarget };
    return {
      n,
      app: 'ConfigMap + Deployment + Service per Release, each in its own namespace, one Git repository',
      targets,
      measured,
      met:
        measured.firstDeploy <= targets.firstDeploy &&
        measured.steadyState <= targets.steadyState &&
        measured.progressingRecheck <= targets.progressingRecheck,
      appliedAfterFirstDeploy: reasonsAfterFirstDeploy,
      costModel: {
        note: 'steady state: every Release runs reconcile, drift and health once per 5-minute interval; per-message figures measured above (handler mean time, apiserver, SQS and S3 requests per Release); Lambda GB-s at the default memory (reconcile 1024 MB, drift/health 512 MB) with one record per invocation (an upper bound: a batch runs its records concurrently)',
        n1000: costModel(1000, 5, steadyLoops),
        n10000: costModel(10_000, 5, steadyLoops),
      },
      before: BEFORE,
      after: { firstDeploy, progressingRecheck, finish, steadyState, observersTick },
      notes: [
        'requests per Release counted on the client side (every request of this process to the apiserver, discovery and /version included), divided by N',
        'purposes: lease = coordination Leases; release = reading the Release; config = Cluster, Mutations, discovery, /version; dryRun; read = GETs of rendered objects; apply = object writes; status = status applies',
        "aws: SQS and S3 requests per Release to fauxqs meanwhile, by kind (for the cost model); the bench itself sends the relay's messages and receives/deletes them as Lambda's event source mapping would",
      ],
    };
  } finally {
    aws.stop();
    await rig.close();
    await git.stop();
    await rm(gitRoot, { recursive: true, force: true });
    for (const ns of namespaces) await core.deleteNamespace({ name: ns }).catch(() => undefined);
  }
}
