/**
 * Kubeconfig loading for convoy's own Kubernetes transport (`http.ts`): the function bundles do
 * not carry @kubernetes/client-node.
 *
 * What is understood: clusters (server, certificate-authority-data, insecure-skip-tls-verify,
 * tls-server-name), users (client-certificate-data/client-key-data, token, username/password),
 * contexts and current-context. File paths (certificate-authority, client-certificate,
 * client-key, tokenFile) are read only when the caller allows them — the management kubeconfig
 * the process loads itself, never one stored in a Secret. exec and auth-provider plugins and
 * proxy-url are refused here on purpose: this parser loads the kubeconfigs tenants store in a
 * Cluster's Secret (docs/security.md). The user's own kubeconfig (the CLI, `convoy dev`) takes
 * everything kubectl takes, through user-kubeconfig.ts and client-node-config.ts.
 *
 * In-cluster: KUBERNETES_SERVICE_HOST/PORT and the service account's token and CA; the token is
 * re-read at most every minute, since the kubelet rotates it.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { Agent } from 'node:https';
import type { Socket, TcpNetConnectOpts } from 'node:net';
import { homedir } from 'node:os';
import { delimiter, dirname, isAbsolute, join, resolve } from 'node:path';
import { parse as parseYaml } from 'yaml';

/** How to reach one API server. PEM texts, not paths. */
export interface KubeClientSettings {
  /** `https://host:port`, without a trailing slash. */
  server: string;
  ca?: string | undefined;
  cert?: string | undefined;
  key?: string | undefined;
  insecureSkipTlsVerify?: boolean | undefined;
  tlsServerName?: string | undefined;
  token?: string | undefined;
  /** A token file (in-cluster service account), re-read at most every minute. */
  tokenFile?: string | undefined;
  username?: string | undefined;
  password?: string | undefined;
  /**
   * A bearer token minted on demand (EKS: adapters/aws/eks-token.ts), cached by its source until
   * shortly before it expires; used instead of `token` when set.
   */
  tokenSource?: (() => Promise<string>) | undefined;
  /** The connection agent to use instead of one made from the TLS settings (a proxy-url's agent). */
  agent?: Agent | undefined;
  /**
   * The egress policy's connect checks for a server a tenant named (a Cluster's kubeconfig
   * Secret: adapters/kube/target-egress.ts): the `lookup` every new connection resolves with, and
   * a check of each new socket's remote address.
   */
  connectGuard?: ConnectGuard | undefined;
}

/** See KubeClientSettings.connectGuard. */
export interface ConnectGuard {
  lookup: NonNullable<TcpNetConnectOpts['lookup']>;
  onSocket: (socket: Socket) => void;
}

/** A loaded kubeconfig: the current context's cluster and credentials. */
export interface KubeClientConfig extends Readonly<KubeClientSettings> {
  readonly server: string;
  /** Keep-alive TLS connections to this server, shared by every client made from this config. */
  readonly agent: Agent;
  /** The bearer token to send now (the token, or the token file's current content). */
  bearerToken(): string | undefined;
  /**
   * The user every request impersonates (`Impersonate-User`), or undefined to act as the
   * credentials themselves. Set only through actingAs(), from domain/tenancy's decision.
   */
  readonly impersonate?: string | undefined;
}

/**
 * The same cluster, credentials and connections, acting as `user` (Kubernetes impersonation:
 * headers only, no extra request). undefined: `kc` unchanged.
 */
export function actingAs(kc: KubeClientConfig, user: string | undefined): KubeClientConfig {
  if (user === undefined || kc.impersonate === user) return kc;
  return Object.freeze({ ...kc, impersonate: user });
}

/** The kubeconfig cannot be used; the message names the file or field, never a credential. */
export class KubeconfigError extends Error {
  override name = 'KubeconfigError';
}

/** The kubeconfig names no usable current context/cluster. */
export class NoCurrentClusterError extends KubeconfigError {
  override name = 'NoCurrentClusterError';
}

const TOKEN_FILE_TTL_MS = 60_000;
const SERVICE_ACCOUNT_DIR = '/var/run/secrets/kubernetes.io/serviceaccount';

