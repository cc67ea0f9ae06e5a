/**
 * What a read view reads with and about: a connection to the Kubernetes API that carries the
 * user's own rights — the CLI's kubeconfig (cli/kube.ts connect) or the bearer token of the
 * relay API's caller (relay/http/user-cluster.ts) — and the namespaced name of the object.
 */
import type { KubeClient } from '../adapters/kube/http.ts';
import type { KubeClientConfig } from '../adapters/kube/kubeconfig.ts';
import type { TargetEgress } from '../adapters/kube/target-egress.ts';

export interface Cluster {
  readonly client: KubeClient;
  readonly config: KubeClientConfig;
  /** Closes the keep-alive connections so the process can end. */
  close(): void;
  /**
   * The egress policy a remote Cluster's kubeconfig server must pass (a tenant names it): the
   * relay's, from the installation's settings; none for the CLI (the user's machine and network).
   */
  readonly targetEgress?: TargetEgress | undefined;
}

/** A Release (or ReleaseSet) by namespace and name. */
export interface ReleaseKey {
  namespace: string;
  name: string;
}
