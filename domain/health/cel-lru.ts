/**
 * A bounded least-recently-used map, for the compiled CEL programs and RE2
 * patterns of one CEL runtime (each runtime owns its caches: no module state).
 */
export interface BoundedCache<V> {
  get(key: string): V | undefined;
  set(key: string, value: V): void;
  readonly size: number;
}

export function createBoundedCache<V>(maxEntries: number): BoundedCache<V> {
  if (!Number.isInteger(maxEntries) || maxEntries < 1) {
    throw new RangeError(`cache size must be a positive integer, got ${maxEntries}`);
  }
  const entries = new Map<string, V>();
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
      entries.delete(key);
      entries.set(key, value);
      if (entries.size > maxEntries) {
        const oldest = entries.keys().next();
        if (oldest.done !== true) entries.delete(oldest.value);
      }
    },
    get size() {
      return entries.size;
    },
  };
}
