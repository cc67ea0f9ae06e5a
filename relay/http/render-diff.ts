/**
 * The diff of two renders behind GET …/renders/diff, per object, with jsdiff's Myers diff
 * (`diff` on npm): O((N + M) · D) time for N and M lines and D changed lines, instead of the
 * O(N · M) table of a longest-common-subsequence diff (a 20k-line object took 6.6 s and 1.6 GB
 * that way, issue 23). Anyone who may `get` a Release can ask for it, so every object and every
 * request has a cap, and an object over a cap is answered with the cap's name instead of lines:
 *
 * - per object: over `maxObjectBytes` as JSON (either side), more than `maxEditLines` changed
 *   lines, or more than `objectTimeoutMs` of diffing (jsdiff's maxEditLength and timeout);
 * - per request: more than `maxRequestBytes` of objects diffed in all (JSON, both sides), or
 *   `requestTimeoutMs` of diffing in all (YAML included); the objects after that are named
 *   with the cap, not diffed.
 *
 * Whether an object changed is known for each of them (one string comparison), so `change`,
 * `unchanged` and the list of objects are complete whatever was capped. Lines keep the format
 * of cli/text-diff.ts (`"+ line"`, `"- line"`, `"  line"`, `"  …"` between hunks).
 */
import { diffArrays } from 'diff';
import type { KubeObject } from '../../domain/render/kube-object.ts';
import { comparable } from '../../cli/live-compare.ts';
import { canonicalYaml } from '../../cli/text-diff.ts';

export interface DiffLimits {
  /** Bytes of one object as JSON (either side) above which it is not diffed. */
  readonly maxObjectBytes: number;
  /** Changed lines (edit length) of one object above which the diff gives up. */
  readonly maxEditLines: number;
  /** Wall time for diffing one object. */
  readonly objectTimeoutMs: number;
  /** Bytes (JSON, both sides) of the objects diffed in one request. */
  readonly maxRequestBytes: number;
  /** Wall time for diffing every object of one request. */
  readonly requestTimeoutMs: number;
}

export const DEFAULT_DIFF_LIMITS: DiffLimits = {
  maxObjectBytes: 1024 * 1024,
  maxEditLines: 2_000,
  objectTimeoutMs: 2_000,
  maxRequestBytes: 8 * 1024 * 1024,
  requestTimeoutMs: 5_000,
};

export type ObjectChange = 'added' | 'removed' | 'changed';

export interface ObjectDiff {
  kind: string;
  namespace: string;
  name: string;
  change: ObjectChange;
  /** The diff lines; for a skipped object one line saying which cap it hit. */
  lines: string[];
  /** Set when the object was not diffed: which cap, e.g. "diff skipped: object over 1 MiB (cap per object)". */
  skipped?: string;
}

export interface RenderDiff {
  objects: ObjectDiff[];
  unchanged: number;
}

const CONTEXT_LINES = 3;

/** "1 MiB", "512 KiB", "300 B". */
export function formatBytes(bytes: number): string {
  if (bytes >= 1024 * 1024 && bytes % (1024 * 1024) === 0) return `${bytes / (1024 * 1024)} MiB`;
  if (bytes >= 1024 && bytes % 1024 === 0) return `${bytes / 1024} KiB`;
  return `${bytes} B`;
}

const splitLines = (text: string): string[] => (text === '' ? [] : text.replace(/\n$/, '').split('\n'));

/**
 * The changed lines of `before` → `after` with `context` lines around each change ([] when equal),
 * or undefined when more than `maxEditLines` lines changed or `timeoutMs` passed.
 */
