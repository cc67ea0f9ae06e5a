// Starts etcd and kube-apiserver in a fresh temp dir and hands back a ControlPlane to stop them.
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { appendFileSync, rmSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { locateControlPlaneBinaries, type ControlPlaneBinaries } from './binaries.ts';
import { ControlPlaneStartError } from './errors.ts';
import { renderKubeconfig } from './kubeconfig.ts';
import { generatePki } from './pki.ts';
import {
  freePorts,
  signalQuietly,
  spawnLogged,
  spawnReaper,
  terminate,
  type SpawnedProcess,
} from './processes.ts';
import { waitForReady } from './readiness.ts';

export interface ExtraUser {
  /** User name as the apiserver sees it (no commas or quotes). */
  readonly name: string;
  readonly groups?: readonly string[];
}

export interface StartControlPlaneOptions {
  /** Users that authenticate with a static bearer token (unprivileged unless RBAC says otherwise). */
  readonly extraUsers?: readonly ExtraUser[];
  /** Defaults to locateControlPlaneBinaries(). */
  readonly binaries?: ControlPlaneBinaries;
  /** How long to wait for /readyz to answer ok. Default 30 s. */
  readonly readyTimeoutMs?: number;
  /**
   * Stop on SIGINT/SIGTERM by itself (default true). `convoy dev` turns it off
   * and stops the control plane last, after the relay has given up its Lease.
   */
  readonly stopOnSignals?: boolean;
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
  readonly pids: { readonly etcd: number; readonly apiserver: number; readonly reaper: number };
  /** Milliseconds from spawning etcd to /readyz answering ok. */
  readonly startupMs: number;
  /** Stops both processes (SIGTERM, SIGKILL after 5 s), waits for exit, removes `dir`. Idempotent. */
  stop(): Promise<void>;
}

/** Starts etcd and kube-apiserver on free loopback ports in a fresh temp dir and waits for /readyz. */
export async function startControlPlane(opts: StartControlPlaneOptions = {}): Promise<ControlPlane> {
  const binaries = opts.binaries ?? locateControlPlaneBinaries();
  const extraUsers = opts.extraUsers ?? [];
  for (const u of extraUsers) {
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

  const dir = await mkdtemp(join(tmpdir(), 'convoy-cp-'));
  const path = (name: string): string => join(dir, name);
  const pidsFile = path('pids');
  const children: SpawnedProcess[] = [];
  let reaper: ChildProcess | undefined;

  // Synchronous last-resort cleanup for process exit and signals.
  const killNowSync = (): void => {
    for (const c of children) signalQuietly(c.proc, 'SIGKILL');
    rmSync(dir, { recursive: true, force: true });
    if (reaper) signalQuietly(reaper, 'SIGTERM');
  };
  const onExit = (): void => killNowSync();
  const onSignal = (signal: NodeJS.Signals): void => {
    killNowSync();
    removeProcessHandlers();
    // Keep the default behaviour (terminate) unless someone else handles the signal.
    if (process.listenerCount(signal) === 0) process.kill(process.pid, signal);
  };
  const removeProcessHandlers = (): void => {
    process.off('exit', onExit);
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  };

  let stopping: Promise<void> | undefined;
  const stop = (): Promise<void> =>
    (stopping ??= (async () => {
      removeProcessHandlers();
      // apiserver first (it would keep retrying a vanished etcd), then etcd.
      for (const c of [...children].reverse()) await terminate(c.proc, c.exited, 5_000);
      await rm(dir, { recursive: true, force: true });
      // The reaper goes last, so a parent killed in the middle of stop() still gets cleaned up.
      if (reaper) signalQuietly(reaper, 'SIGTERM');
    })());

  process.on('exit', onExit);
  if (opts.stopOnSignals !== false) {
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
  }

  try {
    await writeFile(pidsFile, '');
    reaper = spawnReaper(dir);

    const pki = await generatePki();
    // Ports last, to keep the window between "free" and "bound" short.
    const [etcdClientPort, etcdPeerPort, securePort] = await freePorts(3);
    const server = `https://127.0.0.1:${securePort}`;
    const tokens: Record<string, string> = {};
    const tokenLines: string[] = [];
    for (const u of extraUsers) {
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

    const started = performance.now();
    const etcdUrl = `http://127.0.0.1:${etcdClientPort}`;
    const peerUrl = `http://127.0.0.1:${etcdPeerPort}`;
    const etcd = spawnLogged(
      binaries.etcd,
      [
        '--name=convoy',
        `--data-dir=${path('etcd')}`,
        `--listen-client-urls=${etcdUrl}`,
        `--advertise-client-urls=${etcdUrl}`,
        `--listen-peer-urls=${peerUrl}`,
        `--initial-advertise-peer-urls=${peerUrl}`,
        `--initial-cluster=convoy=${peerUrl}`,
        '--unsafe-no-fsync=true',
        '--log-level=warn',
      ],
      path('etcd.log'),
    );
    children.push(etcd);
    appendFileSync(pidsFile, `${etcd.proc.pid}\n`);

    const apiserver = spawnLogged(
      binaries.kubeApiserver,
      [
        `--etcd-servers=${etcdUrl}`,
        `--cert-dir=${path('certs')}`,
        `--tls-cert-file=${path('serving.crt')}`,
        `--tls-private-key-file=${path('serving.key')}`,
        `--secure-port=${securePort}`,
        '--bind-address=127.0.0.1',
        '--advertise-address=127.0.0.1',
        '--service-cluster-ip-range=10.0.0.0/24',
        '--allow-privileged=true',
        '--disable-admission-plugins=ServiceAccount',
        '--authorization-mode=RBAC',
        `--service-account-issuer=${server}/`,
        `--service-account-key-file=${path('sa.pub')}`,
        `--service-account-signing-key-file=${path('sa.key')}`,
        `--client-ca-file=${path('ca.crt')}`,
        `--token-auth-file=${path('tokens.csv')}`,
      ],
      path('kube-apiserver.log'),
    );
    children.push(apiserver);
    appendFileSync(pidsFile, `${apiserver.proc.pid}\n`);

    await waitForReady({
      server,
      pki,
      timeoutMs: opts.readyTimeoutMs ?? 30_000,
      etcd: etcd.proc,
      apiserver: apiserver.proc,
      etcdLog: path('etcd.log'),
      apiserverLog: path('kube-apiserver.log'),
    });
    const startupMs = Math.round(performance.now() - started);

    return {
      kubeconfigPath,
      kubeconfigYaml,
      server,
      tokens,
      caPem: pki.caPem,
      dir,
      pids: { etcd: etcd.proc.pid ?? -1, apiserver: apiserver.proc.pid ?? -1, reaper: reaper.pid ?? -1 },
      startupMs,
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}
