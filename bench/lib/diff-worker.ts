// One diff of two generated renders in a process of its own, for the renderDiff bench section:
// prints {ms, rssBeforeMiB, peakRssMiB, heapPeakMiB?, objects} as JSON on stdout. Run as
//   node bench/lib/diff-worker.ts <lines> <edit: sparse|rewrite|oversize>
// sparse: every 100th value changed (a typical edit: 2 % of the lines differ);
// rewrite: every value changed (the worst case for an edit-distance diff: the caps stop it);
// oversize: sparse, with values long enough for the object to pass the 1-MiB cap per object.
// The CLI's hand-written LCS diff, measured as the before figure, is gone: both the relay
// and `convoy diff` use domain/render/text-diff.ts now.
import { readFileSync } from 'node:fs';
import type { KubeObject } from '../../domain/render/kube-object.ts';
import { byObjectKey, diffRenders } from '../../relay/http/render-diff.ts';

const [linesArg = '10000', edit = 'sparse'] = process.argv.slice(2);
const lines = Number(linesArg);

/** A ConfigMap whose canonical YAML is about `n` lines. */
function configMap(n: number, changed: (i: number) => boolean, pad: string): KubeObject {
  const data: Record<string, string> = {};
  for (let i = 0; i < n; i++)
    data[`key-${String(i).padStart(6, '0')}`] = changed(i) ? `changed ${i}${pad}` : `value ${i}${pad}`;
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'large', namespace: 'bench' }, data };
}

const peakMiB = (): number =>
  Math.round(Number(/VmHWM:\s+(\d+)/.exec(readFileSync('/proc/self/status', 'utf8'))?.[1] ?? 'NaN') / 1024);
const rssMiB = (): number => Math.round(process.memoryUsage().rss / (1024 * 1024));

const pad = edit === 'oversize' ? ' '.repeat(Math.ceil((1.25 * 1024 * 1024) / lines)) : '';
const before = configMap(lines, () => false, pad);
const after = configMap(lines, edit === 'rewrite' ? () => true : (i) => i % 100 === 50, pad);
const rssBeforeMiB = rssMiB();
const t = performance.now();
const diff = diffRenders(byObjectKey([before]), byObjectKey([after]));
const result = { lines: diff.objects[0]?.lines.length ?? 0, skipped: diff.objects[0]?.skipped };
const ms = Math.round(performance.now() - t);
process.stdout.write(
  `${JSON.stringify({ objectLines: lines, edit, ms, rssBeforeMiB, peakRssMiB: peakMiB(), ...result })}\n`,
);
