// celRedos: CEL health checks on RE2 with a cost budget.
// - The 50 catastrophic-backtracking patterns of test/unit/health/cel-redos-patterns.ts, each on
//   its malicious input (30–5000 characters) through a health check whose pattern comes from the
//   object (so the RE2 compilation is measured too): this thread's CPU time of the first
//   evaluation in a fresh runtime, and the median of 5 more. Target: every pattern ≤ 10 ms CPU.
// - Over-budget expressions: how long one runs before the meter stops it (wall and CPU), and how
//   long one hostile Release's assessment can hold the loop (50 objects, every check over budget):
//   the longest block any one Release's checks cause, whatever the others do.
// - The cost of a runtime and of a compile, cached and not.
import {
  compileChecks,
  createCelRuntime,
  evaluateChecks,
  type CelRuntime,
  type HealthCheck,
} from '../../domain/health/index.ts';
import { REDOS_CASES } from '../../test/unit/health/cel-redos-patterns.ts';
import { median, ms, percentile } from '../lib/stats.ts';

const TARGET_CPU_MS = 10;

const cpuMs = (): number => {
  const usage = process.threadCpuUsage();
  return (usage.user + usage.system) / 1000;
};

const configMap = (data: Record<string, string>) => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name: 'bench', namespace: 'bench' },
  data,
});
const check = (healthy: string): HealthCheck => ({ apiVersion: 'v1', kind: 'ConfigMap', healthy });

function timed<T>(work: () => T): { value: T; wallMs: number; cpuMs: number } {
  const cpu = cpuMs();
  const wall = performance.now();
  const value = work();
  return { value, wallMs: performance.now() - wall, cpuMs: cpuMs() - cpu };
}

function evaluateOnce(runtime: CelRuntime, expression: string, data: Record<string, string>) {
  const { compiled, errors } = compileChecks([check(expression)], { runtime });
  if (errors.length > 0) throw new Error(errors.map((e) => e.message).join('; '));
  return evaluateChecks(compiled, configMap(data), 'v1', 'ConfigMap');
}

function redosPatterns() {
  const rows = REDOS_CASES.map((redos) => {
    const input = redos.input(redos.n);
    const data = { value: input, pattern: redos.pattern };
    const expression = 'object.data.value.matches(object.data.pattern)';
    const runtime = createCelRuntime();
    const first = timed(() => evaluateOnce(runtime, expression, data));
    const warm = Array.from({ length: 5 }, () => timed(() => evaluateOnce(runtime, expression, data)).cpuMs);
    return {
      pattern: redos.pattern,
      inputChars: input.length,
      state: first.value?.state,
      firstCpuMs: ms(first.cpuMs),
      warmCpuMsP50: ms(median(warm) ?? Number.NaN),
    };
  });
  const firsts = rows.map((r) => r.firstCpuMs);
  const maxRow = rows.reduce((a, b) => (b.firstCpuMs > a.firstCpuMs ? b : a));
  return {
    rows,
    cpuMs: {
      max: ms(Math.max(...firsts)),
      p50: ms(median(firsts) ?? Number.NaN),
      p99: ms(percentile(firsts, 99) ?? Number.NaN),
      maxPattern: maxRow.pattern,
    },
    allEvaluated: rows.every((r) => r.state === 'Healthy' || r.state === 'Progressing'),
  };
}

const TEN = '[1, 2, 3, 4, 5, 6, 7, 8, 9, 10]';
const NESTED6 = Array.from({ length: 6 }, (_, i) => `v${i}`).reduceRight(
  (inner, v) => `${TEN}.all(${v}, ${inner})`,
  'v0 + v5 > 0',
);

