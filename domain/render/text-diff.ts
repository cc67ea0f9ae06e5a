/**
 * The line diff of Kubernetes objects shown to people: the relay's GET …/renders/diff (two renders)
 * and `convoy diff` (the live objects against a dry-run apply) both use this one, with the same caps.
 *
 * jsdiff's Myers diff (`diff` on npm): O((N + M) · D) time for N and M lines and D changed lines,
 * instead of the O(N · M) table of a longest-common-subsequence diff (a 20k-line object took 6.6 s
 * and 1.6 GB that way). Every object and every call of diffObjects has caps, and an
 * object over a cap is answered with the cap's name instead of lines:
 *
 * - per object: over `maxObjectBytes` as JSON (either side), more than `maxEditLines` changed
 *   lines, or more than `objectTimeoutMs` of diffing (jsdiff's maxEditLength and timeout);
 * - per call (a request of the relay, a run of `convoy diff`): more than `maxRequestBytes` of
 *   objects diffed in all (JSON, both sides), or `requestTimeoutMs` of diffing in all (YAML
 *   included); the objects after that are named with the cap, not diffed.
 *
 * Whether an object changed is known for each of them (one string comparison), so the caller's
 * list of changed and unchanged objects is complete whatever was capped. Lines are `"+ line"`,
 * `"- line"`, `"  line"`, with `"  …"` between hunks and 3 lines of context.
 *
 * Pure: the values come in already made comparable (server-owned fields dropped, Secret values
 * masked) by the caller; the clock is passed in.
 */
import { Buffer } from 'node:buffer';
import { diffArrays } from 'diff';
import { stringify } from 'yaml';

export interface DiffLimits {
  /** Bytes of one object as JSON (either side) above which it is not diffed. */
  readonly maxObjectBytes: number;
  /** Changed lines (edit length) of one object above which the diff gives up. */
  readonly maxEditLines: number;
  /** Wall time for diffing one object. */
  readonly objectTimeoutMs: number;
  /** Bytes (JSON, both sides) of the objects diffed in one call. */
  readonly maxRequestBytes: number;
  /** Wall time for diffing every object of one call. */
  readonly requestTimeoutMs: number;
}

export const DEFAULT_DIFF_LIMITS: DiffLimits = {
  maxObjectBytes: 1024 * 1024,
  maxEditLines: 2_000,
  objectTimeoutMs: 2_000,
  maxRequestBytes: 8 * 1024 * 1024,
  requestTimeoutMs: 5_000,
};

/** One object's two sides; undefined for a side where it does not exist. */
export interface ObjectPair {
  readonly before: unknown;
  readonly after: unknown;
}

export type ObjectTextDiff =
  | { readonly result: 'unchanged' }
  | { readonly result: 'diffed'; readonly lines: string[] }
  /** Changed, but not diffed: `skipped` names the cap, e.g. "diff skipped: object over 1 MiB (cap per object)". */
  | { readonly result: 'skipped'; readonly skipped: string };

const CONTEXT_LINES = 3;

/** "1 MiB", "512 KiB", "300 B". */
export function formatBytes(bytes: number): string {
  if (bytes >= 1024 * 1024 && bytes % (1024 * 1024) === 0) return `${bytes / (1024 * 1024)} MiB`;
  if (bytes >= 1024 && bytes % 1024 === 0) return `${bytes / 1024} KiB`;
  return `${bytes} B`;
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (typeof value === 'object' && value !== null) {
    return Object.fromEntries(
      Object.keys(value)
        .sort()
        .map((k) => [k, sortKeys((value as Record<string, unknown>)[k])]),
    );
  }
  return value;
}

/** YAML with keys sorted at every level, so that two objects compare by content, not key order; '' for undefined. */
export function canonicalYaml(value: unknown): string {
  return value === undefined ? '' : stringify(sortKeys(value), { lineWidth: 0 });
}

/** JSON with keys sorted at every level: equal exactly when the canonical YAML is, at a tenth of its cost; '' for undefined. */
function sortedJson(value: unknown): string {
  if (value === undefined) return '';
  return JSON.stringify(value, (_key, v: unknown) =>
    typeof v === 'object' && v !== null && !Array.isArray(v)
      ? Object.fromEntries(
          Object.entries(v as Record<string, unknown>).sort(([x], [y]) => (x < y ? -1 : x > y ? 1 : 0)),
        )
      : v,
  );
}

