/**
 * Regular expressions for CEL health checks: RE2 syntax and semantics, as in
 * Kubernetes CEL (cel-go uses Go's regexp), run by re2js, a linear-time
 * engine — never JavaScript's backtracking RegExp, on which one
 * `matches('^(a+)+$')` over 33 characters froze `convoy dev` for 117 s.
 *
 * RE2 has no backreferences (`\1`) and no lookaround (`(?=`, `(?!`, `(?<=`,
 * `(?<!`): such patterns are syntax errors. `matches` is a search, not a full
 * match: anchor with `^…$` (CEL semantics).
 */
import { RE2JS } from 're2js';
import { createBoundedCache } from './cel-lru.ts';

/** Patterns built at run time longer than this are refused (a literal pattern is bounded by the expression's length). */
export const MAX_PATTERN_LENGTH = 4096;

export class RegexSyntaxError extends Error {
  constructor(pattern: string, reason: string) {
    const shown = pattern.length > 80 ? `${pattern.slice(0, 80)}…` : pattern;
    super(
      `invalid regular expression '${shown}': ${reason} (patterns use RE2 syntax, as in Kubernetes: no backreferences, no lookaround)`,
    );
    this.name = 'RegexSyntaxError';
  }
}

export interface CompiledPattern {
  /** True when the pattern matches somewhere in `input` (CEL `matches`). */
  test(input: string): boolean;
  /** re2js program size: the per-character work of a match, for the cost budget. */
  readonly programSize: number;
}

export interface RegexCache {
  /** Compiles (or returns the cached) pattern. Throws RegexSyntaxError. */
  compile(pattern: string): CompiledPattern;
}

function reasonOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** Compiles a pattern with RE2 semantics, uncached. Throws RegexSyntaxError. */
export function compileRe2(pattern: string): CompiledPattern {
  if (pattern.length > MAX_PATTERN_LENGTH) {
    throw new RegexSyntaxError(pattern, `longer than ${MAX_PATTERN_LENGTH} characters`);
  }
  let compiled: RE2JS;
  try {
    compiled = RE2JS.compile(pattern);
  } catch (error) {
    throw new RegexSyntaxError(pattern, reasonOf(error));
  }
  return { test: (input) => compiled.test(input), programSize: compiled.programSize() };
}

/** 64 patterns: a large compiled pattern (`\pL{1000}`) holds ~170 KB. */
export function createRegexCache(maxEntries = 64): RegexCache {
  const compiled = createBoundedCache<CompiledPattern | RegexSyntaxError>({ maxEntries });
  return {
    compile(pattern) {
      let entry = compiled.get(pattern);
      if (entry === undefined) {
        try {
          entry = compileRe2(pattern);
        } catch (error) {
          if (!(error instanceof RegexSyntaxError)) throw error;
          entry = error;
        }
        compiled.set(pattern, entry);
      }
      if (entry instanceof RegexSyntaxError) throw entry;
      return entry;
    },
  };
}
