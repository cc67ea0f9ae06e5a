// Starts etcd, kube-apiserver and (by default) the controllers, scheduler and simulated nodes in a
// fresh temp dir, and hands back a ControlPlane to stop them.
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { locateControlPlaneBinaries, type ControlPlaneBinaries } from './binaries.ts';
import { ControlPlaneStartError } from './errors.ts';
import { renderKubeconfig } from './kubeconfig.ts';
import { ownProcesses } from './owned-processes.ts';
import { generatePki, type Pki } from './pki.ts';
import { freePorts } from './processes.ts';
import { waitForReady, type Watched } from './readiness.ts';
import { startSimulatedCluster, type SimulatedCluster } from './simulated-cluster.ts';

/** Prefix of the control plane's temp dir; the pid of its owner follows (see removeStaleDirs). */
export const CONTROL_PLANE_DIR_PREFIX = 'convoy-cp-';

export interface ExtraUser {
  /** User name as the apiserver sees it (no commas or quotes). */
  readonly name: string;
  readonly groups?: readonly string[];
}

/**
 * A static-token user in convoy's functions group (infra/functions-rbac.ts FUNCTIONS_GROUP), minted
 * on every control plane: `convoy dev` and the integration harness run the functions as this user,
 * with exactly the RBAC the install manifests grant that group — never as admin.
 */
export const FUNCTIONS_USER: ExtraUser = { name: 'convoy-functions', groups: ['convoy:functions'] };

export interface StartControlPlaneOptions {
  /** Users that authenticate with a static bearer token (unprivileged unless RBAC says otherwise); FUNCTIONS_USER always is one. */
  readonly extraUsers?: readonly ExtraUser[];
  /** Defaults to locateControlPlaneBinaries(). */
  readonly binaries?: ControlPlaneBinaries;
  /**
   * How long to wait for /readyz to answer ok (and then for the nodes to be Ready). Default 120 s:
   * a safety net — a start takes ~5 s on a quiet machine, but four control planes starting at once
   * beside two test files and a CPU hog took more than 30 s to pass /readyz.
   */
  readonly readyTimeoutMs?: number;
  /**
   * Also run kube-controller-manager, kube-scheduler and kwok with `nodes` simulated Nodes
   * (default true), so Deployments, Jobs… reach their real states. false: a bare apiserver.
   */
  readonly controllers?: boolean;
  /** How many simulated Nodes (default 2). */
  readonly nodes?: number;
  /**
   * Stop on SIGINT/SIGTERM by itself (default true). `convoy dev` turns it off
   * and stops the control plane last, after the relay has given up its Lease.
   */
  readonly stopOnSignals?: boolean;
  /** Extra kube-apiserver flags, appended to the defaults (the bench turns on an audit log with them). */
  readonly apiserverArgs?: readonly string[];
  /**
   * Picks etcd's client and peer ports and kube-apiserver's secure port, one call per start
   * attempt; default three free loopback ports (freePorts). A test passes a taken one to play
   * the race lostPortRace recovers from.
   */
  readonly pickPorts?: () => Promise<readonly number[]>;
}

export interface ControlPlane {
  /** Kubeconfig file (admin client certificate, O=system:masters) inside `dir`. */
  readonly kubeconfigPath: string;
  readonly kubeconfigYaml: string;
  /** https://127.0.0.1:<port> */
  readonly server: string;
  /** Bearer token per extra user name. */
  readonly tokens: Readonly<Record<string, string>>;
  /** The CA that signed the serving and client certificates (PEM). */
  readonly caPem: string;
  /** The temp dir holding etcd data, certificates, logs and the kubeconfig; removed by stop(). */
  readonly dir: string;
  readonly pids: {
    readonly etcd: number;
    readonly apiserver: number;
    readonly reaper: number;
    /** Absent with `controllers: false`. */
    readonly controllerManager?: number;
    readonly scheduler?: number;
    readonly kwok?: number;
  };
  /** Names of the simulated Nodes (none with `controllers: false`). */
  readonly nodeNames: readonly string[];
  /** Milliseconds from spawning etcd to /readyz answering ok. */
  readonly startupMs: number;
  /** Milliseconds from /readyz ok to the controllers running and every simulated Node Ready (0 without controllers). */
  readonly clusterReadyMs: number;
  /**
   * Stops every process in reverse order (kwok, scheduler and kcm together, then kube-apiserver,
   * then etcd; SIGTERM, SIGKILL after 1.5-2 s), waits for them, removes `dir`. Idempotent.
   */
  stop(): Promise<void>;
}

