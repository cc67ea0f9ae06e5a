// A real etcd + kube-apiserver on loopback, for integration tests (one per test run,
// started from vitest's globalSetup) and for `convoy dev --embedded`.
// Kept free of vitest imports. See /docs and TEST-CONTROL-PLANE.md for the flags.
import { generateKeyPair, randomBytes, webcrypto } from 'node:crypto';
import { spawn, type ChildProcess } from 'node:child_process';
import { accessSync, appendFileSync, closeSync, constants as fsConstants, openSync, rmSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { request as httpsRequest } from 'node:https';
import { createServer, type AddressInfo } from 'node:net';
import { homedir, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import {
  ApiException,
  ApiextensionsV1Api,
  CustomObjectsApi,
  KubeConfig,
  KubernetesObjectApi,
  loadYaml,
  PatchStrategy,
  type KubernetesObject,
} from '@kubernetes/client-node';
import { parseAllDocuments, stringify as stringifyYaml } from 'yaml';

export const DEFAULT_K8S_VERSION = 'v1.34.4';
export const DEFAULT_ETCD_VERSION = 'v3.6.16';
const BUILD_SCRIPT = 'bash scripts/build-control-plane.sh';

export class ControlPlaneBinariesNotFoundError extends Error {
  override name = 'ControlPlaneBinariesNotFoundError';
}

export class ControlPlaneStartError extends Error {
  override name = 'ControlPlaneStartError';
}

export class CrdInstallError extends Error {
  override name = 'CrdInstallError';
}

export interface ControlPlaneBinaries {
  /** The folder both binaries were found in. */
  readonly dir: string;
  readonly etcd: string;
  readonly kubeApiserver: string;
  /** Where they came from: the KUBEBUILDER_ASSETS folder or the per-user build cache. */
  readonly source: 'KUBEBUILDER_ASSETS' | 'cache';
}

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

/**
 * Finds etcd and kube-apiserver: KUBEBUILDER_ASSETS first, then the versioned build cache
 * `${XDG_CACHE_HOME:-~/.cache}/convoy/control-plane/<k8s>-<etcd>/` that
 * scripts/build-control-plane.sh fills. Throws ControlPlaneBinariesNotFoundError otherwise.
 */
export function locateControlPlaneBinaries(env: NodeJS.ProcessEnv = process.env): ControlPlaneBinaries {
  const has = (dir: string): boolean =>
    isExecutable(join(dir, 'etcd')) && isExecutable(join(dir, 'kube-apiserver'));
  const assets = env.KUBEBUILDER_ASSETS;
  if (assets && has(assets)) {
    return {
      dir: assets,
      etcd: join(assets, 'etcd'),
      kubeApiserver: join(assets, 'kube-apiserver'),
      source: 'KUBEBUILDER_ASSETS',
    };
  }
  const k8s = env.CONVOY_K8S_VERSION || DEFAULT_K8S_VERSION;
  const etcd = env.CONVOY_ETCD_VERSION || DEFAULT_ETCD_VERSION;
  const cacheRoot = env.XDG_CACHE_HOME || join(env.HOME || homedir(), '.cache');
  const cached = join(cacheRoot, 'convoy', 'control-plane', `${k8s}-${etcd}`);
  if (has(cached)) {
    return {
      dir: cached,
      etcd: join(cached, 'etcd'),
      kubeApiserver: join(cached, 'kube-apiserver'),
      source: 'cache',
    };
  }
  const assetsNote = assets
    ? `KUBEBUILDER_ASSETS is set to ${assets} but that folder lacks an executable 'etcd' and 'kube-apiserver'`
    : 'KUBEBUILDER_ASSETS is not set';
  throw new ControlPlaneBinariesNotFoundError(
    `No etcd/kube-apiserver binaries found: ${assetsNote}, and the build cache ${cached} does not hold both. ` +
      `Either run \`${BUILD_SCRIPT}\` (builds kube-apiserver ${k8s} and etcd ${etcd} from Go modules into that cache; ` +
      `CONVOY_K8S_VERSION / CONVOY_ETCD_VERSION pick other versions), or set KUBEBUILDER_ASSETS to a folder holding ` +
      `'etcd' and 'kube-apiserver' (for example from setup-envtest).`,
  );
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
  const children: { proc: ChildProcess; exited: Promise<void> }[] = [];
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
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);

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

/**
 * Server-side applies (field manager `convoy-installer`, force) every *.yaml in `dir`, CRDs first,
 * and waits until each CRD reports Established=True. A missing or empty dir is not an error.
 */
export async function installCrds(
  kubeconfigPath: string,
  dir = 'config/crds',
  opts: { readonly timeoutMs?: number } = {},
): Promise<void> {
  let files: string[];
  try {
    files = (await readdir(dir)).filter((f) => f.endsWith('.yaml') || f.endsWith('.yml')).sort();
  } catch (err) {
    if (isErrnoException(err) && err.code === 'ENOENT') return;
    throw err;
  }
  if (files.length === 0) return;

  // Each document keeps its YAML text: loadYaml turns it into client-node's model shape
  // (`enum` -> `_enum`, `x-kubernetes-*` -> camelCase, ...), which patch() serializes back.
  // Passing raw YAML objects straight to patch() silently drops those schema fields.
  const docs: { file: string; text: string; kind: string; apiVersion: string; name: string }[] = [];
  for (const file of files) {
    const full = resolve(dir, file);
    const parsed = parseAllDocuments(await readFile(full, 'utf8'));
    for (const doc of parsed) {
      if (doc.errors.length > 0) {
        throw new CrdInstallError(`${full}: invalid YAML: ${doc.errors[0]?.message ?? 'unknown error'}`);
      }
      const obj = doc.toJS() as Partial<KubernetesObject> | null;
      if (obj === null || obj === undefined) continue;
      if (!obj.apiVersion || !obj.kind || !obj.metadata?.name) {
        throw new CrdInstallError(`${full}: every document needs apiVersion, kind and metadata.name`);
      }
      docs.push({
        file: full,
        text: doc.toString(),
        kind: obj.kind,
        apiVersion: obj.apiVersion,
        name: obj.metadata.name,
      });
    }
  }

  const kc = new KubeConfig();
  kc.loadFromFile(kubeconfigPath);
  const objects = KubernetesObjectApi.makeApiClient(kc);
  const isCrd = (d: (typeof docs)[number]): boolean =>
    d.kind === 'CustomResourceDefinition' && d.apiVersion.startsWith('apiextensions.k8s.io/');
  const apply = async (d: (typeof docs)[number]): Promise<void> => {
    try {
      await objects.patch(
        loadYaml<KubernetesObject>(d.text),
        undefined,
        undefined,
        'convoy-installer',
        true,
        PatchStrategy.ServerSideApply,
      );
    } catch (err) {
      throw new CrdInstallError(
        `${d.file}: server-side apply of ${d.kind} ${d.name} failed: ${errorText(err)}`,
        {
          cause: err,
        },
      );
    }
  };

  const crds = docs.filter(isCrd);
  for (const d of crds) await apply(d);

  const ext = kc.makeApiClient(ApiextensionsV1Api);
  const deadline = Date.now() + (opts.timeoutMs ?? 30_000);
  for (const d of crds) {
    for (;;) {
      const crd = await ext.readCustomResourceDefinition({ name: d.name });
      if (crd.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True')) break;
      if (Date.now() > deadline) {
        const conds = JSON.stringify(crd.status?.conditions ?? []);
        throw new CrdInstallError(
          `${d.file}: CRD ${d.name} not Established after ${opts.timeoutMs ?? 30_000} ms; conditions: ${conds}`,
        );
      }
      await sleep(100);
    }
  }
  // Established is not the end: the apiserver (re)builds the watch cache of a new
  // resource and answers 429 "storage is (re)initializing" until it is ready.
  const custom = kc.makeApiClient(CustomObjectsApi);
  for (const d of crds) {
    const spec = (loadYaml<KubernetesObject & { spec: { group: string; names: { plural: string }; versions: { name: string }[] } }>(d.text)).spec;
    for (;;) {
      try {
        await custom.listClusterCustomObject({ group: spec.group, version: spec.versions[0].name, plural: spec.names.plural, limit: 1 });
        break;
      } catch (err) {
        if (Date.now() > deadline) throw new CrdInstallError(`${d.file}: ${d.name} is not served: ${errorText(err)}`, { cause: err });
        await sleep(100);
      }
    }
  }

  for (const d of docs.filter((x) => !isCrd(x))) await apply(d);
}

// ---------------------------------------------------------------------------------------------

interface Pki {
  caPem: string;
  servingCertPem: string;
  servingKeyPem: string;
  adminCertPem: string;
  adminKeyPem: string;
  saPublicPem: string;
  saPrivatePem: string;
}

async function generatePki(): Promise<Pki> {
  const x509 = await loadX509();
  const crypto = webcrypto;
  const ec = { name: 'ECDSA', namedCurve: 'P-256' } as const;
  const signingAlgorithm = { name: 'ECDSA', hash: 'SHA-256' } as const;
  const newKeys = () => crypto.subtle.generateKey(ec, true, ['sign', 'verify']);
  const keyPem = async (key: webcrypto.CryptoKey) =>
    x509.PemConverter.encode(await crypto.subtle.exportKey('pkcs8', key), 'PRIVATE KEY');

  const notBefore = new Date(Date.now() - 60 * 60 * 1000);
  const notAfter = new Date(Date.now() + 365 * 24 * 60 * 60 * 1000);

  const saKeys = promisify(generateKeyPair)('rsa', {
    modulusLength: 2048,
    publicKeyEncoding: { type: 'spki', format: 'pem' },
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
  });

  const [caKeys, servingKeys, adminKeys] = await Promise.all([newKeys(), newKeys(), newKeys()]);
  const ca = await x509.X509CertificateGenerator.createSelfSigned(
    {
      name: 'CN=convoy-test-ca',
      keys: caKeys,
      notBefore,
      notAfter,
      signingAlgorithm,
      extensions: [
        new x509.BasicConstraintsExtension(true, undefined, true),
        new x509.KeyUsagesExtension(
          x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign | x509.KeyUsageFlags.digitalSignature,
          true,
        ),
        await x509.SubjectKeyIdentifierExtension.create(caKeys.publicKey, false, crypto),
      ],
    },
    crypto,
  );
  const leaf = async (
    subject: string,
    keys: webcrypto.CryptoKeyPair,
    usage: string,
    sans?: { type: 'dns' | 'ip'; value: string }[],
  ) =>
    x509.X509CertificateGenerator.create(
      {
        subject,
        issuer: ca.subject,
        publicKey: keys.publicKey,
        signingKey: caKeys.privateKey,
        notBefore,
        notAfter,
        signingAlgorithm,
        extensions: [
          new x509.BasicConstraintsExtension(false, undefined, true),
          new x509.KeyUsagesExtension(
            x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.keyEncipherment,
            true,
          ),
          new x509.ExtendedKeyUsageExtension([usage], false),
          await x509.AuthorityKeyIdentifierExtension.create(ca, false, crypto),
          ...(sans ? [new x509.SubjectAlternativeNameExtension(sans, false)] : []),
        ],
      },
      crypto,
    );
  const serving = await leaf('CN=kube-apiserver', servingKeys, x509.ExtendedKeyUsage.serverAuth, [
    { type: 'dns', value: 'localhost' },
    { type: 'ip', value: '127.0.0.1' },
  ]);
  const admin = await leaf('CN=admin, O=system:masters', adminKeys, x509.ExtendedKeyUsage.clientAuth);
  const sa = await saKeys;
  return {
    caPem: ca.toString('pem'),
    servingCertPem: serving.toString('pem'),
    servingKeyPem: await keyPem(servingKeys.privateKey),
    adminCertPem: admin.toString('pem'),
    adminKeyPem: await keyPem(adminKeys.privateKey),
    saPublicPem: sa.publicKey,
    saPrivatePem: sa.privateKey,
  };
}

/**
 * @peculiar/x509 2.x loads tsyringe, which throws at import time unless a Reflect metadata
 * polyfill (reflect-metadata, core-js, @abraham/reflection) is present. None is a dependency
 * here, so install a minimal one, only when no polyfill is loaded, before importing it.
 * TODO: drop this once `reflect-metadata` is added to package.json and imported instead.
 */
async function loadX509(): Promise<typeof import('@peculiar/x509')> {
  installReflectMetadataShim();
  return import('@peculiar/x509');
}

function installReflectMetadataShim(): void {
  const reflect = Reflect as unknown as Record<string, unknown>;
  if (typeof reflect.getMetadata === 'function') return;
  type Key = unknown;
  type Prop = string | symbol | undefined;
  const store = new WeakMap<object, Map<Prop, Map<Key, unknown>>>();
  const table = (target: object, prop: Prop, create: boolean): Map<Key, unknown> | undefined => {
    let byProp = store.get(target);
    if (!byProp) {
      if (!create) return undefined;
      byProp = new Map();
      store.set(target, byProp);
    }
    let byKey = byProp.get(prop);
    if (!byKey && create) {
      byKey = new Map();
      byProp.set(prop, byKey);
    }
    return byKey;
  };
  const defineMetadata = (key: Key, value: unknown, target: object, prop?: Prop): void => {
    table(target, prop, true)?.set(key, value);
  };
  const hasOwnMetadata = (key: Key, target: object, prop?: Prop): boolean =>
    table(target, prop, false)?.has(key) ?? false;
  const getOwnMetadata = (key: Key, target: object, prop?: Prop): unknown =>
    table(target, prop, false)?.get(key);
  const hasMetadata = (key: Key, target: object, prop?: Prop): boolean => {
    for (let t: object | null = target; t !== null; t = Object.getPrototypeOf(t) as object | null) {
      if (hasOwnMetadata(key, t, prop)) return true;
    }
    return false;
  };
  const getMetadata = (key: Key, target: object, prop?: Prop): unknown => {
    for (let t: object | null = target; t !== null; t = Object.getPrototypeOf(t) as object | null) {
      if (hasOwnMetadata(key, t, prop)) return getOwnMetadata(key, t, prop);
    }
    return undefined;
  };
  const metadata = (key: Key, value: unknown) => (target: object, prop?: Prop) =>
    defineMetadata(key, value, target, prop);
  Object.assign(reflect, {
    defineMetadata,
    hasOwnMetadata,
    getOwnMetadata,
    hasMetadata,
    getMetadata,
    metadata,
  });
}

function renderKubeconfig(server: string, pki: Pki, tokens: Record<string, string>): string {
  const b64 = (s: string) => Buffer.from(s).toString('base64');
  const users = Object.entries(tokens);
  return stringifyYaml({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'convoy-test', cluster: { server, 'certificate-authority-data': b64(pki.caPem) } }],
    users: [
      {
        name: 'admin',
        user: { 'client-certificate-data': b64(pki.adminCertPem), 'client-key-data': b64(pki.adminKeyPem) },
      },
      ...users.map(([name, token]) => ({ name, user: { token } })),
    ],
    contexts: [
      { name: 'admin', context: { cluster: 'convoy-test', user: 'admin', namespace: 'default' } },
      ...users.map(([name]) => ({
        name,
        context: { cluster: 'convoy-test', user: name, namespace: 'default' },
      })),
    ],
    'current-context': 'admin',
    preferences: {},
  });
}

/** Asks the OS for `n` distinct free loopback ports (listen on 0, read, close). */
async function freePorts(n: number): Promise<number[]> {
  const servers = await Promise.all(
    Array.from(
      { length: n },
      () =>
        new Promise<ReturnType<typeof createServer>>((ok, fail) => {
          const s = createServer();
          s.once('error', fail);
          s.listen(0, '127.0.0.1', () => ok(s));
        }),
    ),
  );
  const ports = servers.map((s) => (s.address() as AddressInfo).port);
  await Promise.all(servers.map((s) => new Promise<void>((ok) => s.close(() => ok()))));
  return ports;
}

function spawnLogged(
  bin: string,
  args: string[],
  logFile: string,
): { proc: ChildProcess; exited: Promise<void> } {
  const fd = openSync(logFile, 'a');
  try {
    const proc = spawn(bin, args, { stdio: ['ignore', fd, fd] });
    const exited = new Promise<void>((ok) => {
      if (proc.exitCode !== null || proc.signalCode !== null) ok();
      proc.once('exit', () => ok());
      proc.once('error', () => ok());
    });
    if (proc.pid === undefined) {
      throw new ControlPlaneStartError(`could not start ${bin} (see ${logFile}); is it executable?`);
    }
    return { proc, exited };
  } finally {
    closeSync(fd);
  }
}

/**
 * A detached `sh` loop that outlives a SIGKILLed parent: once the parent pid is gone it SIGKILLs
 * every pid listed in `<dir>/pids` (only while its command line still names `dir`, so a reused
 * pid is left alone), waits until they are gone, and removes `dir`.
 */
function spawnReaper(dir: string): ChildProcess {
  const script = `
parent="$1"; dir="$2"
alive() {
  kill -0 "$1" 2>/dev/null || return 1
  if [ -r "/proc/$1/stat" ] && grep -q ') Z ' "/proc/$1/stat" 2>/dev/null; then return 1; fi
  return 0
}
ours() {
  alive "$1" || return 1
  [ -r "/proc/$1/cmdline" ] || return 0
  tr '\\000' '\\n' < "/proc/$1/cmdline" 2>/dev/null | grep -qF -- "$dir"
}
while alive "$parent"; do sleep 0.5; done
pids=""
[ -f "$dir/pids" ] && pids=$(cat "$dir/pids")
live=""
for p in $pids; do ours "$p" && live="$live $p"; done
# The data is thrown away, so there is nothing to shut down gracefully.
[ -n "$live" ] && kill -KILL $live 2>/dev/null
i=0
while [ -n "$live" ] && [ $i -lt 50 ]; do
  sleep 0.1; i=$((i + 1))
  still=""
  for p in $live; do ours "$p" && still="$still $p"; done
  live="$still"
done
rm -rf -- "$dir"
`;
  const proc = spawn('sh', ['-c', script, 'convoy-control-plane-reaper', String(process.pid), dir], {
    detached: true,
    stdio: 'ignore',
  });
  proc.unref();
  return proc;
}

interface ReadyWait {
  server: string;
  pki: Pki;
  timeoutMs: number;
  etcd: ChildProcess;
  apiserver: ChildProcess;
  etcdLog: string;
  apiserverLog: string;
}

async function waitForReady(w: ReadyWait): Promise<void> {
  const deadline = Date.now() + w.timeoutMs;
  let last = 'no answer yet';
  for (;;) {
    for (const [name, proc, log] of [
      ['etcd', w.etcd, w.etcdLog],
      ['kube-apiserver', w.apiserver, w.apiserverLog],
    ] as const) {
      if (proc.exitCode !== null || proc.signalCode !== null) {
        throw new ControlPlaneStartError(
          `${name} exited (code ${proc.exitCode ?? 'none'}, signal ${proc.signalCode ?? 'none'}) before ${w.server}/readyz was ok. ` +
            `Last lines of its log:\n${await tail(log)}`,
        );
      }
    }
    try {
      const res = await get(`${w.server}/readyz`, w.pki);
      if (res.status === 200 && res.body.trim() === 'ok') return;
      last = `HTTP ${res.status}: ${res.body.slice(0, 500)}`;
    } catch (err) {
      last = errorText(err);
    }
    if (Date.now() > deadline) {
      throw new ControlPlaneStartError(
        `kube-apiserver at ${w.server} not ready after ${w.timeoutMs} ms (last /readyz: ${last}). ` +
          `Last lines of its log:\n${await tail(w.apiserverLog)}`,
      );
    }
    await sleep(100);
  }
}

function get(url: string, pki: Pki): Promise<{ status: number; body: string }> {
  return new Promise((ok, fail) => {
    const req = httpsRequest(
      url,
      { ca: pki.caPem, cert: pki.adminCertPem, key: pki.adminKeyPem, agent: false, timeout: 2_000 },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          ok({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }),
        );
        res.on('error', fail);
      },
    );
    req.on('timeout', () => req.destroy(new Error(`GET ${url} timed out`)));
    req.on('error', fail);
    req.end();
  });
}

