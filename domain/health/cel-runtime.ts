/**
 * The CEL runtime of health checks: one cel-js Environment with Kubernetes'
 * semantics and limits where cel-js differs —
 * - regular expressions are RE2, matched in linear time (cel-re2.ts), for
 *   `s.matches(re)` and `matches(s, re)`; an invalid literal pattern is a
 *   compile error;
 * - `duration(s)` is parsed in linear time as Go does (cel-duration.ts), and
 *   `s.lastIndexOf(t)` searches in linear time (cel-strings.ts);
 * - every evaluation has a cost budget and a wall-clock deadline (cel-meter.ts);
 * - expressions are bounded in length (as the CRD bounds them) and parsed
 *   with bounded AST size and depth;
 * and a cache of compiled programs keyed by expression text, bounded in
 * entries and total characters, plus one of compiled patterns.
 *
 * A runtime holds mutable caches, so it is made by a composition root (or per
 * call, by `compileChecks` when none is passed) — never at module load.
 * Evaluation is synchronous and not re-entrant, as cel-js itself requires.
 */
import { Environment, type ParseResult } from '@marcbachmann/cel-js';
import { parseGoDuration } from './cel-duration.ts';
import { createBoundedCache } from './cel-lru.ts';
import { BudgetExceededError, installMeter, Meter, type Exceeded, type MeterSlot } from './cel-meter.ts';
import { createRegexCache, RegexSyntaxError, type RegexCache } from './cel-re2.ts';
import {
  GO_DURATION_FUNCTION,
  LINEAR_LAST_INDEX_OF_METHOD,
  publicNames,
  RE2_MATCHES_METHOD,
  rewriteBuiltins,
} from './cel-rewrite.ts';
import { celLastIndexOf, celLastIndexOfFrom } from './cel-strings.ts';

/** As the CRD's maxLength on `healthy` (domain/api/release-spec.ts). */
export const MAX_EXPRESSION_LENGTH = 4096;

export interface CelLimits {
  /** Cost units one evaluation of one expression may spend: Kubernetes' per-expression limit. */
  costPerEvaluation: number;
  /** Wall-clock bound of one evaluation, in ms (a backstop for work the cost model undercounts). */
  timePerEvaluationMs: number;
  /** Cost units all evaluations made with one `compileChecks` result (one Release, one assessment) may spend. */
  costPerAssessment: number;
  /**
   * Wall-clock all evaluations made with one `compileChecks` result may spend, in ms, counting
   * only evaluations that took `slowEvaluationMs` or more: an ordinary check takes microseconds,
   * so a large Release on a loaded host does not run out, while slow ones add up.
   */
  timePerAssessmentMs: number;
  /** See timePerAssessmentMs. */
  slowEvaluationMs: number;
}

export const DEFAULT_CEL_LIMITS: Readonly<CelLimits> = Object.freeze({
  costPerEvaluation: 1_000_000,
  timePerEvaluationMs: 200,
  costPerAssessment: 1_000_000,
  timePerAssessmentMs: 250,
  slowEvaluationMs: 1,
});

export interface CelProgram {
  readonly source: string;
  /** The static result type ('bool', 'dyn', …). */
  readonly type: string | undefined;
  readonly run: ParseResult;
}

export type CelCompileOutcome = { ok: true; program: CelProgram } | { ok: false; message: string };

export type CelEvaluation =
  | { ok: true; value: unknown; cost: number; elapsedMs: number }
  | { ok: false; exceeded: undefined; message: string; cost: number; elapsedMs: number }
  | { ok: false; exceeded: Exceeded; message: string; cost: number; elapsedMs: number };

export interface CelBounds {
  costLimit: number;
  timeLimitMs: number;
}

export interface CelRuntime {
  readonly limits: Readonly<CelLimits>;
  /** Monotonic milliseconds. */
  readonly now: () => number;
  /** Parses, rewrites, type-checks and validates literal patterns; cached by expression text. Never throws. */
  compile(source: string): CelCompileOutcome;
  /** Evaluates with `activation` as its variables, within `bounds`. Never throws. */
  evaluate(program: CelProgram, activation: Record<string, unknown>, bounds: CelBounds): CelEvaluation;
}

export interface CelRuntimeOptions {
  limits?: Partial<CelLimits>;
  /** Monotonic clock in ms; performance.now by default. */
  now?: () => number;
  /** Compiled programs kept (LRU); 4096 by default. */
  programCacheSize?: number;
  /** Total characters of the programs kept (a compiled program holds ~65 bytes per character); 262,144 (~17 MB) by default. */
  programCacheCharacters?: number;
  /** Compiled patterns kept (LRU); 64 by default. */
  patternCacheSize?: number;
}

export function errorSummary(error: unknown): string {
  if (error instanceof Error) {
    const summary = (error as Error & { summary?: unknown }).summary;
    const text =
      typeof summary === 'string' && summary !== ''
        ? summary
        : (error.message.split('\n')[0] ?? error.message);
    return publicNames(text);
  }
  return publicNames(String(error));
}

function matchCost(input: string, programSize: number): number {
  return Math.ceil(input.length / 10) * Math.max(1, Math.ceil(programSize / 10));
}

