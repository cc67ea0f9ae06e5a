/**
 * Namespaces of one bench run, each with the `local` in-cluster Cluster its Release targets, and
 * the convoy objects the sections create (shared by the slowGit and celHostile sections).
 */
import { CoreV1Api, CustomObjectsApi, type KubeConfig } from '@kubernetes/client-node';
import { API_GROUP, API_VERSION } from '../../domain/api/common.ts';
import { inPool } from '../flux/side-process.ts';

/** A Cluster named `local` or a Release named `app` in `namespace`, as createNamespacedCustomObject takes it. */
export function convoyObject(kind: 'Cluster' | 'Release', namespace: string, spec: unknown) {
  return {
    group: API_GROUP,
    version: API_VERSION,
    namespace,
    plural: `${kind.toLowerCase()}s`,
    body: {
      apiVersion: `${API_GROUP}/${API_VERSION}`,
      kind,
      metadata: { name: kind === 'Cluster' ? 'local' : 'app', namespace },
      spec,
    },
  };
}

/** Creates each namespace and its in-cluster Cluster `local`, eight at a time. */
export async function createAppNamespaces(kc: KubeConfig, namespaces: readonly string[]): Promise<void> {
  const core = kc.makeApiClient(CoreV1Api);
  const custom = kc.makeApiClient(CustomObjectsApi);
  await inPool([...namespaces], 8, async (namespace) => {
    await core.createNamespace({ body: { metadata: { name: namespace } } });
    await custom.createNamespacedCustomObject(convoyObject('Cluster', namespace, { inCluster: true }));
  });
}