/** A config from explicit settings (tests, in-cluster, and the kubeconfig loaders below). */
export function kubeClientConfig(settings: KubeClientSettings): KubeClientConfig {
  let url: URL;
  try {
    url = new URL(settings.server);
  } catch {
    throw new KubeconfigError(`the cluster server ${JSON.stringify(settings.server)} is not a URL`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw new KubeconfigError(`the cluster server ${url.origin} must be an https:// URL`);
  }
  const server = settings.server.replace(/\/+$/, '');
  const agent =
    settings.agent ??
    new Agent({
      keepAlive: true,
      ...(settings.ca !== undefined ? { ca: settings.ca } : {}),
      ...(settings.cert !== undefined ? { cert: settings.cert } : {}),
      ...(settings.key !== undefined ? { key: settings.key } : {}),
      ...(settings.tlsServerName !== undefined ? { servername: settings.tlsServerName } : {}),
      rejectUnauthorized: settings.insecureSkipTlsVerify !== true,
    });
  const tokenFile = settings.tokenFile;
  let cached: { token: string; readAt: number } | undefined;
  const bearerToken = (): string | undefined => {
    if (settings.token !== undefined && settings.token !== '') return settings.token;
    if (tokenFile === undefined) return undefined;
    const now = Date.now();
    if (cached === undefined || now - cached.readAt >= TOKEN_FILE_TTL_MS) {
      let token: string;
      try {
        token = readFileSync(tokenFile, 'utf8').trim();
      } catch (error) {
        throw new KubeconfigError(
          `cannot read the token file ${tokenFile}: ${(error as NodeJS.ErrnoException).code ?? String(error)}`,
        );
      }
      cached = { token, readAt: now };
    }
    return cached.token;
  };
  return Object.freeze({ ...settings, server, agent, bearerToken });
}

export interface KubeconfigLoadOptions {
  /** The context to use instead of current-context. */
  context?: string | undefined;
  /**
   * Where relative file paths are resolved; undefined: file paths are refused (a stored
   * kubeconfig must not make convoy read its own filesystem).
   */
  baseDir?: string | undefined;
  /** Names the kubeconfig in messages, e.g. `the kubeconfig /home/x/.kube/config`. */
  what?: string | undefined;
}

/** Parses kubeconfig YAML; file paths in it are read relative to the working directory. */
export function fromKubeconfigYaml(text: string, opts: KubeconfigLoadOptions = {}): KubeClientConfig {
  return loadKubeconfigText(text, { baseDir: process.cwd(), ...opts });
}

/** Reads and parses a kubeconfig file; its file paths are relative to the file's folder. */
export function fromKubeconfigFile(
  path: string,
  opts: Pick<KubeconfigLoadOptions, 'context'> = {},
): KubeClientConfig {
  const what = `the kubeconfig ${path}`;
  return loadKubeconfigText(readText(path, what), { ...opts, baseDir: dirname(resolve(path)), what });
}

/**
 * The service account config of a pod: https://$KUBERNETES_SERVICE_HOST:$KUBERNETES_SERVICE_PORT,
 * its CA, and its (rotating) token.
 */
export function inClusterConfig(
  env: Record<string, string | undefined> = process.env,
  dir = SERVICE_ACCOUNT_DIR,
): KubeClientConfig {
  const host = env.KUBERNETES_SERVICE_HOST;
  const port = env.KUBERNETES_SERVICE_PORT;
  if (!host || !port)
    throw new KubeconfigError(
      'not in a cluster: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT are not set',
    );
  const server = `https://${host.includes(':') ? `[${host}]` : host}:${port}`;
  return kubeClientConfig({
    server,
    ca: readText(join(dir, 'ca.crt'), 'the service account CA'),
    tokenFile: join(dir, 'token'),
  });
}

/**
 * What client-node's `loadFromDefault` loads: $KUBECONFIG (the first file of the list that
 * exists), else ~/.kube/config, else the in-cluster service account.
 */
export function fromDefaultKubeconfig(
  env: Record<string, string | undefined> = process.env,
): KubeClientConfig {
  const listed = (env.KUBECONFIG ?? '').split(delimiter).filter((p) => p !== '');
  for (const path of listed) if (existsSync(path)) return fromKubeconfigFile(path);
  const home = join(env.HOME ?? homedir(), '.kube', 'config');
  if (existsSync(home) && statSync(home).isFile()) return fromKubeconfigFile(home);
  if (env.KUBERNETES_SERVICE_HOST) return inClusterConfig(env);
  throw new KubeconfigError(
    'no kubeconfig: set CONVOY_KUBECONFIG or CONVOY_KUBECONFIG_PATH, KUBECONFIG, create ~/.kube/config, or run in a cluster',
  );
}

// --- parsing ---------------------------------------------------------------------------------

function readText(path: string, what: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (error) {
    throw new KubeconfigError(
      `cannot read ${what}: ${(error as NodeJS.ErrnoException).code ?? String(error)}`,
    );
  }
}

type Mapping = Record<string, unknown>;
const isMapping = (value: unknown): value is Mapping =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** `named[]` entries of a kubeconfig list (clusters, users, contexts) by name. */
function named(list: unknown, field: string, what: string): Map<string, Mapping> {
  const found = new Map<string, Mapping>();
  if (list === undefined || list === null) return found;
  if (!Array.isArray(list)) throw new KubeconfigError(`${what}: ${field}s is not a list`);
  for (const item of list as unknown[]) {
    if (!isMapping(item) || typeof item.name !== 'string' || item.name === '') {
      throw new KubeconfigError(`${what}: every entry of ${field}s needs a name`);
    }
    const body = item[field];
    found.set(item.name, isMapping(body) ? body : {});
  }
  return found;
}

function optionalString(map: Mapping, field: string, where: string): string | undefined {
  const value = map[field];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') throw new KubeconfigError(`${where}.${field} is not a string`);
  return value;
}

function loadKubeconfigText(text: string, opts: KubeconfigLoadOptions): KubeClientConfig {
  const what = opts.what ?? 'the kubeconfig';
  let raw: unknown;
  try {
    raw = parseYaml(text);
  } catch {
    // The parser quotes the text, which holds credentials.
    throw new KubeconfigError(`${what} is not valid YAML`);
  }
  if (!isMapping(raw))
    throw new KubeconfigError(`${what} is not a kubeconfig (a mapping with clusters, users and contexts)`);
  const clusters = named(raw.clusters, 'cluster', what);
  const users = named(raw.users, 'user', what);
  const contexts = named(raw.contexts, 'context', what);
  const contextName =
    opts.context ?? (typeof raw['current-context'] === 'string' ? raw['current-context'] : undefined);
  if (contextName === undefined || contextName === '')
    throw new NoCurrentClusterError(`${what} has no current-context`);
  const context = contexts.get(contextName);
  if (context === undefined) throw new NoCurrentClusterError(`${what} has no context ${contextName}`);
  const clusterName = optionalString(context, 'cluster', `contexts[${contextName}].context`);
  const cluster = clusterName === undefined ? undefined : clusters.get(clusterName);
  if (cluster === undefined)
    throw new NoCurrentClusterError(`${what}: context ${contextName} names no cluster that exists`);
  const userName = optionalString(context, 'user', `contexts[${contextName}].context`);
  const user = userName === undefined ? {} : (users.get(userName) ?? {});

  const clusterWhere = `${what}: clusters[${clusterName}].cluster`;
  const userWhere = `${what}: users[${userName ?? ''}].user`;
  for (const plugin of ['exec', 'auth-provider'] as const) {
    if (user[plugin] !== undefined && user[plugin] !== null) {
      throw new KubeconfigError(
        `${userWhere}.${plugin} is not supported by convoy; use a token or a client certificate`,
      );
    }
  }

  if (cluster['proxy-url'] !== undefined && cluster['proxy-url'] !== null) {
    throw new KubeconfigError(
      `${clusterWhere}.proxy-url is not supported by convoy; reach the server directly`,
    );
  }
  const server = optionalString(cluster, 'server', clusterWhere);
  if (server === undefined || server === '') throw new KubeconfigError(`${clusterWhere} has no server`);

  /** Inline `<field>-data` (base64), or the file `<field>` when files are allowed. */
  const pem = (map: Mapping, field: string, where: string): string | undefined => {
    const data = optionalString(map, `${field}-data`, where);
    if (data !== undefined && data !== '') return Buffer.from(data, 'base64').toString('utf8');
    const file = optionalString(map, field, where);
    if (file === undefined || file === '') return undefined;
    if (opts.baseDir === undefined)
      throw new KubeconfigError(
        `${where}.${field} (a file path) is not allowed here; embed ${field}-data instead`,
      );
    return readText(isAbsolute(file) ? file : join(opts.baseDir, file), `${where}.${field}`);
  };

  const tokenFile =
    optionalString(user, 'tokenFile', userWhere) ?? optionalString(user, 'token-file', userWhere);
  if (tokenFile !== undefined && opts.baseDir === undefined) {
    throw new KubeconfigError(
      `${userWhere}.tokenFile (a file path) is not allowed here; embed the token instead`,
    );
  }
  const insecure = cluster['insecure-skip-tls-verify'];
  return kubeClientConfig({
    server,
    ca: pem(cluster, 'certificate-authority', clusterWhere),
    insecureSkipTlsVerify: insecure === true || insecure === 'true',
    tlsServerName: optionalString(cluster, 'tls-server-name', clusterWhere),
    cert: pem(user, 'client-certificate', userWhere),
    key: pem(user, 'client-key', userWhere),
    token: optionalString(user, 'token', userWhere),
    tokenFile:
      tokenFile === undefined || opts.baseDir === undefined
        ? undefined
        : isAbsolute(tokenFile)
          ? tokenFile
          : join(opts.baseDir, tokenFile),
    username: optionalString(user, 'username', userWhere),
    password: optionalString(user, 'password', userWhere),
  });
}

/**
 * Loads a kubeconfig that came from a Secret: no file paths are read. Callers check it first for
 * exec/auth-provider/file fields (cluster-resolver's loadStoredKubeConfig) to give their own message.
 */
export function fromStoredKubeconfigYaml(text: string, what: string): KubeClientConfig {
  return loadKubeconfigText(text, { what });
}
