/**
 * What a drift function container remembers between checks: per rendered object,
 * the resourceVersion the live object had when a check last found it in sync with the render
 * (the same render, the same ignore rules, on the same target and identity).
 *
 * The API server gives an object a new resourceVersion on every change anyone makes to it —
 * spec, labels, annotations, status, a delete and re-create — whether or not its generation
 * moves. So an object whose resourceVersion is still the one remembered is byte for byte the
 * object that was found in sync, and a check may say so after reading its metadata only, instead
 * of a server-side-apply dry run; an object with another resourceVersion is checked in full
 * (dry run, and a read when needed), and remembered again if it is in sync.
 *
 * Bounded: at most `maxEntries` objects (the least recently used go first), and an entry is
 * trusted for `ttlMs` only, after which the object gets a full check again (what the server
 * would make of the render can change without the object changing: a new admission webhook or
 * CRD default). Created per container by the composition root; never module-level.
 */

export interface DriftMemory {
  /** The resourceVersion remembered for `object` under `basis`; undefined: none, another basis, or expired. */
  cleanVersion(object: string, basis: string): string | undefined;
  /** `object` was found in sync with `basis` at `resourceVersion`. */
  remember(object: string, basis: string, resourceVersion: string): void;
  /** `object` drifted, is missing or could not be checked: its next check is a full one. */
  forget(object: string): void;
  readonly size: number;
}

export const DRIFT_MEMORY_MAX_ENTRIES = 20_000;
/** How long a remembered clean check spares the dry run (a full check at least this often per object). */
export const DRIFT_MEMORY_TTL_MS = 30 * 60_000;

export function createDriftMemory(
  options: { maxEntries?: number; ttlMs?: number; now?: () => number } = {},
): DriftMemory {
  const maxEntries = Math.max(1, options.maxEntries ?? DRIFT_MEMORY_MAX_ENTRIES);
  const ttlMs = options.ttlMs ?? DRIFT_MEMORY_TTL_MS;
  const now = options.now ?? Date.now;
  const entries = new Map<string, { basis: string; resourceVersion: string; since: number }>();
  return {
    cleanVersion(object, basis) {
      const entry = entries.get(object);
      if (entry === undefined) return undefined;
      if (entry.basis !== basis || now() - entry.since >= ttlMs) {
        entries.delete(object);
        return undefined;
      }
      // Least recently used first out: a hit moves to the end.
      entries.delete(object);
      entries.set(object, entry);
      return entry.resourceVersion;
    },
    remember(object, basis, resourceVersion) {
      if (ttlMs <= 0 || resourceVersion === '') return;
      const known = entries.get(object);
      entries.delete(object);
      // A re-check at the same version keeps its first time: the TTL counts from the last full check.
      const since =
        known !== undefined && known.basis === basis && known.resourceVersion === resourceVersion
          ? known.since
          : now();
      entries.set(object, { basis, resourceVersion, since });
      while (entries.size > maxEntries) {
        const oldest = entries.keys().next();
        if (oldest.done) break;
        entries.delete(oldest.value);
      }
    },
    forget(object) {
      entries.delete(object);
    },
    get size() {
      return entries.size;
    },
  };
}

/** One rendered object on one target as one identity (`target`: the ObserverTarget's `identity`). */
export function driftMemoryKey(
  target: string,
  obj: { apiVersion: string; kind: string; metadata: { name: string; namespace?: string | undefined } },
): string {
  return [target, obj.apiVersion, obj.kind, obj.metadata.namespace ?? '', obj.metadata.name].join('\u0000');
}

/** What a clean check was against: the render (content-addressed renderRef) and the ignore rules. */
export function driftMemoryBasis(renderRef: string, ignore: readonly unknown[]): string {
  return `${renderRef}\u0000${JSON.stringify(ignore)}`;
}
