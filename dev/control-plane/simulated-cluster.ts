// The parts that make the embedded apiserver behave like a cluster: kube-controller-manager,
// kube-scheduler and KWOK (which plays kubelet for a few simulated Nodes; no container runs).
// Started once the apiserver is ready; see dev/control-plane/kwok-*stages.yaml for what KWOK does.
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { adminRequest } from './admin-request.ts';
import type { ControlPlaneBinaries } from './binaries.ts';
import { ControlPlaneStartError, errorText } from './errors.ts';
import type { Pki } from './pki.ts';
import type { SpawnedProcess } from './processes.ts';
import { throwIfAnyExited, type Watched } from './readiness.ts';

/** Label that sends a Pod down KWOK's failure path (see kwok-fail-stages.yaml). */
export const FAIL_LABEL = 'kwok.convoy.dev/fail';
/** The annotation that tells KWOK a Node is one of its simulated Nodes. */
const NODE_ANNOTATION = 'kwok.x-k8s.io/node';
export const STAGE_FILES = [
  join(import.meta.dirname, 'kwok-stages.yaml'),
  join(import.meta.dirname, 'kwok-fail-stages.yaml'),
] as const;

export interface SimulatedClusterOptions {
  readonly binaries: ControlPlaneBinaries;
  /** The control plane's folder (kubeconfig, ca.crt, sa.key are there). */
  readonly dir: string;
  readonly server: string;
  readonly pki: Pki;
  readonly nodes: number;
  readonly timeoutMs: number;
  /** Spawns a process the control plane owns (stopped with it, killed by its reaper). */
  readonly spawn: (name: string, file: string, args: string[], env?: NodeJS.ProcessEnv) => SpawnedProcess;
  /** Already running; checked while waiting. */
  readonly alsoWatched: readonly Watched[];
}

export interface SimulatedCluster {
  readonly pids: { readonly controllerManager: number; readonly scheduler: number; readonly kwok: number };
  readonly nodeNames: readonly string[];
}

/**
 * The controllers' client-side rate limits (kcm: 20 requests/s, burst 30; scheduler 50/100 by
 * default) protect a shared apiserver from a runaway controller; on this single-user apiserver
 * they only made the simulation slow: each app (Deployment, ReplicaSet, Pod, EndpointSlice, the
 * namespace's ServiceAccount and root-CA ConfigMap) costs kcm about a dozen writes, so at 20/s
 * 300 apps took kcm minutes to roll out and every rollout follower (convoy's 10-s recheck)
 * waited on the limit, not on the cluster. Raised so the apiserver's own capacity is the limit.
 */
const CONTROLLER_CLIENT_LIMITS = ['--kube-api-qps=1000', '--kube-api-burst=2000'];

/**
 * Starts kube-controller-manager, kube-scheduler and kwok against the running apiserver, creates
 * `nodes` simulated Nodes and waits until they are Ready and the controllers have created the
 * `default` ServiceAccount (so the controllers run and their caches are warm).
 */
export async function startSimulatedCluster(o: SimulatedClusterOptions): Promise<SimulatedCluster> {
  const path = (name: string): string => join(o.dir, name);
  const kubeconfig = `--kubeconfig=${path('kubeconfig')}`;
  // kcm would otherwise create /usr/libexec/kubernetes/kubelet-plugins/volume/exec/ on the host.
  await mkdir(path('flexvolume'));
  await mkdir(path('kwok'));
  const kcm = o.spawn('kube-controller-manager', o.binaries.kubeControllerManager, [
    kubeconfig,
    '--leader-elect=false',
    '--use-service-account-credentials=false',
    '--controllers=*',
    `--service-account-private-key-file=${path('sa.key')}`,
    `--root-ca-file=${path('ca.crt')}`,
    '--secure-port=0',
    `--flex-volume-plugin-dir=${path('flexvolume')}`,
    ...CONTROLLER_CLIENT_LIMITS,
    '--concurrent-deployment-syncs=20',
    '--concurrent-replicaset-syncs=20',
  ]);
  // --secure-port=0: no health endpoint, and no requestheader-CA warnings every few seconds.
  const scheduler = o.spawn('kube-scheduler', o.binaries.kubeScheduler, [
    kubeconfig,
    '--leader-elect=false',
    '--secure-port=0',
    ...CONTROLLER_CLIENT_LIMITS,
  ]);
  const kwok = o.spawn(
    'kwok',
    o.binaries.kwok,
    [
      kubeconfig,
      ...STAGE_FILES.map((f) => `--config=${f}`),
      '--manage-all-nodes=false',
      `--manage-nodes-with-annotation-selector=${NODE_ANNOTATION}=fake`,
      // Without Lease renewals kcm marks the Nodes NotReady after 50 s, and kwok never re-readies their Pods.
      '--node-lease-duration-seconds=40',
      '--cidr=10.244.0.0/16',
    ],
    // KWOK_WORKDIR: kwok would otherwise read ~/.kwok/kwok.yaml first.
    { ...process.env, KWOK_WORKDIR: path('kwok') },
  );
  const watched: Watched[] = [
    ...o.alsoWatched,
    {
      name: 'kube-controller-manager',
      file: o.binaries.kubeControllerManager,
      proc: kcm.proc,
      log: path('kube-controller-manager.log'),
    },
    {
      name: 'kube-scheduler',
      file: o.binaries.kubeScheduler,
      proc: scheduler.proc,
      log: path('kube-scheduler.log'),
    },
    { name: 'kwok', file: o.binaries.kwok, proc: kwok.proc, log: path('kwok.log') },
  ];

  const deadline = Date.now() + o.timeoutMs;
  const nodeNames = Array.from({ length: o.nodes }, (_, i) => `kwok-node-${i}`);
  for (const name of nodeNames) await createSimulatedNode(o, name, deadline);

  let waitingFor = 'nothing checked yet';
  for (;;) {
    await throwIfAnyExited(watched, 'the simulated nodes were Ready');
    try {
      waitingFor = await notReadyYet(o, nodeNames);
      if (waitingFor === '') break;
    } catch (err) {
      waitingFor = errorText(err);
    }
    if (Date.now() > deadline) {
      throw new ControlPlaneStartError(
        `the embedded cluster was not ready after ${o.timeoutMs} ms (${waitingFor}); logs are in ${o.dir}`,
      );
    }
    await sleep(50);
  }
  return {
    pids: {
      controllerManager: kcm.proc.pid ?? -1,
      scheduler: scheduler.proc.pid ?? -1,
      kwok: kwok.proc.pid ?? -1,
    },
    nodeNames,
  };
}

