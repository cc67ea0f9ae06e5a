/**
 * `spec.healthAssessment.checks`: CEL expressions that override the built-in
 * rule for one apiVersion + kind.
 *
 * Semantics of one check, with `object` bound to the live object:
 * - `degraded` (optional) evaluates to true → Degraded;
 * - else `healthy` true → Healthy, false → Progressing (the progress
 *   deadline bounds how long);
 * - an evaluation error (e.g. a missing field: use `has()` or `.?`) or a
 *   non-boolean result → Degraded, with a message naming `checks[i]`.
 * Several checks may match one object: all are evaluated and the worst
 * verdict wins (the first check in list order among equals).
 *
 * JSON integers are handed to CEL as `int` (BigInt), as the Kubernetes API
 * server does for CEL in CRD validation, so `object.status.readyReplicas + 1
 * == 2` works; non-integral numbers stay `double`.
 *
 * Checks on Secrets are rejected at compile time: Secret data is never read.
 *
 * Limits, as Kubernetes puts on CEL (cel-runtime.ts): regular expressions are
 * RE2, matched in linear time (an invalid literal pattern is a compile error);
 * each evaluation has a cost budget and a wall-clock bound, and all
 * evaluations of one `compileChecks` result (one Release, one assessment)
 * share a larger one. An expression stopped over budget → Degraded, as any
 * check that cannot be evaluated, with a message naming `checks[i]` and the
 * budget it exceeded.
 */
import { createCelRuntime, type CelEvaluation, type CelProgram, type CelRuntime } from './cel-runtime.ts';
import { healthSeverity } from './severity.ts';
import { isSecret } from './rules/secret.ts';
import type { HealthCheck, KubeObject, ObjectHealth } from './types.ts';

/**
 * What all evaluations made with one `compileChecks` result may still spend
 * (one Release, one assessment): so a Release with many objects cannot turn
 * the per-evaluation bounds into a long stall of the loop.
 */
export interface AssessmentBudget {
  costLeft: number;
  timeLeftMs: number;
}

export interface CompiledCheck {
  /** Position in `spec.healthAssessment.checks`, for messages. */
  readonly index: number;
  readonly apiVersion: string;
  readonly kind: string;
  readonly healthy: CelProgram;
  readonly degraded: CelProgram | undefined;
  readonly runtime: CelRuntime;
  /** Shared by every check of one `compileChecks` call. */
  readonly budget: AssessmentBudget;
}

export type CompiledChecks = readonly CompiledCheck[];

export interface CheckCompileError {
  index: number;
  apiVersion: string;
  kind: string;
  message: string;
}

export interface CompileChecksResult {
  compiled: CompiledChecks;
  errors: CheckCompileError[];
}

export interface CompileChecksOptions {
  /**
   * The CEL runtime (compiled-program cache, limits), made once by a
   * composition root and shared by every Release. Without it each call makes
   * its own: same semantics and limits, nothing cached across calls.
   */
  runtime?: CelRuntime;
}

/** Static types a check expression may have; anything else can never be a boolean. */
const BOOLEAN_COMPATIBLE_TYPES: ReadonlySet<string> = new Set(['bool', 'dyn']);

function label(index: number, apiVersion: string, kind: string): string {
  return `checks[${index}] (${apiVersion} ${kind})`;
}

type CompileOutcome = { ok: true; program: CelProgram } | { ok: false; message: string };

function compileExpression(
  runtime: CelRuntime,
  field: 'healthy' | 'degraded',
  source: string,
): CompileOutcome {
  if (source.trim() === '') return { ok: false, message: `${field}: the expression is empty` };
  const outcome = runtime.compile(source);
  if (!outcome.ok) return { ok: false, message: `${field}: ${outcome.message}` };
  const type = outcome.program.type;
  if (type !== undefined && !BOOLEAN_COMPATIBLE_TYPES.has(type)) {
    return { ok: false, message: `${field}: the expression returns ${type}; it must return bool` };
  }
  return outcome;
}

/**
 * Compiles the checks of one Release. An invalid check (including an invalid
 * RE2 pattern literal) is reported in `errors` (with its index, so the caller
 * can name `checks[i]`) and left out of `compiled`, so the built-in rule keeps
 * assessing its kind. The result carries one assessment's budget: compile
 * once per assessment. Never throws.
 */
export function compileChecks(
  checks: readonly HealthCheck[],
  options: CompileChecksOptions = {},
): CompileChecksResult {
  const runtime = options.runtime ?? createCelRuntime();
  const budget: AssessmentBudget = {
    costLeft: runtime.limits.costPerAssessment,
    timeLeftMs: runtime.limits.timePerAssessmentMs,
  };
  const compiled: CompiledCheck[] = [];
  const errors: CheckCompileError[] = [];
  checks.forEach((check, index) => {
    const { apiVersion, kind } = check;
    const fail = (message: string): void => {
      errors.push({ index, apiVersion, kind, message: `${label(index, apiVersion, kind)}: ${message}` });
    };
    if (apiVersion === '' || kind === '') {
      fail('apiVersion and kind must both be set');
      return;
    }
    if (isSecret(apiVersion, kind)) {
      fail('checks on Secrets are not allowed: Secret data is never read; Secrets are always healthy');
      return;
    }
    const healthy = compileExpression(runtime, 'healthy', check.healthy);
    if (!healthy.ok) {
      fail(healthy.message);
      return;
    }
    let degraded: CelProgram | undefined;
    if (check.degraded !== undefined) {
      const outcome = compileExpression(runtime, 'degraded', check.degraded);
      if (!outcome.ok) {
        fail(outcome.message);
        return;
      }
      degraded = outcome.program;
    }
    compiled.push({ index, apiVersion, kind, healthy: healthy.program, degraded, runtime, budget });
  });
  return { compiled, errors };
}