/** The Environment with convoy's functions, and its evaluator metered through `slot`. */
function createEnvironment(slot: MeterSlot, patterns: RegexCache): Environment {
  const match = (input: string, pattern: string): boolean => {
    const compiled = patterns.compile(pattern);
    slot.active?.charge(Math.ceil(pattern.length / 10) + matchCost(input, compiled.programSize));
    return compiled.test(input);
  };
  // cel-js calls function handlers with its evaluator as `this`: the probe hands it over.
  const evaluators: unknown[] = [];
  const env = new Environment({
    enableOptionalTypes: true,
    homogeneousAggregateLiterals: false,
    limits: { maxAstNodes: 4096, maxDepth: 100 },
  })
    .registerVariable('object', 'map')
    .registerFunction(`string.${RE2_MATCHES_METHOD}(string): bool`, match)
    .registerFunction('matches(string, string): bool', match)
    .registerFunction(`${GO_DURATION_FUNCTION}(string): google.protobuf.Duration`, parseGoDuration)
    .registerFunction(`string.${LINEAR_LAST_INDEX_OF_METHOD}(string): int`, celLastIndexOf)
    .registerFunction(`string.${LINEAR_LAST_INDEX_OF_METHOD}(string, int): int`, celLastIndexOfFrom)
    .registerFunction('convoy_internal_evaluator(): bool', function (this: unknown) {
      if (evaluators.length === 0) evaluators.push(this);
      return true;
    });
  env.evaluate('convoy_internal_evaluator()', {});
  installMeter(evaluators[0], slot);
  return env;
}

/** Fails loudly if a cel-js upgrade stopped routing evaluation through the meter: never run unmetered. */
function assertMetered(env: Environment, slot: MeterSlot, now: () => number): void {
  const probe = env.parse('[1, 2, 3].all(x, x > 0)');
  const meter = new Meter(Number.MAX_SAFE_INTEGER, Number.POSITIVE_INFINITY, now);
  slot.active = meter;
  try {
    probe({});
  } finally {
    slot.active = undefined;
  }
  if (meter.cost < 3) {
    throw new Error(
      '@marcbachmann/cel-js no longer evaluates through its evaluator.run: CEL health checks cannot be metered',
    );
  }
}

export function createCelRuntime(options: CelRuntimeOptions = {}): CelRuntime {
  const limits: Readonly<CelLimits> = Object.freeze({ ...DEFAULT_CEL_LIMITS, ...options.limits });
  const now = options.now ?? (() => performance.now());
  const slot: MeterSlot = { active: undefined };
  const patterns = createRegexCache(options.patternCacheSize ?? 64);
  const env = createEnvironment(slot, patterns);
  const programs = createBoundedCache<CelCompileOutcome>({
    maxEntries: options.programCacheSize ?? 4096,
    maxWeight: options.programCacheCharacters ?? 262_144,
  });
  assertMetered(env, slot, now);

  function compileUncached(source: string): CelCompileOutcome {
    if (source.length > MAX_EXPRESSION_LENGTH) {
      return { ok: false, message: `the expression is longer than ${MAX_EXPRESSION_LENGTH} characters` };
    }
    let run: ParseResult;
    try {
      run = env.parse(source);
    } catch (error) {
      return { ok: false, message: errorSummary(error) };
    }
    const { literalPatterns } = rewriteBuiltins(run.ast);
    const checked = run.check();
    if (!checked.valid) return { ok: false, message: errorSummary(checked.error) };
    for (const pattern of literalPatterns) {
      try {
        patterns.compile(pattern);
      } catch (error) {
        if (error instanceof RegexSyntaxError) return { ok: false, message: error.message };
        throw error;
      }
    }
    return { ok: true, program: { source, type: checked.type, run } };
  }

  function evaluate(
    program: CelProgram,
    activation: Record<string, unknown>,
    bounds: CelBounds,
  ): CelEvaluation {
    if (slot.active !== undefined) throw new Error('CEL evaluation is not re-entrant');
    const started = now();
    const meter = new Meter(bounds.costLimit, started + bounds.timeLimitMs, now);
    slot.active = meter;
    let value: unknown;
    let failure: unknown;
    try {
      value = program.run(activation);
    } catch (error) {
      failure = error;
    } finally {
      slot.active = undefined;
    }
    const elapsedMs = now() - started;
    const cost = meter.cost;
    if (meter.exceeded !== undefined) {
      const message =
        meter.exceeded === 'cost'
          ? `cost budget of ${bounds.costLimit} units`
          : `time bound of ${bounds.timeLimitMs} ms`;
      return { ok: false, exceeded: meter.exceeded, message, cost, elapsedMs };
    }
    if (failure !== undefined) {
      if (failure instanceof BudgetExceededError)
        throw new Error('a CEL evaluation was stopped by a meter that did not record it');
      return { ok: false, exceeded: undefined, message: errorSummary(failure), cost, elapsedMs };
    }
    return { ok: true, value, cost, elapsedMs };
  }

  return {
    limits,
    now,
    compile(source) {
      let outcome = programs.get(source);
      if (outcome === undefined) {
        outcome = compileUncached(source);
        programs.set(source, outcome);
      }
      return outcome;
    },
    evaluate,
  };
}
