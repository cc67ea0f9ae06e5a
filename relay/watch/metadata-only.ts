/**
 * Metadata-only list and watch (PartialObjectMetadata) for the kinds whose content the relay
 * must never hold: ConfigMaps and Secrets. The relay maps their events to Releases by name;
 * their data stays in the cluster (and out of the relay's memory, heap dumps and logs).
 *
 * Kubernetes RBAC cannot grant "metadata only": the relay's ServiceAccount has list and watch on
 * ConfigMaps and Secrets (never get), and this is the only code that uses them.
 */
import { ListWatch, Watch, type KubeConfig, type KubernetesObject } from '@kubernetes/client-node';
import { fromClientNodeKubeConfig } from '../../adapters/kube/client-node-config.ts';
import { createKubeHttp } from '../../adapters/kube/http.ts';
import { transformingWatch, type ListFunction, type ListWatchLike } from './resilient-informer.ts';

const ACCEPT_LIST = 'application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1';
const ACCEPT_WATCH = 'application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1';

/** A list or watch answered with something other than metadata. */
export class MetadataWatchError extends Error {
  override name = 'MetadataWatchError';
}

export interface MetadataListWatch<T extends KubernetesObject> {
  readonly list: ListFunction<T>;
  readonly createListWatch: (list: ListFunction<T>, transform: (object: T) => T) => ListWatchLike<T>;
}

/**
 * `path` is a collection, e.g. /api/v1/secrets (every namespace). Objects come as
 * PartialObjectMetadata: apiVersion meta.k8s.io/v1, metadata only.
 */
export function metadataOnlyListWatch<T extends KubernetesObject>(kc: KubeConfig, path: string, labelSelector?: string): MetadataListWatch<T> {
  const http = createKubeHttp(fromClientNodeKubeConfig(kc), { userAgent: 'convoy-relay' });
  // client-node's Watch has no header option; it asks its config to authenticate each request,
  // which is where the Accept header is set.
  const metadataConfig = {
    getCurrentCluster: () => kc.getCurrentCluster(),
    applySecurityAuthentication: async (context: { setHeaderParam(key: string, value: string): void }) => {
      await kc.applySecurityAuthentication(context as never);
      context.setHeaderParam('Accept', ACCEPT_WATCH);
    },
  } as unknown as KubeConfig;
  return {
    list: async () => {
      const response = await http({ method: 'GET', path, query: { labelSelector }, accept: ACCEPT_LIST });
      const body = response.body as { kind?: string; items?: T[]; metadata?: { resourceVersion?: string } } | undefined;
      if (response.status !== 200 || body?.kind !== 'PartialObjectMetadataList') {
        const error = new MetadataWatchError(`metadata-only list of ${path} answered HTTP ${response.status}${body?.kind ? ` (${body.kind})` : ''}`);
        (error as { statusCode?: number }).statusCode = response.status;
        throw error;
      }
      return { apiVersion: 'meta.k8s.io/v1', kind: body.kind, metadata: body.metadata ?? {}, items: body.items ?? [] };
    },
    createListWatch: (list, transform) => new ListWatch<T>(path, transformingWatch(new Watch(metadataConfig), transform), list, false, labelSelector),
  };
}
