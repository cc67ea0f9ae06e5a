/**
 * Fifty regular expressions known for catastrophic backtracking, each with a
 * malicious input builder: exponential ones (nested or overlapping
 * quantifiers), polynomial ones (adjacent overlapping quantifiers, unanchored
 * trailing runs) and the published classics (OWASP's email and name
 * patterns, the `ms` and URL ReDoS CVE patterns, CSV field counting).
 * On JavaScript's backtracking RegExp each of them takes seconds to forever
 * at a few dozen to a few thousand characters; on RE2 they are linear.
 *
 * Shared by test/unit/health/cel-redos.test.ts and the bench's `celRedos`
 * section (bench/sections/cel-redos.ts).
 */
export interface RedosCase {
  /** The pattern, in RE2 syntax (every one is valid RE2). */
  pattern: string;
  /** The malicious input for `n` repetitions of its attack unit. */
  input: (n: number) => string;
  /** Repetitions used by the test and the bench (inputs of 30–5000 characters). */
  n: number;
}

const run =
  (unit: string, suffix = '!', prefix = '') =>
  (n: number) =>
    `${prefix}${unit.repeat(n)}${suffix}`;

export const REDOS_CASES: readonly RedosCase[] = [
  // Nested quantifiers over one character: exponential.
  { pattern: '^(a+)+$', input: run('a'), n: 5000 },
  { pattern: '^(a*)*$', input: run('a'), n: 5000 },
  { pattern: '^(a+)*$', input: run('a'), n: 5000 },
  { pattern: '^(a*)+$', input: run('a'), n: 5000 },
  { pattern: '^(?:a+)+$', input: run('a'), n: 5000 },
  { pattern: '(a+)+$', input: run('a'), n: 5000 },
  { pattern: '(a+)+b', input: run('a', ''), n: 5000 },
  { pattern: '^(a+){2,}$', input: run('a'), n: 5000 },
  { pattern: '^(a+)+a+$', input: run('a'), n: 5000 },
  { pattern: '^((a+)+)+$', input: run('a'), n: 5000 },
  // Overlapping alternatives under a quantifier: exponential.
  { pattern: '^(a|aa)+$', input: run('a'), n: 5000 },
  { pattern: '^(a|a?)+$', input: run('a'), n: 5000 },
  { pattern: '^(a|a)*$', input: run('a', 'b'), n: 5000 },
  { pattern: '^(aa|a)+b$', input: run('a', 'c'), n: 5000 },
  { pattern: '^(a|aa|aaa)+$', input: run('a'), n: 5000 },
  { pattern: '^(a|\\w)+$', input: run('a'), n: 5000 },
  { pattern: '^(\\d|\\w)+$', input: run('1'), n: 5000 },
  { pattern: '^([a-z]|[a-z0-9])+$', input: run('a'), n: 5000 },
  { pattern: '^(x|x+)+y$', input: run('x', ''), n: 5000 },
  { pattern: '^(a|b|ab)*c$', input: run('ab', ''), n: 2500 },
  { pattern: '^(a|ab|b)*c$', input: run('ab', ''), n: 2500 },
  { pattern: '^((ab)*)+$', input: run('ab', 'a'), n: 2500 },
  { pattern: '^([a-c]+|[b-d]+)*e$', input: run('b'), n: 5000 },
  // Classes and words under nested quantifiers: exponential.
  { pattern: '^([a-zA-Z]+)*$', input: run('a', '1'), n: 5000 },
  { pattern: '^([a-z]*)*$', input: run('a', '1'), n: 5000 },
  { pattern: '^(\\w+\\s?)*$', input: run('a'), n: 5000 },
  { pattern: '^(\\w+\\s?)+$', input: run('word '), n: 1000 },
  { pattern: '^(\\w+)+$', input: run('a'), n: 5000 },
  { pattern: '^(\\d+)+$', input: run('1', 'x'), n: 5000 },
  { pattern: '^([0-9]+\\.?)+$', input: run('1', 'x'), n: 5000 },
  { pattern: '^([a-z]+\\.?)+$', input: run('a'), n: 5000 },
  { pattern: '^(\\s*)*$', input: run(' ', 'x'), n: 5000 },
  { pattern: '^(.+)+$', input: run('a', '\n'), n: 5000 },
  { pattern: '^(.*)*x$', input: run('a', ''), n: 5000 },
  { pattern: '^(x+x+)+y$', input: run('x', ''), n: 5000 },
  { pattern: '^(\\w+\\.?)+@example\\.com$', input: run('a'), n: 5000 },
  { pattern: '^(([a-z])+)+$', input: run('a'), n: 5000 },
  // Published classics.
  { pattern: '^(([a-z])+.)+[A-Z]([a-z])+$', input: run('a'), n: 5000 }, // OWASP "evil regex"
  {
    // OWASP email validation pattern
    pattern:
      '^([a-zA-Z0-9])(([\\-.]|[_]+)?([a-zA-Z0-9]+))*(@){1}[a-z0-9]+[.]{1}(([a-z]{2,3})|([a-z]{2,3}[.]{1}[a-z]{2,3}))$',
    input: run('a'),
    n: 5000,
  },
  { pattern: "^[a-zA-Z]+(([\\'\\,\\.\\- ][a-zA-Z ])?[a-zA-Z]*)*$", input: run('a', '!'), n: 5000 }, // OWASP person name
  {
    // URL pattern with a nested path star (CVE-style)
    pattern: '^(https?://)?([\\da-z.-]+)\\.([a-z.]{2,6})([/\\w .-]*)*/?$',
    input: run('/', '!', 'http://example.com'),
    n: 4980,
  },
  {
    // `ms` duration parser (CVE-2017-20162 family): overlapping digit runs
    pattern:
      '^((?:\\d+)?\\.?\\d+) *(milliseconds?|msecs?|ms|seconds?|secs?|s|minutes?|mins?|m|hours?|hrs?|h|days?|d|years?|yrs?|y)?$',
    input: run('1', 'x'),
    n: 5000,
  },
  { pattern: '^(.*?,){11}P', input: run('1,', ''), n: 2500 }, // CSV: the 12th field starts with P
  { pattern: '(.*a){12}', input: (n) => `${'x'.repeat(n)}a`.repeat(11), n: 400 }, // polynomial: 11 a's, 12 wanted
  { pattern: '^(.*a){20}$', input: run('a', 'b'), n: 5000 },
  // Polynomial: adjacent overlapping runs, unanchored trailing runs.
  { pattern: 'a*a*a*a*a*a*b', input: run('a', ''), n: 5000 },
  { pattern: '\\s+$', input: run(' ', 'x'), n: 5000 }, // trim-right
  { pattern: '^\\d+\\.?\\d+$', input: run('1', 'x'), n: 5000 },
  { pattern: '(\\w+\\s*)+\\.$', input: run('ab '), n: 1500 },
  { pattern: '^(\\w+[-.]?)*\\w+@\\w+$', input: run('a'), n: 5000 },
];
