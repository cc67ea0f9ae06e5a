/**
 * The per-container caches of the reconcile ports (issue 13), and the one rule that
 * invalidates them from the message a run starts with:
 * - `git push …` (the relay's push webhook): forget the ref resolutions, so the run sees
 *   the pushed commit;
 * - `watch: Cluster|Mutation|GitRepository|Lifecycle <name> <event>`: forget the cached
 *   Cluster and Mutation lists.
 * Otherwise entries expire after their TTL (15 s for refs, 30 s for Clusters and Mutations).
 * Clusters and Mutations are cached as ONE cluster-wide LIST each (the functions' ClusterRole
 * may list them), so Releases in a thousand namespaces share one request per TTL. A Cluster
 * missing from a cached list is read once more by name before it is reported missing.
 * Nothing read as a Release's identity is cached here (values layers, credentials, kubeconfigs:
 * adapters/kube/identity-reads.ts), so one identity's read can never answer another's.
 */
import type { QueueMessage } from '../../domain/runtime/queue-message.ts';
import { createRefCache, type RefCache } from '../source/ref-cache.ts';
import { createTtlCache, isDependencyChange, type TtlCache } from './ttl-cache.ts';

export interface PortCaches {
  refs: RefCache;
  /** Every Mutation of the cluster, as one LIST answered (raw objects). */
  mutations: TtlCache<Record<string, unknown>[]>;
  /** Every Cluster of the cluster, as one LIST answered (raw objects). */
  clusters: TtlCache<Record<string, unknown>[]>;
}

export const PORT_CACHE_TTL_MS = 30_000;
/** The cache's one key: a cluster-wide LIST serves every namespace. */
export const ALL_NAMESPACES = '*';

export function createPortCaches(options: { ttlMs?: number; refTtlMs?: number; now?: () => number } = {}): PortCaches {
  const ttlMs = options.ttlMs ?? PORT_CACHE_TTL_MS;
  return {
    refs: createRefCache({ ...(options.refTtlMs !== undefined ? { ttlMs: options.refTtlMs } : {}), ...(options.now ? { now: options.now } : {}) }),
    mutations: createTtlCache({ ttlMs, ...(options.now ? { now: options.now } : {}) }),
    clusters: createTtlCache({ ttlMs, ...(options.now ? { now: options.now } : {}) }),
  };
}

/** Applies the invalidation rule for the message a run starts with. */
export function invalidateFor(caches: PortCaches, message: Pick<QueueMessage, 'namespace' | 'cause'>): void {
  if (message.cause.startsWith('git push ')) caches.refs.clear();
  if (isDependencyChange(message.cause)) {
    caches.mutations.invalidate(ALL_NAMESPACES);
    caches.clusters.invalidate(ALL_NAMESPACES);
  }
}

/** The objects of `namespace` in a cluster-wide list. */
export function inNamespace(items: readonly Record<string, unknown>[], namespace: string): Record<string, unknown>[] {
  return items.filter((item) => (item['metadata'] as { namespace?: string } | undefined)?.namespace === namespace);
}
