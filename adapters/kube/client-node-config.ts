/**
 * The bridge from a @kubernetes/client-node KubeConfig (the user's own kubeconfig, loaded by
 * user-kubeconfig.ts or client-node itself) to the KubeClientConfig of convoy's transport
 * (http.ts). Never imported by the functions: they load stored kubeconfigs with kubeconfig.ts,
 * which refuses plugins and file paths.
 *
 * Credentials, as kubectl has them: client certificates and CAs (files or data), tokens, a
 * `tokenFile` (re-read every minute), basic auth, `as` (impersonation), exec plugins
 * (exec-credential.ts: run once, kept until their expirationTimestamp) and auth-provider plugins
 * (OIDC, and client-node's gcp/azure ones, through client-node's authenticators, which keep their
 * token until it expires). The per-request cost of a plugin is a cache lookup.
 *
 * `connectClientNodeKubeConfig` (async; the CLI) also takes `proxy-url` (client-node's http,
 * https and socks proxy agents) and an exec plugin's client certificate, since both are settled
 * before the first request. `fromClientNodeKubeConfig` (sync; the relay, `convoy dev`, tests)
 * refuses those two with a clear line.
 */
import type { RequestOptions } from 'node:https';
import { readFileSync } from 'node:fs';
import { KubeConfig, type Cluster, type User } from '@kubernetes/client-node';
import { execCredentialSource, type ExecCredential } from './exec-credential.ts';
import {
  actingAs,
  kubeClientConfig,
  KubeconfigError,
  type KubeClientConfig,
  type KubeClientSettings,
} from './kubeconfig.ts';

/** A loaded config for a kubeconfig whose credentials are known without running anything first. */
export function fromClientNodeKubeConfig(
  kc: KubeConfig,
  env: NodeJS.ProcessEnv = process.env,
): KubeClientConfig {
  const { cluster, user } = currentOf(kc);
  if (cluster.proxyUrl) {
    throw new KubeconfigError(
      `cluster ${cluster.name}: proxy-url is used by the convoy CLI, not here; reach the server directly`,
    );
  }
  const credential = credentialSource(user, env);
  const tokenSource =
    credential === undefined
      ? undefined
      : async (): Promise<string> => {
          const { token } = await credential();
          if (token === undefined) {
            throw new KubeconfigError(
              `user ${user?.name ?? ''}: its plugin gave a client certificate, which only the convoy CLI uses; use a token here`,
            );
          }
          return token;
        };
  return actingAs(
    kubeClientConfig({ ...settingsOf(cluster, user), tokenSource }),
    user?.impersonateUser ?? undefined,
  );
}

/**
 * A loaded config for any kubeconfig kubectl accepts: runs the user's plugin once now (so a failing
 * plugin is one clear error before any request), and builds the proxy agent when proxy-url is set.
 */
export async function connectClientNodeKubeConfig(
  kc: KubeConfig,
  env: NodeJS.ProcessEnv = process.env,
): Promise<KubeClientConfig> {
  const { cluster, user } = currentOf(kc);
  const credential = credentialSource(user, env);
  const first = credential === undefined ? undefined : await credential();
  const settings: KubeClientSettings = {
    ...settingsOf(cluster, user),
    ...(first?.clientCertificateData !== undefined
      ? { cert: first.clientCertificateData, key: first.clientKeyData }
      : {}),
  };
  if (credential !== undefined && first?.token !== undefined) {
    // The first token for code that needs one now (the relay's HTTP API); requests ask the source.
    settings.token = first.token;
    settings.tokenSource = async () => (await credential()).token ?? '';
  }
  if (cluster.proxyUrl) settings.agent = await proxyAgent(cluster, settings);
  return actingAs(kubeClientConfig(settings), user?.impersonateUser ?? undefined);
}

function currentOf(kc: KubeConfig): { cluster: Cluster; user: User | null } {
  const cluster = kc.getCurrentCluster();
  if (cluster === null)
    throw new KubeconfigError('the kubeconfig has no current cluster (check current-context)');
  return { cluster, user: kc.getCurrentUser() };
}