export function lineDiff(before: string, after: string, options: { maxEditLines: number; timeoutMs: number; context?: number }): string[] | undefined {
  if (before === after) return [];
  const context = options.context ?? CONTEXT_LINES;
  const a = splitLines(before);
  const b = splitLines(after);
  const changes = diffArrays(a, b, { maxEditLength: options.maxEditLines, timeout: Math.max(1, options.timeoutMs) });
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

const objectKey = (o: KubeObject) => `${o.apiVersion}|${o.kind}|${o.metadata.namespace ?? ''}|${o.metadata.name}`;

/** Objects by apiVersion|kind|namespace|name, as the renders' maps are keyed. */
export function byObjectKey(objects: readonly KubeObject[]): Map<string, KubeObject> {
  return new Map(objects.map((o) => [objectKey(o), o]));
}

/** JSON with keys sorted at every level: equal exactly when the canonical YAML is, at a tenth of its cost. */
function canonicalJson(value: unknown): string {
  return JSON.stringify(value ?? null, (_key, v: unknown) =>
    typeof v === 'object' && v !== null && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([x], [y]) => (x < y ? -1 : x > y ? 1 : 0)))
      : v,
  );
}

/**
 * The per-object diff of two renders (objects keyed by byObjectKey), sorted by key, with the
 * caps of `limits`. Secret values are fingerprints (cli/live-compare.ts comparable()).
 * `clock` measures the request's diff time (default performance.now).
 *
 * Each object is compared as sorted-key JSON first (cheap): equal ones count as unchanged, and
 * the caps are checked on that size before any YAML is made, so an object over the cap costs
 * one JSON serialisation, not a YAML one and a diff.
 */
export function diffRenders(
  from: ReadonlyMap<string, KubeObject>,
  to: ReadonlyMap<string, KubeObject>,
  limits: DiffLimits = DEFAULT_DIFF_LIMITS,
  clock: () => number = () => performance.now(),
): RenderDiff {
  const started = clock();
  let bytesDiffed = 0;
  const objects: ObjectDiff[] = [];
  let unchanged = 0;
  const requestTimeCap = `diff skipped: request over ${limits.requestTimeoutMs} ms of diffing (cap per request)`;
  for (const k of [...new Set([...from.keys(), ...to.keys()])].sort()) {
    const a = from.get(k);
    const b = to.get(k);
    const o = (b ?? a)!;
    const before = comparable(a);
    const after = comparable(b);
    const jsonBefore = before === undefined ? '' : canonicalJson(before);
    const jsonAfter = after === undefined ? '' : canonicalJson(after);
    if (jsonBefore === jsonAfter) {
      unchanged++;
      continue;
    }
    const change: ObjectChange = a === undefined ? 'added' : b === undefined ? 'removed' : 'changed';
    const entry = { kind: o.kind, namespace: o.metadata.namespace ?? '', name: o.metadata.name, change };
    const skip = (reason: string): void => {
      objects.push({ ...entry, lines: [`  ${reason}`], skipped: reason });
    };
    const size = Math.max(Buffer.byteLength(jsonBefore), Buffer.byteLength(jsonAfter));
    if (size > limits.maxObjectBytes) {
      skip(`diff skipped: object over ${formatBytes(limits.maxObjectBytes)} (cap per object)`);
      continue;
    }
    if (bytesDiffed + jsonBefore.length + jsonAfter.length > limits.maxRequestBytes) {
      skip(`diff skipped: request over ${formatBytes(limits.maxRequestBytes)} of objects diffed (cap per request)`);
      continue;
    }
    if (clock() - started >= limits.requestTimeoutMs) {
      skip(requestTimeCap);
      continue;
    }
    bytesDiffed += jsonBefore.length + jsonAfter.length;
    const yamlBefore = canonicalYaml(before);
    const yamlAfter = canonicalYaml(after);
    const left = limits.requestTimeoutMs - (clock() - started);
    if (left <= 0) {
      skip(requestTimeCap);
      continue;
    }
    const budget = Math.min(limits.objectTimeoutMs, left);
    const t = clock();
    const lines = lineDiff(yamlBefore, yamlAfter, { maxEditLines: limits.maxEditLines, timeoutMs: budget });
    if (lines !== undefined) objects.push({ ...entry, lines });
    else if (clock() - t < budget) skip(`diff skipped: object has over ${limits.maxEditLines} changed lines (cap per object)`);
    else if (budget < limits.objectTimeoutMs) skip(requestTimeCap);
    else skip(`diff skipped: object took over ${limits.objectTimeoutMs} ms to diff (cap per object)`);
  }
  return { objects, unchanged };
}