const splitLines = (text: string): string[] => (text === '' ? [] : text.replace(/\n$/, '').split('\n'));

/**
 * The changed lines of `before` → `after` with `context` lines around each change ([] when equal),
 * or undefined when more than `maxEditLines` lines changed or `timeoutMs` passed.
 */
export function lineDiff(
  before: string,
  after: string,
  options: { maxEditLines: number; timeoutMs: number; context?: number },
): string[] | undefined {
  if (before === after) return [];
  const context = options.context ?? CONTEXT_LINES;
  const a = splitLines(before);
  const b = splitLines(after);
  const changes = diffArrays(a, b, {
    maxEditLength: options.maxEditLines,
    timeout: Math.max(1, options.timeoutMs),
  });
  if (changes === undefined) return undefined;
  const out: string[] = [];
  const emit = (prefix: string, lines: readonly string[], from: number, to: number) => {
    for (let i = from; i < to; i++) out.push(`${prefix} ${lines[i]}`);
  };
  changes.forEach((change, index) => {
    const lines = change.value;
    if (change.added || change.removed) {
      emit(change.added ? '+' : '-', lines, 0, lines.length);
      return;
    }
    // An unchanged run: the tail of the hunk before it, a gap, the head of the hunk after it.
    const first = index === 0;
    const last = index === changes.length - 1;
    const head = first ? 0 : Math.min(context, lines.length);
    const tailStart = last ? lines.length : Math.max(head, lines.length - context);
    emit(' ', lines, 0, head);
    if (tailStart > head && !first && !last) out.push('  …');
    emit(' ', lines, tailStart, lines.length);
  });
  return out;
}

/**
 * The diff of each pair as canonical YAML, in order, with the caps of `limits` over the whole
 * call. `clock` measures the call's diff time (milliseconds).
 *
 * Each pair is compared as sorted-key JSON first (cheap): equal ones are unchanged, and the caps
 * are checked on that size before any YAML is made, so an object over the cap costs one JSON
 * serialisation, not a YAML one and a diff.
 */
export function diffObjects(
  pairs: readonly ObjectPair[],
  limits: DiffLimits,
  clock: () => number,
): ObjectTextDiff[] {
  const started = clock();
  let bytesDiffed = 0;
  const requestTimeCap = `diff skipped: request over ${limits.requestTimeoutMs} ms of diffing (cap per request)`;
  const skip = (skipped: string): ObjectTextDiff => ({ result: 'skipped', skipped });
  return pairs.map(({ before, after }): ObjectTextDiff => {
    const jsonBefore = sortedJson(before);
    const jsonAfter = sortedJson(after);
    if (jsonBefore === jsonAfter) return { result: 'unchanged' };
    const size = Math.max(Buffer.byteLength(jsonBefore), Buffer.byteLength(jsonAfter));
    if (size > limits.maxObjectBytes)
      return skip(`diff skipped: object over ${formatBytes(limits.maxObjectBytes)} (cap per object)`);
    if (bytesDiffed + jsonBefore.length + jsonAfter.length > limits.maxRequestBytes)
      return skip(
        `diff skipped: request over ${formatBytes(limits.maxRequestBytes)} of objects diffed (cap per request)`,
      );
    if (clock() - started >= limits.requestTimeoutMs) return skip(requestTimeCap);
    bytesDiffed += jsonBefore.length + jsonAfter.length;
    const yamlBefore = canonicalYaml(before);
    const yamlAfter = canonicalYaml(after);
    const left = limits.requestTimeoutMs - (clock() - started);
    if (left <= 0) return skip(requestTimeCap);
    const budget = Math.min(limits.objectTimeoutMs, left);
    const t = clock();
    const lines = lineDiff(yamlBefore, yamlAfter, { maxEditLines: limits.maxEditLines, timeoutMs: budget });
    if (lines !== undefined) return { result: 'diffed', lines };
    if (clock() - t < budget)
      return skip(`diff skipped: object has over ${limits.maxEditLines} changed lines (cap per object)`);
    if (budget < limits.objectTimeoutMs) return skip(requestTimeCap);
    return skip(`diff skipped: object took over ${limits.objectTimeoutMs} ms to diff (cap per object)`);
  });
}
