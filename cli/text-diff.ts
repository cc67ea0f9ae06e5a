/**
 * A unified diff of two texts by lines (longest common subsequence), with
 * `context` lines around each change. Meant for one Kubernetes object as YAML:
 * inputs are at most a few thousand lines.
 */
import { stringify } from 'yaml';

/** YAML with keys sorted at every level, so that two objects compare by content, not key order. */
export function canonicalYaml(value: unknown): string {
  return value === undefined ? '' : stringify(sortKeys(value), { lineWidth: 0 });
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

type Op = { kind: ' ' | '-' | '+'; line: string };

function lineOps(a: readonly string[], b: readonly string[]): Op[] {
  const n = a.length;
  const m = b.length;
  const lcs: Uint32Array[] = Array.from({ length: n + 1 }, () => new Uint32Array(m + 1));
  for (let i = n - 1; i >= 0; i--) {
    for (let j = m - 1; j >= 0; j--)
      lcs[i][j] = a[i] === b[j] ? lcs[i + 1][j + 1] + 1 : Math.max(lcs[i + 1][j], lcs[i][j + 1]);
  }
  const ops: Op[] = [];
  let i = 0;
  let j = 0;
  while (i < n && j < m) {
    if (a[i] === b[j]) {
      ops.push({ kind: ' ', line: a[i] });
      i++;
      j++;
    } else if (lcs[i + 1][j] >= lcs[i][j + 1]) ops.push({ kind: '-', line: a[i++] });
    else ops.push({ kind: '+', line: b[j++] });
  }
  while (i < n) ops.push({ kind: '-', line: a[i++] });
  while (j < m) ops.push({ kind: '+', line: b[j++] });
  return ops;
}

/** The changed lines with `context` lines around them; [] when the texts are equal. */
export function unifiedDiff(before: string, after: string, context = 3): string[] {
  if (before === after) return [];
  const split = (t: string) => (t === '' ? [] : t.replace(/\n$/, '').split('\n'));
  const ops = lineOps(split(before), split(after));
  const keep = new Set<number>();
  ops.forEach((op, index) => {
    if (op.kind === ' ') return;
    for (let k = Math.max(0, index - context); k <= Math.min(ops.length - 1, index + context); k++)
      keep.add(k);
  });
  const out: string[] = [];
  let last = -1;
  for (const index of [...keep].sort((x, y) => x - y)) {
    if (last !== -1 && index > last + 1) out.push('  …');
    const op = ops[index];
    out.push(`${op.kind} ${op.line}`);
    last = index;
  }
  return out;
}
