/**
 * The CLI's connection to the Kubernetes API: the user's own kubeconfig (so
 * their RBAC applies), found and merged like kubectl does (--kubeconfig, else
 * every file of $KUBECONFIG, else ~/.kube/config, else in-cluster), with
 * --context; every kind of credential kubectl takes (exec and auth-provider
 * plugins, certificates, tokens, token files, proxy-url), through
 * @kubernetes/client-node's loader (adapters/kube/user-kubeconfig.ts).
 */
import type { Release } from '../domain/api/objects.ts';
import { releasePath } from '../adapters/kube/convoy-paths.ts';
import { createKubeClient, isKubeApiError } from '../adapters/kube/http.ts';
import { inClusterConfig, KubeconfigError, type KubeClientConfig } from '../adapters/kube/kubeconfig.ts';
import type { Cluster, ReleaseKey } from '../views/cluster.ts';
import type { GlobalFlags } from './args.ts';
import { CliFailure } from './output.ts';

/**
 * Loads the kubeconfig and settles its credentials (an exec plugin runs here, once). A single
 * plain kubeconfig (token, certificates, no plugin, proxy or impersonation) is read without
 * client-node (adapters/kube/kubeconfig-files.ts); otherwise client-node's loader is imported now,
 * so only the kubeconfigs that need it pay its ~300 ms.
 */
export async function connect(flags: GlobalFlags, env: NodeJS.ProcessEnv = process.env): Promise<Cluster> {
  const { plainKubeconfig, userKubeconfigFiles } = await import('../adapters/kube/kubeconfig-files.ts');
  const files = userKubeconfigFiles({ kubeconfig: flags.kubeconfig, env });
  let config: KubeClientConfig;
  const plain = plainKubeconfig(files, flags.context);
  if (plain !== undefined) config = plain;
  else if (files.length > 0) {
    const { loadUserKubeConfig } = await import('../adapters/kube/user-kubeconfig.ts');
    const { connectClientNodeKubeConfig } = await import('../adapters/kube/client-node-config.ts');
    config = await connectClientNodeKubeConfig(loadUserKubeConfig(files, flags.context), env);
  } else if (env.KUBERNETES_SERVICE_HOST) config = inClusterConfig(env);
  else throw new KubeconfigError('no kubeconfig: set KUBECONFIG or --kubeconfig, or create ~/.kube/config');
  const client = createKubeClient(config, { timeoutMs: 30_000, userAgent: 'convoy-cli' });
  return { client, config, close: () => config.agent.destroy() };
}

/** The Release as the API server returns it; a clear line when it does not exist. */
export async function readRaw(cluster: Cluster, key: ReleaseKey): Promise<Record<string, unknown>> {
  try {
    return await cluster.client.get(releasePath(key.namespace, key.name));
  } catch (error) {
    if (isKubeApiError(error, 404)) throw new CliFailure(`Release ${key.namespace}/${key.name} not found`);
    throw error;
  }
}

/** The Release, parsed. */
export async function readRelease(cluster: Cluster, key: ReleaseKey): Promise<Release> {
  return parseOrFail(await readRaw(cluster, key), key);
}

/** The Release through its full schema (zod; imported here, so `get`, which prints rows only, does not load it). */
export async function parseOrFail(raw: unknown, key: ReleaseKey): Promise<Release> {
  const { parseRelease } = await import('../domain/api/objects.ts');
  const parsed = parseRelease(raw);
  if (!parsed.ok)
    throw new CliFailure(`Release ${key.namespace}/${key.name} does not parse: ${parsed.error}`);
  return parsed.value;
}

/** A JSON merge patch on the Release (annotations, spec.suspend): the user's RBAC decides. */
export async function patchRelease(
  cluster: Cluster,
  key: ReleaseKey,
  patch: Record<string, unknown>,
): Promise<Release> {
  try {
    return await parseOrFail(
      await cluster.client.patch(releasePath(key.namespace, key.name), patch, { type: 'merge' }),
      key,
    );
  } catch (error) {
    if (isKubeApiError(error, 404)) throw new CliFailure(`Release ${key.namespace}/${key.name} not found`);
    throw error;
  }
}
