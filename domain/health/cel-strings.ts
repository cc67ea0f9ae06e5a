/**
 * `s.lastIndexOf(t)` and `s.lastIndexOf(t, from)` for CEL health checks, in
 * linear time. cel-js calls JavaScript's String.prototype.lastIndexOf, which
 * V8 runs as a naive O(n·m) scan: a 1,000,000-character value searched for
 * 20,000 'a' and a 'b' took 12.7 s (indexOf and contains are linear in V8).
 * Same results and errors as cel-js; cel-runtime.ts routes the calls here.
 */

/** Needles up to this length keep the native scan: n·m stays linear in n. */
const NATIVE_NEEDLE_MAX = 32;

export class StringIndexError extends Error {
  constructor() {
    super('string.lastIndexOf(search, fromIndex): fromIndex out of range');
    this.name = 'StringIndexError';
  }
}

/**
 * The last match of `needle` starting at or before `from` (UTF-16 indices, as JavaScript's), or
 * -1: Knuth–Morris–Pratt over the text read backwards, O(n + m).
 */
export function lastIndexOfLinear(haystack: string, needle: string, from = haystack.length): number {
  if (needle.length <= NATIVE_NEEDLE_MAX) return haystack.lastIndexOf(needle, from);
  const n = haystack.length;
  const m = needle.length;
  const last = Math.min(Math.max(from, 0), n - m);
  if (last < 0) return -1;
  // r(j): the needle reversed; fail[j]: the longest proper prefix of r(0..j) that is also its suffix.
  const r = (j: number): number => needle.charCodeAt(m - 1 - j);
  const fail = new Int32Array(m);
  for (let j = 1, k = 0; j < m; j++) {
    while (k > 0 && r(j) !== r(k)) k = fail[k - 1] ?? 0;
    if (r(j) === r(k)) k++;
    fail[j] = k;
  }
  // p walks the reversed text from the position that keeps matches at or before `last`.
  for (let p = n - m - last, k = 0; p < n; p++) {
    const unit = haystack.charCodeAt(n - 1 - p);
    while (k > 0 && unit !== r(k)) k = fail[k - 1] ?? 0;
    if (unit === r(k)) k++;
    if (k === m) return n - p - 1;
  }
  return -1;
}

export function celLastIndexOf(haystack: string, needle: string): bigint {
  return BigInt(lastIndexOfLinear(haystack, needle));
}

export function celLastIndexOfFrom(haystack: string, needle: string, fromIndex: bigint): bigint {
  if (needle === '') return fromIndex;
  const from = Number(fromIndex);
  if (from < 0 || from >= haystack.length) throw new StringIndexError();
  return BigInt(lastIndexOfLinear(haystack, needle, from));
}
