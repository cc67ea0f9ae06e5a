/**
 * A short-lived cache for one function container: what a loop read from the management
 * cluster (a Cluster's kubeconfig, /version and discovery; a namespace's Mutations) is
 * reused by the runs of the next `ttlMs`, so a warm container does not read it again for
 * every Release.
 *
 * Invalidation: an entry expires after `ttlMs`; a failed load is never kept; and
 * `invalidate(namespace)` drops a namespace's entries at once — the reconcile calls it for
 * a message the relay sent because a Cluster, Mutation or GitRepository of that namespace
 * changed (cause `watch: <Kind> <name> <event>`), so such a change is never served from
 * the cache to the run it triggered.
 */
export interface TtlCache<V> {
  get(namespace: string, key: string, load: () => Promise<V>): Promise<V>;
  invalidate(namespace: string): void;
}

export function createTtlCache<V>(options: {
  ttlMs: number;
  now?: () => number;
  maxEntries?: number;
}): TtlCache<V> {
  const now = options.now ?? Date.now;
  const maxEntries = options.maxEntries ?? 1000;
  const entries = new Map<string, { namespace: string; value: Promise<V>; expiresAt: number }>();
  return {
    async get(namespace, key, load) {
      const id = `${namespace}\u0000${key}`;
      const hit = entries.get(id);
      if (hit !== undefined && hit.expiresAt > now()) return hit.value;
      const value = load();
      if (options.ttlMs <= 0) return value;
      if (entries.size >= maxEntries) {
        const oldest = entries.keys().next();
        if (!oldest.done) entries.delete(oldest.value);
      }
      entries.set(id, { namespace, value, expiresAt: now() + options.ttlMs });
      value.catch(() => {
        if (entries.get(id)?.value === value) entries.delete(id);
      });
      return value;
    },
    invalidate(namespace) {
      for (const [id, entry] of entries) if (entry.namespace === namespace) entries.delete(id);
    },
  };
}

/** The relay's cause for a change of an object a Release depends on: `watch: Cluster prod MODIFIED`. */
export function isDependencyChange(cause: string): boolean {
  return /^watch: (Cluster|Mutation|GitRepository|Lifecycle) /.test(cause);
}
