import { describe, expect, it } from 'vitest';
import {
  compileChecks,
  createCelRuntime,
  DEFAULT_CEL_LIMITS,
  evaluateChecks,
  type HealthCheck,
} from '../../../domain/health/index.ts';

/**
 * Kubernetes bounds every CEL expression by a cost budget; convoy's checks
 * have one per evaluation (1,000,000 units, Kubernetes' per-expression limit),
 * a wall-clock bound per evaluation, and a shared budget for all evaluations
 * of one Release's assessment. Over budget → Degraded, naming the check and
 * the budget. Bounds are asserted on the deterministic cost, never on time
 * (the wall-clock bound is driven by an injected clock).
 */
const configMap = (data: Record<string, string> = {}) => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name: 'settings', namespace: 'team-a' },
  data,
});

const check = (healthy: string): HealthCheck => ({ apiVersion: 'v1', kind: 'ConfigMap', healthy });

const ten = '[1, 2, 3, 4, 5, 6, 7, 8, 9, 10]';
const nested = (depth: number, body: string): string =>
  Array.from({ length: depth }, (_, i) => `v${i}`).reduceRight(
    (inner, v) => `${ten}.all(${v}, ${inner})`,
    body,
  );

/** Cost is deterministic; the wall-clock bounds are moved out of reach except where a test drives them with its own clock. */
const NO_TIME_LIMITS = { timePerEvaluationMs: 600_000, timePerAssessmentMs: 600_000 };

const OVER_COST =
  /^checks\[0\] \(v1 ConfigMap\): healthy exceeded its cost budget of 1000000 units and was stopped$/;

describe('CEL checks over their cost budget end Degraded, naming the check', () => {
  const runtime = createCelRuntime({ limits: NO_TIME_LIMITS });

  function costOf(expression: string, data: Record<string, string> = {}) {
    const compiled = runtime.compile(expression);
    if (!compiled.ok) throw new Error(compiled.message);
    return runtime.evaluate(
      compiled.program,
      { object: configMap(data) },
      { costLimit: 1_000_000, timeLimitMs: 60_000 },
    );
  }

  it.each([
    ['six nested comprehensions (10^6 iterations)', nested(6, 'v0 + v5 > 0'), {}],
    ['the same, its error absorbed by || true', `${nested(6, 'v0 + v5 > 0')} || true`, {}],
    [
      'the same inside exists (which keeps iterating after an error)',
      `[1].exists(x, ${nested(6, 'v0 + v5 > 0')})`,
      {},
    ],
    [
      'a string doubled by cel.bind',
      'cel.bind(a, object.data.v + object.data.v, cel.bind(b, a + a, cel.bind(c, b + b, cel.bind(d, c + c, cel.bind(e, d + d, cel.bind(f, e + e, f.size() > 0))))))',
      { v: 'x'.repeat(100_000) },
    ],
    [
      'a list doubled by cel.bind',
      'cel.bind(a, object.data.v.split(""), cel.bind(b, a + a, cel.bind(c, b + b, cel.bind(d, c + c, d.size() > 0))))',
      { v: 'x'.repeat(200_000) },
    ],
    [
      'a long string compared with itself in a loop',
      "object.data.v.split('').all(a, object.data.v.split('').all(b, a == b))",
      { v: 'x'.repeat(3_000) },
    ],
    [
      'a large RE2 program over a long input',
      "object.data.v.matches('\\\\pL{1000}')",
      { v: 'a'.repeat(100_000) },
    ],
  ])('%s', (_name, expression, data) => {
    const { compiled, errors } = compileChecks([check(expression)], { runtime });
    expect(errors).toEqual([]);
    expect(evaluateChecks(compiled, configMap(data), 'v1', 'ConfigMap')).toEqual({
      state: 'Degraded',
      message: expect.stringMatching(OVER_COST) as unknown,
    });
    // Stopped at the budget: it spent the budget plus the one charge that crossed it.
    const evaluation = costOf(expression, data);
    expect(evaluation).toMatchObject({ ok: false, exceeded: 'cost' });
    if (expression.includes('.all(')) expect(evaluation.cost).toBeLessThanOrEqual(1_000_001 + 3_000);
  });

  it('a heavy check within budget is evaluated normally (10^4 iterations)', () => {
    const evaluation = costOf(nested(4, 'v0 + v3 > 0'));
    expect(evaluation).toMatchObject({ ok: true, value: true });
    expect(evaluation.cost).toBeLessThan(1_000_000);
  });

  it('an everyday check costs a few dozen units', () => {
    const evaluation = costOf("has(object.data.mode) && object.data.mode.matches('^(on|off)$')", {
      mode: 'on',
    });
    expect(evaluation).toMatchObject({ ok: true, value: true });
    expect(evaluation.cost).toBeLessThan(50);
  });

  it('the defaults are Kubernetes’ per-expression limit, for one evaluation and for one Release’s whole assessment', () => {
    expect(DEFAULT_CEL_LIMITS.costPerEvaluation).toBe(1_000_000);
    expect(DEFAULT_CEL_LIMITS.costPerAssessment).toBe(1_000_000);
  });

  it('the limits are the runtime’s: a lower per-evaluation budget stops a smaller expression', () => {
    const strict = createCelRuntime({ limits: { ...NO_TIME_LIMITS, costPerEvaluation: 100 } });
    const { compiled } = compileChecks([check(nested(2, 'v0 + v1 > 0'))], { runtime: strict });
    expect(evaluateChecks(compiled, configMap(), 'v1', 'ConfigMap')?.message).toBe(
      'checks[0] (v1 ConfigMap): healthy exceeded its cost budget of 100 units and was stopped',
    );
  });

  it('a degraded expression over budget names the degraded expression', () => {
    const { compiled } = compileChecks([{ ...check('true'), degraded: nested(6, 'v0 > 0') }], { runtime });
    expect(evaluateChecks(compiled, configMap(), 'v1', 'ConfigMap')).toEqual({
      state: 'Degraded',
      message: 'checks[0] (v1 ConfigMap): degraded exceeded its cost budget of 1000000 units and was stopped',
    });
  });
});

