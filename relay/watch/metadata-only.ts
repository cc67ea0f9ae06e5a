/**
 * Metadata-only list and watch (PartialObjectMetadata) for the kinds whose content the relay
 * must never hold: ConfigMaps and Secrets. The relay maps their events to Releases by name;
 * their data stays in the cluster (and out of the relay's memory, heap dumps and logs).
 *
 * Kubernetes RBAC cannot grant "metadata only": the relay's ServiceAccount has list and watch on
 * ConfigMaps and Secrets (never get), and this is the only code that uses them.
 */
import type { KubeClientConfig } from '../../adapters/kube/kubeconfig.ts';
import { createListWatch, kubeWatch, pagedList } from './list-watch.ts';
import type { KubeObjectLike, ListFunction, ListWatchLike } from './list-watch.ts';

const ACCEPT_LIST = 'application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1';
const ACCEPT_WATCH = 'application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1';
/** Metadata is small; pages as large as the convoy kinds'. */
const PAGE_SIZE = 500;

export interface MetadataListWatch<T extends KubeObjectLike> {
  readonly list: ListFunction<T>;
  readonly createListWatch: (list: ListFunction<T>, transform: (object: T) => T) => ListWatchLike<T>;
}

/**
 * `path` is a collection, e.g. /api/v1/secrets (every namespace). Objects come as
 * PartialObjectMetadata: apiVersion meta.k8s.io/v1, metadata only; a list answered with
 * anything but a PartialObjectMetadataList fails (KubeApiError naming the kind).
 */
export function metadataOnlyListWatch<T extends KubeObjectLike>(
  config: KubeClientConfig,
  path: string,
  labelSelector?: string,
): MetadataListWatch<T> {
  return {
    list: pagedList<T>(config, path, (object) => object, {
      pageSize: PAGE_SIZE,
      labelSelector,
      accept: ACCEPT_LIST,
      expectKind: 'PartialObjectMetadataList',
    }),
    createListWatch: (list, transform) =>
      createListWatch(list, kubeWatch(config, path, { labelSelector, accept: ACCEPT_WATCH }), transform),
  };
}