/** JSON → CEL values: integral numbers become int (BigInt). */
function toCelValue(value: unknown): unknown {
  if (typeof value === 'number') return Number.isInteger(value) ? BigInt(value) : value;
  if (Array.isArray(value)) return value.map(toCelValue);
  if (typeof value === 'object' && value !== null) {
    return Object.fromEntries(Object.entries(value).map(([key, inner]) => [key, toCelValue(inner)]));
  }
  return value;
}

type Evaluation = { ok: true; value: boolean } | { ok: false; message: string };

function spend(budget: AssessmentBudget, evaluation: CelEvaluation, slowEvaluationMs: number): void {
  budget.costLeft -= evaluation.cost;
  if (evaluation.elapsedMs >= slowEvaluationMs) budget.timeLeftMs -= evaluation.elapsedMs;
}

function evaluateExpression(check: CompiledCheck, program: CelProgram, object: unknown): Evaluation {
  const { runtime, budget } = check;
  const { limits } = runtime;
  if (budget.costLeft <= 0 || budget.timeLeftMs <= 0) {
    return {
      ok: false,
      message:
        `was not evaluated: the checks of this Release spent their budget for one assessment ` +
        `(${limits.costPerAssessment} cost units, ${limits.timePerAssessmentMs} ms)`,
    };
  }
  const costLimit = Math.min(limits.costPerEvaluation, budget.costLeft);
  const timeLimitMs = Math.min(limits.timePerEvaluationMs, budget.timeLeftMs);
  const evaluation = runtime.evaluate(program, { object }, { costLimit, timeLimitMs });
  spend(budget, evaluation, limits.slowEvaluationMs);
  if (!evaluation.ok) {
    if (evaluation.exceeded === 'cost' && costLimit < limits.costPerEvaluation) {
      return {
        ok: false,
        message: `exceeded the ${costLimit} cost units left of this Release's budget for one assessment (${limits.costPerAssessment}) and was stopped`,
      };
    }
    if (evaluation.exceeded !== undefined) {
      return { ok: false, message: `exceeded its ${evaluation.message} and was stopped` };
    }
    return { ok: false, message: `evaluation failed: ${evaluation.message}` };
  }
  const value = evaluation.value;
  if (typeof value !== 'boolean') {
    return { ok: false, message: `returned ${value === null ? 'null' : typeof value}, not a boolean` };
  }
  return { ok: true, value };
}

function evaluateCheck(check: CompiledCheck, object: unknown): ObjectHealth {
  const name = label(check.index, check.apiVersion, check.kind);
  if (check.degraded !== undefined) {
    const result = evaluateExpression(check, check.degraded, object);
    if (!result.ok) return { state: 'Degraded', message: `${name}: degraded ${result.message}` };
    if (result.value) return { state: 'Degraded', message: `${name}: the degraded expression is true` };
  }
  const result = evaluateExpression(check, check.healthy, object);
  if (!result.ok) return { state: 'Degraded', message: `${name}: healthy ${result.message}` };
  return result.value
    ? { state: 'Healthy', message: `${name}: the healthy expression is true` }
    : { state: 'Progressing', message: `${name}: the healthy expression is false` };
}

/** Whether a compiled check applies to an object of this apiVersion and kind (exact match). */
export function checkApplies(check: CompiledCheck, apiVersion: string, kind: string): boolean {
  return check.apiVersion === apiVersion && check.kind === kind;
}

/**
 * The verdict of the checks that apply to `live`, or undefined when none
 * applies (the built-in rule decides). Never throws.
 */
export function evaluateChecks(
  checks: CompiledChecks,
  live: KubeObject,
  apiVersion: string,
  kind: string,
): ObjectHealth | undefined {
  const applicable = checks.filter((check) => checkApplies(check, apiVersion, kind));
  if (applicable.length === 0 || isSecret(apiVersion, kind)) return undefined;
  let object: unknown;
  try {
    object = toCelValue(live);
  } catch (error) {
    // e.g. a custom resource nested deeper than the stack allows
    const first = applicable[0];
    const reason = error instanceof Error ? error.message : String(error);
    return {
      state: 'Degraded',
      message: `${label(first.index, apiVersion, kind)}: the object cannot be given to CEL: ${reason}`,
    };
  }
  let worst: ObjectHealth | undefined;
  for (const check of applicable) {
    const health = evaluateCheck(check, object);
    if (worst === undefined || healthSeverity(health.state) > healthSeverity(worst.state)) worst = health;
  }
  return worst;
}