describe('CEL checks have a wall-clock bound, checked while they run', () => {
  it('an evaluation past its time bound ends Degraded, naming the check and the bound', () => {
    let clock = 0;
    const runtime = createCelRuntime({ now: () => (clock += 1), limits: { timePerEvaluationMs: 50 } });
    const { compiled } = compileChecks([check(nested(3, 'v0 > 0'))], { runtime });
    expect(evaluateChecks(compiled, configMap(), 'v1', 'ConfigMap')).toEqual({
      state: 'Degraded',
      message: 'checks[0] (v1 ConfigMap): healthy exceeded its time bound of 50 ms and was stopped',
    });
  });
});

describe('one Release’s checks cannot hold the loop: a budget per assessment', () => {
  it('slow evaluations use up the assessment’s time; the microseconds of ordinary ones never do', () => {
    let clock = 0;
    const limits = {
      costPerEvaluation: 1e9,
      costPerAssessment: 1e12,
      timePerEvaluationMs: 5,
      timePerAssessmentMs: 12,
    };
    const runtime = createCelRuntime({ now: () => (clock += 0.01), limits });
    const slow = compileChecks([check(nested(3, 'v0 > 0'))], { runtime }).compiled;
    const verdicts = Array.from(
      { length: 5 },
      () => evaluateChecks(slow, configMap(), 'v1', 'ConfigMap')?.message ?? '',
    );
    expect(verdicts.slice(0, 2)).toEqual([
      'checks[0] (v1 ConfigMap): healthy exceeded its time bound of 5 ms and was stopped',
      'checks[0] (v1 ConfigMap): healthy exceeded its time bound of 5 ms and was stopped',
    ]);
    expect(verdicts.at(-1)).toContain(
      'was not evaluated: the checks of this Release spent their budget for one assessment',
    );
    const ordinary = compileChecks([check("object.data.ready == 'true'")], { runtime }).compiled;
    const states = Array.from(
      { length: 2_000 },
      () => evaluateChecks(ordinary, configMap({ ready: 'true' }), 'v1', 'ConfigMap')?.state,
    );
    expect(new Set(states)).toEqual(new Set(['Healthy']));
  });

  it('once a Release’s assessment budget is spent, its remaining objects are not evaluated', () => {
    const runtime = createCelRuntime({ limits: { ...NO_TIME_LIMITS, costPerAssessment: 2_500_000 } });
    const { compiled } = compileChecks([check(nested(6, 'v0 > 0'))], { runtime });
    const verdicts = Array.from(
      { length: 5 },
      () => evaluateChecks(compiled, configMap(), 'v1', 'ConfigMap')?.message,
    );
    expect(verdicts.slice(0, 2)).toEqual([
      'checks[0] (v1 ConfigMap): healthy exceeded its cost budget of 1000000 units and was stopped',
      'checks[0] (v1 ConfigMap): healthy exceeded its cost budget of 1000000 units and was stopped',
    ]);
    // The third evaluation gets only what is left of the assessment's budget.
    expect(verdicts[2]).toBe(
      "checks[0] (v1 ConfigMap): healthy exceeded the 499998 cost units left of this Release's budget for one assessment (2500000) and was stopped",
    );
    expect(verdicts.slice(3)).toEqual([
      'checks[0] (v1 ConfigMap): healthy was not evaluated: the checks of this Release spent their budget for one assessment (2500000 cost units, 600000 ms)',
      'checks[0] (v1 ConfigMap): healthy was not evaluated: the checks of this Release spent their budget for one assessment (2500000 cost units, 600000 ms)',
    ]);
  });

  it('another Release sharing the runtime keeps its own budget, and the next assessment starts afresh', () => {
    const runtime = createCelRuntime({ limits: { ...NO_TIME_LIMITS, costPerAssessment: 1_000_000 } });
    const hostile = compileChecks([check(nested(6, 'v0 > 0'))], { runtime }).compiled;
    evaluateChecks(hostile, configMap(), 'v1', 'ConfigMap');
    expect(evaluateChecks(hostile, configMap(), 'v1', 'ConfigMap')?.message).toContain('was not evaluated');
    const other = compileChecks([check("object.data.ready == 'true'")], { runtime }).compiled;
    expect(evaluateChecks(other, configMap({ ready: 'true' }), 'v1', 'ConfigMap')?.state).toBe('Healthy');
    const nextAssessment = compileChecks([check(nested(6, 'v0 > 0'))], { runtime }).compiled;
    expect(evaluateChecks(nextAssessment, configMap(), 'v1', 'ConfigMap')?.message).toContain(
      'exceeded its cost budget',
    );
  });
});

describe('CEL checks never throw on a hostile object', () => {
  it('an object nested deeper than the stack allows is Degraded naming the check', () => {
    let deep: unknown = 'bottom';
    for (let i = 0; i < 200_000; i++) deep = [deep];
    const { compiled } = compileChecks([check('true')]);
    const live = { ...configMap(), spec: { deep } };
    expect(evaluateChecks(compiled, live, 'v1', 'ConfigMap')).toEqual({
      state: 'Degraded',
      message: expect.stringMatching(
        /^checks\[0\] \(v1 ConfigMap\): the object cannot be given to CEL: /,
      ) as unknown,
    });
  });
});