/** Starts with fresh ports this many times at most when a process lost its port to another one. */
const PORT_RACE_ATTEMPTS = 3;

/**
 * A start that failed because a port it was given was taken between the check that it was free
 * and the process binding it. The ports come from listen(0), the kernel's ephemeral range, which
 * every outgoing connection of the machine draws its local port from too: on a busy machine (two
 * test files at a time, a CI run beside them) one of them took kube-apiserver's port in that window.
 */
export function lostPortRace(error: unknown): boolean {
  return error instanceof ControlPlaneStartError && /address already in use/.test(error.message);
}

/**
 * Starts the control plane on free loopback ports in a fresh temp dir and waits until it is ready.
 * A start that lost a port (lostPortRace) is stopped, cleaned up and made again with new ports.
 */
export async function startControlPlane(opts: StartControlPlaneOptions = {}): Promise<ControlPlane> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await startControlPlaneOnce(opts);
    } catch (error) {
      if (attempt >= PORT_RACE_ATTEMPTS || !lostPortRace(error)) throw error;
    }
  }
}

async function startControlPlaneOnce(opts: StartControlPlaneOptions): Promise<ControlPlane> {
  const withControllers = opts.controllers !== false;
  const binaries = opts.binaries ?? locateControlPlaneBinaries(process.env, { controllers: withControllers });
  const extraUsers = tokenUsers(opts.extraUsers);
  const dir = await mkdtemp(join(tmpdir(), `${CONTROL_PLANE_DIR_PREFIX}${process.pid}-`));
  const path = (name: string): string => join(dir, name);
  const owned = ownProcesses(dir, { stopOnSignals: opts.stopOnSignals !== false });
  try {
    const reaper = await owned.startReaper();
    const pki = await generatePki();
    // Ports last, to keep the window between "free" and "bound" short.
    const [etcdClientPort, etcdPeerPort, securePort] = await (opts.pickPorts ?? (() => freePorts(3)))();
    const server = `https://127.0.0.1:${securePort}`;
    const { tokens, kubeconfigYaml, kubeconfigPath } = await writeClusterFiles(dir, server, pki, extraUsers);

    const started = performance.now();
    const etcdUrl = `http://127.0.0.1:${etcdClientPort}`;
    const etcd = owned.spawn(
      'etcd',
      binaries.etcd,
      etcdArgs(path, etcdUrl, `http://127.0.0.1:${etcdPeerPort}`),
    );
    const apiserver = owned.spawn('kube-apiserver', binaries.kubeApiserver, [
      ...apiserverArgs(path, { etcdUrl, securePort, server }),
      ...(opts.apiserverArgs ?? []),
    ]);
    const core: Watched[] = [
      { name: 'etcd', file: binaries.etcd, proc: etcd.proc, log: path('etcd.log') },
      {
        name: 'kube-apiserver',
        file: binaries.kubeApiserver,
        proc: apiserver.proc,
        log: path('kube-apiserver.log'),
      },
    ];
    const timeoutMs = opts.readyTimeoutMs ?? 120_000;
    await waitForReady({ server, pki, timeoutMs, watched: core });
    const apiserverReady = performance.now();
    const startupMs = Math.round(apiserverReady - started);

    let simulated: SimulatedCluster | undefined;
    if (withControllers) {
      simulated = await startSimulatedCluster({
        binaries,
        dir,
        server,
        pki,
        nodes: opts.nodes ?? 2,
        timeoutMs,
        spawn: owned.spawn,
        alsoWatched: core,
      });
    }
    const clusterReadyMs = simulated ? Math.round(performance.now() - apiserverReady) : 0;

    return {
      kubeconfigPath,
      kubeconfigYaml,
      server,
      tokens,
      caPem: pki.caPem,
      dir,
      pids: {
        etcd: etcd.proc.pid ?? -1,
        apiserver: apiserver.proc.pid ?? -1,
        reaper: reaper.pid ?? -1,
        ...simulated?.pids,
      },
      nodeNames: simulated?.nodeNames ?? [],
      startupMs,
      clusterReadyMs,
      stop: owned.stop,
    };
  } catch (err) {
    await owned.stop();
    throw err;
  }
}

