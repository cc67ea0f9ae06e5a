// renderDiff: the relay's GET …/renders/diff on one large object, as its route runs it
// (relay/http/render-diff.ts diffRenders over domain/render/text-diff.ts: jsdiff's Myers diff with
// the caps per object and per request, the diff `convoy diff` uses too), each case in a fresh
// process of its own (bench/lib/diff-worker.ts) so that its peak RSS (VmHWM) is the diff's and
// nothing else's:
// - sparse 10k / 20k lines: a ConfigMap of that many keys with every 100th value changed, the
//   object diffed (200 / 400 changed lines);
// - rewrite 10k / 20k: every value changed, the worst case of an edit-distance diff: the cap on
//   changed lines (or the time cap) ends it;
// - oversize 20k: an object over the 1-MiB cap per object, skipped before any YAML is made.
// Before (the CLI's hand-written LCS diff, since deleted; on a quiet
// machine): 10k lines 2.1 s and 478 MB, 20k lines 6.6 s and 1.6 GB, above the chart's 512Mi limit.
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** The chart's memory limit for the relay (charts/convoy values: resources.limits.memory 512Mi). */
const CHART_LIMIT_MIB = 512;

interface Case {
  readonly lines: number;
  readonly edit: 'sparse' | 'rewrite' | 'oversize';
  /** Targets for this case. */
  readonly maxMs: number;
  readonly maxGrowthMiB: number;
  /** The cap the answer must name, or undefined: the object is diffed. */
  readonly cap?: RegExp;
}

const CASES: readonly Case[] = [
  { lines: 10_000, edit: 'sparse', maxMs: 1_000, maxGrowthMiB: 100 },
  { lines: 20_000, edit: 'sparse', maxMs: 2_000, maxGrowthMiB: 200 },
  { lines: 10_000, edit: 'rewrite', maxMs: 3_000, maxGrowthMiB: 200, cap: /cap per object/ },
  { lines: 20_000, edit: 'rewrite', maxMs: 3_000, maxGrowthMiB: 200, cap: /cap per object/ },
  {
    lines: 20_000,
    edit: 'oversize',
    maxMs: 1_000,
    maxGrowthMiB: 200,
    cap: /object over 1 MiB \(cap per object\)/,
  },
];

interface WorkerResult {
  ms: number;
  rssBeforeMiB: number;
  peakRssMiB: number;
  lines: number;
  skipped?: string;
}

export async function benchRenderDiff(root: string): Promise<Record<string, unknown>> {
  const results: Record<string, unknown>[] = [];
  let met = true;
  for (const c of CASES) {
    const { stdout } = await run(
      process.execPath,
      [join(root, 'bench', 'lib', 'diff-worker.ts'), String(c.lines), c.edit],
      { maxBuffer: 1024 * 1024 },
    );
    const r = JSON.parse(stdout) as WorkerResult;
    const growthMiB = r.peakRssMiB - r.rssBeforeMiB;
    const capOk = c.cap === undefined ? r.skipped === undefined : c.cap.test(r.skipped ?? '');
    const caseMet = r.ms <= c.maxMs && growthMiB <= c.maxGrowthMiB && r.peakRssMiB < CHART_LIMIT_MIB && capOk;
    met &&= caseMet;
    results.push({
      case: `${c.edit} ${c.lines} lines`,
      ms: r.ms,
      peakRssMiB: r.peakRssMiB,
      growthMiB,
      diffLines: r.lines,
      ...(r.skipped === undefined ? {} : { skipped: r.skipped }),
      target: {
        maxMs: c.maxMs,
        maxGrowthMiB: c.maxGrowthMiB,
        peakBelowChartLimitMiB: CHART_LIMIT_MIB,
        ...(c.cap === undefined ? { diffed: true } : { capNamed: c.cap.source }),
      },
      met: caseMet,
    });
  }
  return {
    cases: results,
    before: {
      note: "the CLI's hand-written LCS diff (deleted), quiet machine",
      sparse10kLines: { ms: 2_100, peakMB: 478 },
      sparse20kLines: { ms: 6_600, peakMB: 1_600 },
    },
    notes: [
      'each case in its own process: peakRssMiB is its VmHWM, growthMiB that minus its RSS before the diff (the process with its modules and the two objects)',
      'ms: comparable() + sorted-key JSON + canonical YAML of both sides + the Myers diff (or the cap), as the route does it; timings grow with the host load (hostLoad1m)',
    ],
    met,
  };
}