/** Server, TLS and the credentials that need no plugin. */
function settingsOf(cluster: Cluster, user: User | null): KubeClientSettings {
  const pem = (
    data: string | undefined | null,
    file: string | undefined | null,
    what: string,
  ): string | undefined => {
    if (data) return Buffer.from(data, 'base64').toString('utf8');
    if (!file) return undefined;
    try {
      return readFileSync(file, 'utf8');
    } catch (error) {
      throw new KubeconfigError(
        `cannot read ${what} ${file}: ${(error as NodeJS.ErrnoException).code ?? String(error)}`,
      );
    }
  };
  const authProvider = user?.authProvider as
    { name?: string; config?: { tokenFile?: string } } | undefined | null;
  return {
    server: cluster.server,
    ca: pem(cluster.caData, cluster.caFile, `the certificate-authority of cluster ${cluster.name}:`),
    insecureSkipTlsVerify: cluster.skipTLSVerify,
    tlsServerName: cluster.tlsServerName,
    cert: pem(user?.certData, user?.certFile, `the client-certificate of user ${user?.name ?? ''}:`),
    key: pem(user?.keyData, user?.keyFile, `the client-key of user ${user?.name ?? ''}:`),
    token: user?.token ?? undefined,
    // loadFromCluster() and user-kubeconfig.ts record a token file as the `tokenFile` auth provider.
    tokenFile: authProvider?.name === 'tokenFile' ? authProvider.config?.tokenFile : undefined,
    username: user?.username ?? undefined,
    password: user?.password ?? undefined,
  };
}

type CredentialSource = () => Promise<ExecCredential>;

/** The plugin behind the user's credentials, if any: exec, or a client-node auth-provider. */
function credentialSource(user: User | null, env: NodeJS.ProcessEnv): CredentialSource | undefined {
  if (user === null) return undefined;
  if (user.exec)
    return execCredentialSource(user.exec as Parameters<typeof execCredentialSource>[0], user.name, env);
  const provider = user.authProvider as { name?: string } | undefined | null;
  if (!provider || provider.name === 'tokenFile') return undefined;
  return authProviderSource(user, provider.name ?? '');
}

/**
 * client-node's authenticator for `auth-provider` (oidc, gcp, azure), on a KubeConfig holding only
 * this user's plugin, so a request costs the authenticator's cache lookup and reads no files.
 * Calls run one at a time: a refresh happens once, not once per concurrent request.
 */
function authProviderSource(user: User, provider: string): CredentialSource {
  const only = new KubeConfig();
  only.loadFromOptions({
    // The cluster is never contacted through this KubeConfig; it only has to exist.
    clusters: [{ name: 'credentials', server: 'https://credentials.invalid', skipTLSVerify: false }],
    users: [{ name: user.name, authProvider: user.authProvider as unknown }],
    contexts: [{ name: 'credentials', cluster: 'credentials', user: user.name }],
    currentContext: 'credentials',
  });
  let queue: Promise<unknown> = Promise.resolve();
  return () => {
    const next = queue.then(async (): Promise<ExecCredential> => {
      const opts: RequestOptions = { headers: {} };
      try {
        await only.applyToHTTPSOptions(opts);
      } catch (error) {
        throw new KubeconfigError(
          `the ${provider} auth-provider of kubeconfig user ${user.name} failed: ${error instanceof Error ? error.message.split('\n')[0] : String(error)}`,
        );
      }
      const header = (opts.headers as Record<string, string | undefined>)['Authorization'] ?? '';
      const token = /^Bearer (.+)$/.exec(header)?.[1];
      if (token === undefined)
        throw new KubeconfigError(
          `the ${provider} auth-provider of kubeconfig user ${user.name} gave no bearer token`,
        );
      return { token };
    });
    queue = next.catch(() => undefined);
    return next;
  };
}

/** client-node's proxy agent for `proxy-url` (http, https or socks), with the cluster's TLS settings. */
async function proxyAgent(
  cluster: Cluster,
  settings: KubeClientSettings,
): Promise<NonNullable<KubeClientSettings['agent']>> {
  const b64 = (pem: string | undefined) =>
    pem === undefined ? undefined : Buffer.from(pem).toString('base64');
  const view = new KubeConfig();
  view.loadFromOptions({
    clusters: [{ ...cluster, caFile: undefined, caData: b64(settings.ca) }],
    users: [{ name: 'tls', certData: b64(settings.cert), keyData: b64(settings.key) }],
    contexts: [{ name: 'tls', cluster: cluster.name, user: 'tls' }],
    currentContext: 'tls',
  });
  const opts: RequestOptions = {};
  try {
    await view.applyToHTTPSOptions(opts);
  } catch (error) {
    // The proxy URL is not quoted: it may carry a user and password.
    throw new KubeconfigError(
      `cluster ${cluster.name}: its proxy-url cannot be used: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
  if (!opts.agent)
    throw new KubeconfigError(`cluster ${cluster.name}: client-node made no agent for its proxy-url`);
  return opts.agent as NonNullable<KubeClientSettings['agent']>;
}
