/**
 * The relay's own connection to the management cluster, found as client-node's `loadFromDefault`
 * finds it: $KUBECONFIG, ~/.kube/config, else the pod's ServiceAccount (its token re-read as the
 * kubelet rotates it). A kubeconfig only @kubernetes/client-node understands (an exec or
 * auth-provider plugin, a proxy-url) goes through client-node as before, loaded only then: the
 * relay in its pod never loads client-node (~87 MiB of the relay's memory).
 */
import {
  fromDefaultKubeconfig,
  KubeconfigError,
  type KubeClientConfig,
} from '../adapters/kube/kubeconfig.ts';

/** What adapters/kube/kubeconfig.ts refuses by name and client-node's loader takes. */
const CLIENT_NODE_ONLY = /\.(exec|auth-provider|proxy-url) is not supported by convoy/;

export async function loadRelayKubeConfig(env: NodeJS.ProcessEnv = process.env): Promise<KubeClientConfig> {
  try {
    return fromDefaultKubeconfig(env);
  } catch (error) {
    if (!(error instanceof KubeconfigError) || !CLIENT_NODE_ONLY.test(error.message)) throw error;
    const [{ KubeConfig }, { connectClientNodeKubeConfig }] = await Promise.all([
      import('@kubernetes/client-node'),
      import('../adapters/kube/client-node-config.ts'),
    ]);
    const kc = new KubeConfig();
    kc.loadFromDefault();
    return connectClientNodeKubeConfig(kc, env);
  }
}
