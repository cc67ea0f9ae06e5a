/**
 * Clients of the management cluster that act with the CALLER's bearer token
 * (not the relay's), for the routes that read what only the caller may read:
 * the live objects of a Release's tree (and the dry run that decides their
 * sync), a remote Cluster's kubeconfig Secret, and Events. The API server's
 * own RBAC then decides, exactly as for kubectl or the CLI.
 *
 * The relay's config gives only the address and the CA; its credentials are
 * never copied. Each client is closed after its request.
 */
import { createKubeClient } from '../../adapters/kube/http.ts';
import { kubeClientConfig, type KubeClientConfig } from '../../adapters/kube/kubeconfig.ts';
import type { TargetEgress } from '../../adapters/kube/target-egress.ts';
import type { Cluster } from '../../views/cluster.ts';
import { ApiError } from './api-common.ts';

export interface UserClusters {
  /** A connection to the management cluster as the holder of `token`. Close it when done. */
  open(token: string): Cluster;
}

/** `targetEgress`: the policy a remote Cluster's kubeconfig server must pass (the installation's). */
export function userClustersOf(relay: KubeClientConfig, targetEgress?: TargetEgress): UserClusters {
  return {
    open(token) {
      const config = kubeClientConfig({
        server: relay.server,
        ca: relay.ca,
        insecureSkipTlsVerify: relay.insecureSkipTlsVerify,
        tlsServerName: relay.tlsServerName,
        token,
      });
      const client = createKubeClient(config, { timeoutMs: 30_000, userAgent: 'convoy-dashboard' });
      return { client, config, close: () => config.agent.destroy(), targetEgress };
    },
  };
}

/** Runs `use` on a connection with the caller's token; 501 when the relay has no management cluster address. */
export async function asUser<T>(
  deps: { readonly userClusters?: UserClusters | undefined },
  c: { get(key: 'token'): string },
  use: (cluster: Cluster) => Promise<T>,
): Promise<T> {
  if (deps.userClusters === undefined)
    throw new ApiError(
      501,
      'NotImplemented',
      "this relay has no management cluster address for acting with the caller's token",
    );
  const cluster = deps.userClusters.open(c.get('token'));
  try {
    return await use(cluster);
  } finally {
    cluster.close();
  }
}
