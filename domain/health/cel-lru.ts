/**
 * A bounded least-recently-used map, for the compiled CEL programs and RE2
 * patterns of one CEL runtime (each runtime owns its caches: no module state).
 * Bounded by entries and, optionally, by a total weight (e.g. source length,
 * which a compiled program's memory grows with: ~65 bytes per character).
 */
export interface BoundedCache<V> {
  get(key: string): V | undefined;
  set(key: string, value: V): void;
  readonly size: number;
}

export interface BoundedCacheOptions {
  maxEntries: number;
  /** Total weight kept; the key's length by default. Unbounded when absent. */
  maxWeight?: number;
  weigh?: (key: string) => number;
}

export function createBoundedCache<V>(options: BoundedCacheOptions): BoundedCache<V> {
  const { maxEntries, maxWeight = Number.POSITIVE_INFINITY, weigh = (key: string) => key.length } = options;
  if (!Number.isInteger(maxEntries) || maxEntries < 1) {
    throw new RangeError(`cache size must be a positive integer, got ${maxEntries}`);
  }
  const entries = new Map<string, V>();
  let weight = 0;
  const remove = (key: string): void => {
    if (entries.delete(key)) weight -= weigh(key);
  };
  return {
    get(key) {
      const value = entries.get(key);
      if (value === undefined) return undefined;
      // Map keeps insertion order: re-insert to mark as most recently used.
      entries.delete(key);
      entries.set(key, value);
      return value;
    },
    set(key, value) {
      remove(key);
      if (weigh(key) > maxWeight) return;
      entries.set(key, value);
      weight += weigh(key);
      while (entries.size > maxEntries || weight > maxWeight) {
        const oldest = entries.keys().next();
        if (oldest.done === true) break;
        remove(oldest.value);
      }
    },
    get size() {
      return entries.size;
    },
  };
}