/** The extra users with FUNCTIONS_USER last (replacing one of that name); a name or group the token file cannot hold is refused. */
function tokenUsers(extraUsers: readonly ExtraUser[] | undefined): ExtraUser[] {
  const users = [...(extraUsers ?? []).filter((u) => u.name !== FUNCTIONS_USER.name), FUNCTIONS_USER];
  for (const u of users) {
    if (!/^[A-Za-z0-9@._:-]+$/.test(u.name)) {
      throw new ControlPlaneStartError(
        `extraUsers: user name ${JSON.stringify(u.name)} must match [A-Za-z0-9@._:-]+`,
      );
    }
    for (const g of u.groups ?? []) {
      if (!/^[A-Za-z0-9@._:-]+$/.test(g)) {
        throw new ControlPlaneStartError(
          `extraUsers: group ${JSON.stringify(g)} of user ${u.name} must match [A-Za-z0-9@._:-]+`,
        );
      }
    }
  }
  return users;
}

/** The certificates, keys and static tokens kube-apiserver reads, and the admin kubeconfig, written into `dir`. */
async function writeClusterFiles(
  dir: string,
  server: string,
  pki: Pki,
  users: readonly ExtraUser[],
): Promise<{ tokens: Record<string, string>; kubeconfigYaml: string; kubeconfigPath: string }> {
  const path = (name: string): string => join(dir, name);
  const tokens: Record<string, string> = {};
  const tokenLines: string[] = [];
  for (const u of users) {
    const token = randomBytes(24).toString('hex');
    tokens[u.name] = token;
    tokenLines.push(`${token},${u.name},convoy-test-${u.name},"${(u.groups ?? []).join(',')}"`);
  }
  await mkdir(path('certs'));
  await Promise.all([
    writeFile(path('ca.crt'), pki.caPem),
    writeFile(path('serving.crt'), pki.servingCertPem),
    writeFile(path('serving.key'), pki.servingKeyPem, { mode: 0o600 }),
    writeFile(path('sa.pub'), pki.saPublicPem),
    writeFile(path('sa.key'), pki.saPrivatePem, { mode: 0o600 }),
    writeFile(path('tokens.csv'), tokenLines.join('\n') + '\n', { mode: 0o600 }),
  ]);
  const kubeconfigYaml = renderKubeconfig(server, pki, tokens);
  const kubeconfigPath = path('kubeconfig');
  await writeFile(kubeconfigPath, kubeconfigYaml, { mode: 0o600 });
  return { tokens, kubeconfigYaml, kubeconfigPath };
}

/** A single-member etcd on loopback; its data is thrown away, so no fsync. */
function etcdArgs(path: (name: string) => string, etcdUrl: string, peerUrl: string): string[] {
  return [
    '--name=convoy',
    `--data-dir=${path('etcd')}`,
    `--listen-client-urls=${etcdUrl}`,
    `--advertise-client-urls=${etcdUrl}`,
    `--listen-peer-urls=${peerUrl}`,
    `--initial-advertise-peer-urls=${peerUrl}`,
    `--initial-cluster=convoy=${peerUrl}`,
    '--unsafe-no-fsync=true',
    '--log-level=warn',
  ];
}

/** kube-apiserver on loopback with RBAC, client certificates and the static tokens of writeClusterFiles. */
function apiserverArgs(
  path: (name: string) => string,
  at: { etcdUrl: string; securePort: number | undefined; server: string },
): string[] {
  return [
    `--etcd-servers=${at.etcdUrl}`,
    `--cert-dir=${path('certs')}`,
    `--tls-cert-file=${path('serving.crt')}`,
    `--tls-private-key-file=${path('serving.key')}`,
    `--secure-port=${at.securePort}`,
    '--bind-address=127.0.0.1',
    '--advertise-address=127.0.0.1',
    '--service-cluster-ip-range=10.0.0.0/16', // room for thousands of Services (bench workloads make one per Release)
    '--allow-privileged=true',
    '--disable-admission-plugins=ServiceAccount',
    '--authorization-mode=RBAC',
    `--service-account-issuer=${at.server}/`,
    `--service-account-key-file=${path('sa.pub')}`,
    `--service-account-signing-key-file=${path('sa.key')}`,
    `--client-ca-file=${path('ca.crt')}`,
    `--token-auth-file=${path('tokens.csv')}`,
  ];
}
