/**
 * The parsed Release the relay caches, made compact (the relay's memory). Zod
 * builds its output by adding keys one by one, so most of its objects carry an out-of-object
 * property array, and its copy of the slim Release no longer shares the strings slim.ts shared.
 * One JSON round trip gives objects laid out as JSON.parse lays them out (every property inside
 * the object); the strings a Release repeats (its renderRef up to four times, its timestamps up
 * to nine) are shared again, and the strings many Releases hold alike are taken from the
 * informer's pool (below). Measured on 10,000 Releases of the relayScale bench: ~2,020 bytes of
 * V8 heap per Release before, ~1,530 after (docs/decisions.md, "The relay's memory").
 *
 * The pool holds only values of few distinct values across a fleet: apiVersion and kind, the
 * namespace, the cluster's name, the source's repository, chart, path and ref, and each
 * condition's type, status and reason (object keys, label keys among them, JSON.parse already
 * keeps once, as it does short strings). Never uids, names, timestamps or renderRefs (one per
 * Release: a pool of them would only grow). The pool belongs to one informer (one leadership
 * term) and is dropped with it.
 */

/** Strings many cached objects hold alike, kept once. */
export interface StringPool {
  /** The pooled string equal to `value` (`value` itself the first time). */
  intern(value: string): string;
  /** How many distinct strings the pool holds. */
  readonly size: number;
}

export function stringPool(): StringPool {
  const pooled = new Map<string, string>();
  return {
    intern(value) {
      const first = pooled.get(value);
      if (first !== undefined) return first;
      pooled.set(value, value);
      return value;
    },
    get size() {
      return pooled.size;
    },
  };
}

type Raw = Record<string, unknown>;

const isObject = (value: unknown): value is Raw =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** Replaces every string of `value` equal to one seen before in it by that first one (in place). */
function shareWithin(value: unknown, seen: Map<string, string>): void {
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const item: unknown = value[i];
      if (typeof item === 'string') value[i] = seen.get(item) ?? (seen.set(item, item), item);
      else if (typeof item === 'object' && item !== null) shareWithin(item, seen);
    }
    return;
  }
  if (!isObject(value)) return;
  for (const key of Object.keys(value)) {
    const item = value[key];
    if (typeof item === 'string') value[key] = seen.get(item) ?? (seen.set(item, item), item);
    else if (typeof item === 'object' && item !== null) shareWithin(item, seen);
  }
}

/** `object[key]` taken from the pool when it is a string. */
function pool(object: unknown, key: string, strings: StringPool): void {
  if (isObject(object) && typeof object[key] === 'string') object[key] = strings.intern(object[key]);
}

/** The fleet-wide strings of a compact Release taken from the pool (see the header). */
function internShared(release: Raw, strings: StringPool): void {
  pool(release, 'apiVersion', strings);
  pool(release, 'kind', strings);
  const metadata = release['metadata'];
  pool(metadata, 'namespace', strings);
  const spec = release['spec'];
  if (isObject(spec)) {
    pool(spec['cluster'], 'name', strings);
    const source = spec['source'];
    for (const kind of ['git', 'gitRepositoryRef', 'oci', 'helm'] as const) {
      const from = isObject(source) ? source[kind] : undefined;
      if (!isObject(from)) continue;
      for (const key of ['url', 'path', 'chart', 'repository', 'name', 'namespace']) pool(from, key, strings);
      const ref = from['ref'];
      if (isObject(ref)) for (const key of ['branch', 'tag']) pool(ref, key, strings);
    }
  }
  const status = release['status'];
  const conditions = isObject(status) ? status['conditions'] : undefined;
  if (Array.isArray(conditions))
    for (const condition of conditions as unknown[])
      for (const key of ['type', 'status', 'reason']) pool(condition, key, strings);
}

/**
 * A compact copy of `release` (a parsed Release: plain JSON data), equal to it as JSON, with its
 * repeated strings shared and its fleet-wide strings from `strings`.
 */
export function compactRelease<T extends object>(release: T, strings: StringPool): T {
  const copy = JSON.parse(JSON.stringify(release)) as Raw;
  shareWithin(copy, new Map());
  internShared(copy, strings);
  return copy as T;
}