/** How long one Node create may take: a loaded machine's apiserver can be slow, and the create is retried until the deadline. */
const NODE_CREATE_TIMEOUT_MS = 15_000;

/**
 * Creates one simulated Node. A create that timed out or lost its connection is sent again until the
 * startup deadline (an earlier one that did land answers 409, which is fine): on a loaded machine a
 * single 2-s request was not enough (a fresh-clone CI beside two others, load 16).
 */
export async function createSimulatedNode(
  o: SimulatedClusterOptions,
  name: string,
  deadline: number,
): Promise<void> {
  for (;;) {
    try {
      const res = await adminRequest(
        o.server,
        o.pki,
        'POST',
        '/api/v1/nodes',
        simulatedNode(name),
        NODE_CREATE_TIMEOUT_MS,
      );
      if (res.status === 201 || res.status === 409) return;
      throw new ControlPlaneStartError(
        `creating the simulated Node ${name} failed: HTTP ${res.status}: ${res.body.slice(0, 300)}`,
      );
    } catch (err) {
      if (err instanceof ControlPlaneStartError) throw err;
      if (Date.now() > deadline) {
        throw new ControlPlaneStartError(
          `creating the simulated Node ${name} failed within ${o.timeoutMs} ms: ${errorText(err)}; logs are in ${o.dir}`,
        );
      }
      await sleep(200);
    }
  }
}

/** '' when every Node is Ready and the default ServiceAccount exists; otherwise what is missing. */
async function notReadyYet(o: SimulatedClusterOptions, nodeNames: readonly string[]): Promise<string> {
  const nodes = await adminRequest(o.server, o.pki, 'GET', `/api/v1/nodes?labelSelector=type%3Dkwok`);
  if (nodes.status !== 200) return `listing Nodes: HTTP ${nodes.status}`;
  const items = (JSON.parse(nodes.body) as { items: NodeLike[] }).items;
  const ready = new Set(
    items
      .filter((n) => n.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'))
      .map((n) => n.metadata.name),
  );
  const notReady = nodeNames.filter((n) => !ready.has(n));
  if (notReady.length > 0) return `Nodes not Ready yet (kwok): ${notReady.join(', ')}`;
  const sa = await adminRequest(o.server, o.pki, 'GET', '/api/v1/namespaces/default/serviceaccounts/default');
  if (sa.status !== 200) return 'no default ServiceAccount yet (kube-controller-manager)';
  return '';
}

interface NodeLike {
  metadata: { name: string };
  status?: { conditions?: { type: string; status: string }[] };
}

function simulatedNode(name: string): Record<string, unknown> {
  const resources = { cpu: '32', memory: '256Gi', pods: '110' };
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      name,
      // No taint: only simulated Pods exist here, so nothing needs keeping off these Nodes.
      annotations: { [NODE_ANNOTATION]: 'fake', 'node.alpha.kubernetes.io/ttl': '0' },
      labels: {
        type: 'kwok',
        'kubernetes.io/hostname': name,
        'kubernetes.io/os': 'linux',
        'kubernetes.io/arch': 'amd64',
      },
    },
    status: { allocatable: resources, capacity: resources },
  };
}
