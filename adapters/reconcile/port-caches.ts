/**
 * The per-container caches of the reconcile ports, and the one rule that
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
import { createDriftMemory, type DriftMemory } from '../../domain/observe/drift-memory.ts';
import { createDiscoveryCache, type DiscoveryCache } from '../kube/discovery.ts';
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

export function createPortCaches(
  options: { ttlMs?: number; refTtlMs?: number; now?: () => number } = {},
): PortCaches {
  const ttlMs = options.ttlMs ?? PORT_CACHE_TTL_MS;
  return {
    refs: createRefCache({
      ...(options.refTtlMs !== undefined ? { ttlMs: options.refTtlMs } : {}),
      ...(options.now ? { now: options.now } : {}),
    }),
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
export function inNamespace(
  items: readonly Record<string, unknown>[],
  namespace: string,
): Record<string, unknown>[] {
  return items.filter(
    (item) => (item['metadata'] as { namespace?: string } | undefined)?.namespace === namespace,
  );
}

/**
 * The per-container caches of the drift and health functions, created by their
 * handler factories (functions/drift|health/create-handler.ts):
 * - `clusters`: every Cluster as ONE cluster-wide LIST, as the reconcile's (30 s; a message
 *   the relay sent because a Cluster changed drops it first: invalidateObserverCaches);
 * - `discovery`: API discovery per connection pool, server and acting user (30 s);
 * - `drift` (drift only): per object, the resourceVersion of its last clean check
 *   (domain/observe/drift-memory.ts).
 * Nothing read as a Release's identity is kept here: a kubeconfig Secret is read by the observer
 * target resolver (its own 30-s target cache is per Release namespace, Cluster and
 * ServiceAccount), and every object read or dry run goes out as the Release's identity, so a
 * tenant that loses a right is refused at its next check.
 */
export interface ObserverCaches {
  clusters: TtlCache<Record<string, unknown>[]>;
  discovery: DiscoveryCache;
  drift: DriftMemory;
}

export function createObserverCaches(
  options: { ttlMs?: number; now?: () => number; driftMemory?: { maxEntries?: number; ttlMs?: number } } = {},
): ObserverCaches {
  const ttlMs = options.ttlMs ?? PORT_CACHE_TTL_MS;
  const now = options.now ? { now: options.now } : {};
  return {
    clusters: createTtlCache({ ttlMs, ...now }),
    discovery: createDiscoveryCache({ ttlMs, ...now }),
    drift: createDriftMemory({ ...options.driftMemory, ...now }),
  };
}

/** A message sent because a Cluster (or another dependency) changed: the run reads the Clusters again. */
export function invalidateObserverCaches(caches: ObserverCaches, message: Pick<QueueMessage, 'cause'>): void {
  if (isDependencyChange(message.cause)) caches.clusters.invalidate(ALL_NAMESPACES);
}
