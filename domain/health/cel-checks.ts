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
 */
import { Environment, type ParseResult } from '@marcbachmann/cel-js';
import { healthSeverity } from './severity.ts';
import { isSecret } from './rules/secret.ts';
import type { HealthCheck, KubeObject, ObjectHealth } from './types.ts';

export interface CompiledCheck {
  /** Position in `spec.healthAssessment.checks`, for messages. */
  readonly index: number;
  readonly apiVersion: string;
  readonly kind: string;
  readonly healthy: ParseResult;
  readonly degraded: ParseResult | undefined;
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

/** Static types a check expression may have; anything else can never be a boolean. */
const BOOLEAN_COMPATIBLE_TYPES: ReadonlySet<string> = new Set(['bool', 'dyn']);

function errorSummary(error: unknown): string {
  if (error instanceof Error) {
    const summary = (error as Error & { summary?: unknown }).summary;
    if (typeof summary === 'string' && summary !== '') return summary;
    return error.message.split('\n')[0] ?? error.message;
  }
  return String(error);
}

function label(index: number, apiVersion: string, kind: string): string {
  return `checks[${index}] (${apiVersion} ${kind})`;
}

type CompileOutcome = { ok: true; expression: ParseResult } | { ok: false; message: string };

function compileExpression(env: Environment, field: 'healthy' | 'degraded', source: string): CompileOutcome {
  if (source.trim() === '') return { ok: false, message: `${field}: the expression is empty` };
  let expression: ParseResult;
  try {
    expression = env.parse(source);
  } catch (error) {
    return { ok: false, message: `${field}: ${errorSummary(error)}` };
  }
  const checked = expression.check();
  if (!checked.valid) {
    return { ok: false, message: `${field}: ${errorSummary(checked.error)}` };
  }
  if (checked.type !== undefined && !BOOLEAN_COMPATIBLE_TYPES.has(checked.type)) {
    return { ok: false, message: `${field}: the expression returns ${checked.type}; it must return bool` };
  }
  return { ok: true, expression };
}

/**
 * Compiles the checks of one Release. An invalid check is reported in
 * `errors` (with its index, so the caller can name `checks[i]`) and left
 * out of `compiled`, so the built-in rule keeps assessing its kind. Never throws.
 */
export function compileChecks(checks: readonly HealthCheck[]): CompileChecksResult {
  // One environment per call: environments are mutable registries, and the
  // health function compiles once per Release per run.
  const env = new Environment({
    enableOptionalTypes: true,
    homogeneousAggregateLiterals: false,
  }).registerVariable('object', 'map');
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
    const healthy = compileExpression(env, 'healthy', check.healthy);
    if (!healthy.ok) {
      fail(healthy.message);
      return;
    }
    let degraded: ParseResult | undefined;
    if (check.degraded !== undefined) {
      const outcome = compileExpression(env, 'degraded', check.degraded);
      if (!outcome.ok) {
        fail(outcome.message);
        return;
      }
      degraded = outcome.expression;
    }
    compiled.push({ index, apiVersion, kind, healthy: healthy.expression, degraded });
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

function evaluateExpression(expression: ParseResult, object: unknown): Evaluation {
  let value: unknown;
  try {
    value = expression({ object });
  } catch (error) {
    return { ok: false, message: `evaluation failed: ${errorSummary(error)}` };
  }
  if (typeof value !== 'boolean') {
    return { ok: false, message: `returned ${value === null ? 'null' : typeof value}, not a boolean` };
  }
  return { ok: true, value };
}

function evaluateCheck(check: CompiledCheck, object: unknown): ObjectHealth {
  const name = label(check.index, check.apiVersion, check.kind);
  if (check.degraded !== undefined) {
    const result = evaluateExpression(check.degraded, object);
    if (!result.ok) return { state: 'Degraded', message: `${name}: degraded ${result.message}` };
    if (result.value) return { state: 'Degraded', message: `${name}: the degraded expression is true` };
  }
  const result = evaluateExpression(check.healthy, object);
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
  const object = toCelValue(live);
  let worst: ObjectHealth | undefined;
  for (const check of applicable) {
    const health = evaluateCheck(check, object);
    if (worst === undefined || healthSeverity(health.state) > healthSeverity(worst.state)) worst = health;
  }
  return worst;
}