const OVER_BUDGET: { name: string; expression: string; data: Record<string, string> }[] = [
  { name: '10^6 iterations of nested all()', expression: NESTED6, data: {} },
  { name: 'the same, error absorbed by || true', expression: `${NESTED6} || true`, data: {} },
  {
    name: 'a 100k-character string doubled six times',
    expression:
      'cel.bind(a, object.data.v + object.data.v, cel.bind(b, a + a, cel.bind(c, b + b, cel.bind(d, c + c, cel.bind(e, d + d, e.size() > 0)))))',
    data: { v: 'x'.repeat(100_000) },
  },
  {
    name: 'split("") of 3000 characters, compared pairwise',
    expression: "object.data.v.split('').all(a, object.data.v.split('').all(b, a == b))",
    data: { v: 'x'.repeat(3_000) },
  },
  {
    name: 'RE2 \\pL{1000} over 100k characters',
    expression: "object.data.v.matches('\\\\pL{1000}')",
    data: { v: 'a'.repeat(100_000) },
  },
];

function overBudget() {
  const runtime = createCelRuntime();
  return OVER_BUDGET.map(({ name, expression, data }) => {
    evaluateOnce(runtime, expression, data); // warm
    const runs = Array.from({ length: 3 }, () => timed(() => evaluateOnce(runtime, expression, data)));
    return {
      name,
      message: runs[0]?.value?.message,
      wallMsMax: ms(Math.max(...runs.map((r) => r.wallMs))),
      cpuMsMax: ms(Math.max(...runs.map((r) => r.cpuMs))),
    };
  });
}

/** One hostile Release: 50 ConfigMaps, each check over budget; how long its whole assessment holds the loop. */
function hostileAssessment() {
  const runtime = createCelRuntime();
  const objects = Array.from({ length: 50 }, () => configMap({}));
  const runs = Array.from({ length: 3 }, () =>
    timed(() => {
      const { compiled } = compileChecks([check(NESTED6)], { runtime });
      return objects.map((o) => evaluateChecks(compiled, o, 'v1', 'ConfigMap')?.message ?? '');
    }),
  );
  const last = runs[runs.length - 1]?.value ?? [];
  return {
    objects: objects.length,
    limits: runtime.limits,
    blockWallMsMax: ms(Math.max(...runs.map((r) => r.wallMs))),
    blockCpuMsMax: ms(Math.max(...runs.map((r) => r.cpuMs))),
    stoppedByCost: last.filter((m) => m.includes('cost budget')).length,
    stoppedByTime: last.filter((m) => m.includes('time bound')).length,
    notEvaluated: last.filter((m) => m.includes('was not evaluated')).length,
  };
}

function compileCosts() {
  const runtimes = Array.from({ length: 20 }, () => timed(() => createCelRuntime()).wallMs);
  const runtime = createCelRuntime();
  const sources = Array.from(
    { length: 200 },
    (_, i) =>
      `has(object.status) && object.status.replicas == ${i} && object.metadata.name.matches('^web-[a-z0-9]+$')`,
  );
  const cold = sources.map((s) => timed(() => runtime.compile(s)).wallMs);
  const cached = sources.map((s) => timed(() => runtime.compile(s)).wallMs);
  return {
    createRuntimeMsP50: Math.round((median(runtimes) ?? Number.NaN) * 1000) / 1000,
    compileMsP50: {
      uncached: Math.round((median(cold) ?? Number.NaN) * 1000) / 1000,
      cached: Math.round((median(cached) ?? Number.NaN) * 1000) / 1000,
    },
  };
}

export function benchCelRedos(): Promise<Record<string, unknown>> {
  const patterns = redosPatterns();
  const report = {
    how: "health checks `object.data.value.matches(object.data.pattern)` on ConfigMaps, through compileChecks + evaluateChecks in this process; CPU is this thread's (process.threadCpuUsage) around one evaluation in a fresh runtime (RE2 compilation included), then the median of 5 repeats",
    target: { perPatternCpuMs: TARGET_CPU_MS },
    met: patterns.allEvaluated && patterns.cpuMs.max <= TARGET_CPU_MS,
    patterns: {
      count: patterns.rows.length,
      cpuMs: patterns.cpuMs,
      allEvaluated: patterns.allEvaluated,
      rows: patterns.rows,
    },
    overBudget: overBudget(),
    hostileReleaseAssessment: hostileAssessment(),
    compile: compileCosts(),
  };
  return Promise.resolve(report);
}
