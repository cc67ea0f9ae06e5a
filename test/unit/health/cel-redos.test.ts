import { afterAll, describe, expect, it } from 'vitest';
import {
  compileChecks,
  createCelRuntime,
  evaluateChecks,
  type HealthCheck,
} from '../../../domain/health/index.ts';
import { REDOS_CASES } from './cel-redos-patterns.ts';

/**
 * The reported attack: `matches('^(a+)+$')` on 33 characters froze `convoy dev`
 * for 117 s on JavaScript's backtracking RegExp. With RE2 semantics every one
 * of fifty known catastrophic patterns finishes on its malicious input.
 *
 * The CPU figure is measured around the evaluation (this thread's CPU time,
 * not wall time, so a loaded machine does not inflate it much) and bounded
 * generously here: a backtracking engine needs seconds to centuries on these
 * inputs, RE2 a few milliseconds. The precise ≤ 10 ms target is the bench's
 * `celRedos` section.
 */
const GENEROUS_CPU_BOUND_MS = 100;

const cpuMs = (): number => {
  const usage = process.threadCpuUsage();
  return (usage.user + usage.system) / 1000;
};

const configMap = (data: Record<string, string>) => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name: 'attack', namespace: 'team-a' },
  data,
});

const check = (healthy: string): HealthCheck => ({ apiVersion: 'v1', kind: 'ConfigMap', healthy });

describe('CEL matches() runs RE2: catastrophic-backtracking patterns finish', () => {
  // The wall-clock bounds are out of reach: this test measures CPU, and a loaded host stretches wall time.
  const runtime = createCelRuntime({
    limits: { timePerEvaluationMs: 600_000, timePerAssessmentMs: 600_000 },
  });
  const measured: { pattern: string; ms: number }[] = [];
  afterAll(() => {
    const worst = measured.reduce((a, b) => (b.ms > a.ms ? b : a), { pattern: '', ms: 0 });
    console.log(
      `celRedos (unit): ${measured.length} evaluations, max CPU ${worst.ms.toFixed(2)} ms (${worst.pattern})`,
    );
  });

  it('has fifty distinct patterns', () => {
    expect(new Set(REDOS_CASES.map((c) => c.pattern)).size).toBe(50);
  });

  it('the reported attack: ^(a+)+$ on 32 a and ! is a plain false, at once', () => {
    const { compiled, errors } = compileChecks([check("object.data.value.matches('^(a+)+$')")], { runtime });
    expect(errors).toEqual([]);
    const before = cpuMs();
    const health = evaluateChecks(compiled, configMap({ value: `${'a'.repeat(32)}!` }), 'v1', 'ConfigMap');
    measured.push({ pattern: '^(a+)+$ (32 a)', ms: cpuMs() - before });
    expect(health).toEqual({
      state: 'Progressing',
      message: 'checks[0] (v1 ConfigMap): the healthy expression is false',
    });
  });

  it.each(REDOS_CASES.map((c) => [c.pattern, c] as const))('%s on its malicious input', (_name, redos) => {
    const input = redos.input(redos.n);
    expect(input.length).toBeGreaterThanOrEqual(30);
    expect(input.length).toBeLessThanOrEqual(5001);
    // The pattern comes from the object, so its RE2 compilation is inside the measurement too.
    const { compiled, errors } = compileChecks([check('object.data.value.matches(object.data.pattern)')], {
      runtime,
    });
    expect(errors).toEqual([]);
    const before = cpuMs();
    const health = evaluateChecks(
      compiled,
      configMap({ value: input, pattern: redos.pattern }),
      'v1',
      'ConfigMap',
    );
    const ms = cpuMs() - before;
    measured.push({ pattern: redos.pattern, ms });
    expect(health?.state, health?.message).toMatch(/^(Healthy|Progressing)$/);
    expect(ms).toBeLessThan(GENEROUS_CPU_BOUND_MS);
  });
});