async function terminate(proc: ChildProcess, exited: Promise<void>, graceMs: number): Promise<void> {
  if (proc.exitCode !== null || proc.signalCode !== null) return;
  signalQuietly(proc, 'SIGTERM');
  const timer = sleep(graceMs, 'timeout' as const);
  if ((await Promise.race([exited.then(() => 'exited' as const), timer])) === 'timeout') {
    signalQuietly(proc, 'SIGKILL');
    await exited;
  }
}

function signalQuietly(proc: ChildProcess, signal: NodeJS.Signals): void {
  if (proc.exitCode !== null || proc.signalCode !== null) return;
  proc.kill(signal); // returns false when the process is already gone; that is fine here
}

async function tail(file: string, lines = 40): Promise<string> {
  try {
    const text = await readFile(file, 'utf8');
    return text.trimEnd().split('\n').slice(-lines).join('\n');
  } catch (err) {
    return `(could not read ${file}: ${errorText(err)})`;
  }
}

function isExecutable(file: string): boolean {
  try {
    accessSync(file, fsConstants.X_OK);
    return true;
  } catch {
    return false;
  }
}

function isErrnoException(err: unknown): err is NodeJS.ErrnoException {
  return err instanceof Error && 'code' in err;
}

function errorText(err: unknown): string {
  if (err instanceof ApiException) {
    // client-node's message repeats the whole body and response headers; the Status message says it all.
    const body: unknown = err.body;
    let parsed: unknown = body;
    if (typeof body === 'string') {
      try {
        parsed = JSON.parse(body);
      } catch {
        parsed = undefined; // not JSON: fall back to the raw text below
      }
    }
    const message = (parsed as { message?: unknown } | undefined)?.message;
    return `HTTP ${err.code}: ${typeof message === 'string' ? message : String(body)}`;
  }
  return err instanceof Error ? err.message : String(err);
}
