import { describe, expect, it } from 'vitest';
import { lastIndexOfLinear } from '../../../domain/health/cel-strings.ts';
import {
  compileChecks,
  createCelRuntime,
  evaluateChecks,
  type HealthCheck,
} from '../../../domain/health/index.ts';

/**
 * CEL checks follow Kubernetes CEL (cel-go): regular expressions are RE2, so
 * some JavaScript patterns are refused and some RE2 patterns work that
 * JavaScript refuses; `duration()` parses as Go's time.ParseDuration.
 */
// The wall-clock bounds are out of reach: a loaded test host must not turn a verdict into 'exceeded its time bound'.
const runtime = createCelRuntime({ limits: { timePerEvaluationMs: 600_000, timePerAssessmentMs: 600_000 } });

const configMap = (data: Record<string, string>) => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name: 'settings', namespace: 'team-a' },
  data,
});

const check = (healthy: string): HealthCheck => ({ apiVersion: 'v1', kind: 'ConfigMap', healthy });

function verdict(healthy: string, data: Record<string, string> = {}) {
  const { compiled, errors } = compileChecks([check(healthy)], { runtime });
  expect(errors).toEqual([]);
  return evaluateChecks(compiled, configMap(data), 'v1', 'ConfigMap');
}

const isTrue = (healthy: string, data: Record<string, string> = {}) =>
  verdict(healthy, data)?.state === 'Healthy';

describe('CEL matches() has RE2 syntax and semantics', () => {
  it('a backreference in a literal pattern is a compile error naming the check', () => {
    const { compiled, errors } = compileChecks([
      check("object.data.a == 'x'"),
      check("object.data.value.matches('^(a)\\\\1$')"),
    ]);
    expect(compiled.map((c) => c.index)).toEqual([0]);
    expect(errors).toHaveLength(1);
    expect(errors[0]?.message).toMatch(
      /^checks\[1\] \(v1 ConfigMap\): healthy: invalid regular expression '\^\(a\)\\1\$'/,
    );
    expect(errors[0]?.message).toContain('no backreferences');
  });

  it.each([
    ['lookahead', "object.data.value.matches('a(?=b)')"],
    ['negative lookahead', "object.data.value.matches('a(?!b)')"],
    ['lookbehind', "object.data.value.matches('(?<=a)b')"],
    ['negative lookbehind', "object.data.value.matches('(?<!a)b')"],
    ['the global form', "matches(object.data.value, '(a)\\\\1')"],
    ['a pattern inside a macro', "['x'].exists(v, v.matches('(?=x)'))"],
    ['a degraded expression', "object.data.value.matches('(?=x)')"],
  ])('%s in a literal pattern is a compile error', (_name, expression) => {
    const degraded = _name === 'a degraded expression';
    const { errors } = compileChecks([
      degraded ? { ...check('true'), degraded: expression } : check(expression),
    ]);
    expect(errors[0]?.message).toMatch(
      new RegExp(
        `^checks\\[0\\] \\(v1 ConfigMap\\): ${degraded ? 'degraded' : 'healthy'}: invalid regular expression`,
      ),
    );
  });

  it('an invalid pattern read from the object is an evaluation error naming the check: Degraded', () => {
    expect(
      verdict('object.data.value.matches(object.data.pattern)', { value: 'aa', pattern: '(a)\\1' }),
    ).toEqual({
      state: 'Degraded',
      message: expect.stringMatching(
        /^checks\[0\] \(v1 ConfigMap\): healthy evaluation failed: invalid regular expression '\(a\)\\1'/,
      ) as unknown,
    });
  });

  it('RE2 syntax JavaScript refuses or reads differently works: (?i), \\pL, \\z, (?P<name>), [[:alpha:]]', () => {
    expect(isTrue("object.data.value.matches('(?i)^abc$')", { value: 'ABC' })).toBe(true);
    expect(isTrue("object.data.value.matches('^\\\\pL+$')", { value: 'éß' })).toBe(true);
    expect(isTrue("object.data.value.matches('b\\\\z')", { value: 'ab' })).toBe(true);
    expect(isTrue("object.data.value.matches('^(?P<word>[a-z]+)$')", { value: 'abc' })).toBe(true);
    expect(isTrue("object.data.value.matches('^[[:alpha:]]+$')", { value: 'abc' })).toBe(true);
  });

  it('matches() is a search, as in CEL: anchor with ^ and $', () => {
    expect(isTrue("object.data.value.matches('b')", { value: 'abc' })).toBe(true);
    expect(isTrue("object.data.value.matches('^b')", { value: 'abc' })).toBe(false);
    expect(isTrue("object.data.value.matches('^abc$')", { value: 'abc\n' })).toBe(false);
  });

  it('the global form matches(string, pattern) is RE2 too', () => {
    expect(isTrue("matches(object.data.value, '(?i)^ABC$')", { value: 'abc' })).toBe(true);
  });

  // `(?i)` is an error on JavaScript's RegExp: true here proves each form runs on RE2.
  it.each([
    ['all', "['ABC', 'Abc'].all(v, v.matches('(?i)^abc$'))"],
    ['exists', "['x', 'ABC'].exists(v, v.matches('(?i)^abc$'))"],
    ['exists_one', "['x', 'ABC'].exists_one(v, v.matches('(?i)^abc$'))"],
    ['map', "['ABC'].map(v, v.matches('(?i)^abc$'))[0]"],
    ['map with a filter', "['ABC', 'x'].map(v, v.matches('(?i)^abc$'), v.matches('(?i)^abc$')).size() == 1"],
    ['filter', "['ABC', 'x'].filter(v, v.matches('(?i)^abc$')).size() == 1"],
    ['cel.bind', "cel.bind(p, '(?i)^abc$', object.data.value.matches(p))"],
    ['optional orValue', "object.data.?missing.orValue('ABC').matches('(?i)^abc$')"],
    ['a ternary', "size(object.data) > 0 ? object.data.value.matches('(?i)^abc$') : false"],
    ['a list literal', "[object.data.value.matches('(?i)^abc$')][0]"],
    ['a map literal', "{'k': object.data.value.matches('(?i)^abc$')}['k']"],
    ['a dynamic receiver', "dyn(object.data.value).matches('(?i)^abc$')"],
    ['a pattern built at run time', "object.data.value.matches('(?i)' + '^abc$')"],
  ])('matches() inside %s runs on RE2', (_name, expression) => {
    expect(verdict(expression, { value: 'ABC' })?.state).toBe('Healthy');
  });

  it('errors name matches(), not the internal RE2 function', () => {
    const { errors } = compileChecks([check("'abc'.matches(1)")]);
    expect(errors[0]?.message).toContain('matches');
    expect(errors[0]?.message).not.toContain('convoy_');
  });
});

describe('CEL duration() parses as Go does, in linear time', () => {
  it.each([
    ["duration('1h30m') == duration('90m')", true],
    ["duration('1.5h') == duration('90m')", true],
    ["duration('-1m30s') < duration('0')", true],
    ["duration('300ms') + duration('700ms') == duration('1s')", true],
    ["duration('1us') == duration('1000ns') && duration('1µs') == duration('1us')", true],
    ["duration('2h45m').getMinutes() == 165", true],
  ])('%s', (expression, expected) => {
    expect(isTrue(expression)).toBe(expected);
  });

  it.each([
    ['no unit', '1'],
    ['an unknown unit', '1d'],
    ['no number', 'h'],
    ['a long run of digits (cubic on cel-js built-in parser)', '1'.repeat(3000)],
  ])('%s is an evaluation error naming the check', (_name, text) => {
    const health = verdict('duration(object.data.value) > duration(object.data.zero)', {
      value: text,
      zero: '0',
    });
    expect(health?.state).toBe('Degraded');
    expect(health?.message).toMatch(
      /^checks\[0\] \(v1 ConfigMap\): healthy evaluation failed: invalid duration/,
    );
  });
});

describe('CEL lastIndexOf() searches in linear time', () => {
  it.each([
    ["'abcabc'.lastIndexOf('bc') == 4", true],
    ["'abcabc'.lastIndexOf('bc', 3) == 1", true],
    ["'abcabc'.lastIndexOf('') == 6", true],
    ["'abc'.lastIndexOf('', 1) == 1", true],
    [`'${'ab'.repeat(40)}'.lastIndexOf('${'ab'.repeat(20)}', 10) == 10`, true],
  ])('%s (as cel-js)', (expression, expected) => {
    expect(isTrue(expression)).toBe(expected);
  });

  it('agrees with JavaScript’s lastIndexOf on 2,000 generated periodic cases (needles past the native cut-off)', () => {
    let seed = 20;
    const random = (below: number): number => {
      seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
      return seed % below;
    };
    for (let i = 0; i < 2_000; i++) {
      const unit = ['ab', 'aab', 'a', 'aba', '\uD83D\uDE00a'][i % 5] ?? 'a';
      const needle = unit.repeat(Math.ceil(33 / unit.length) + (i % 3)) + (i % 5 === 0 ? 'c' : '');
      const text = unit.repeat(random(60)) + (random(3) === 0 ? 'c' : '') + unit.repeat(random(60));
      const from = random(text.length + 2);
      expect([lastIndexOfLinear(text, needle, from), lastIndexOfLinear(text, needle)]).toEqual([
        text.lastIndexOf(needle, from),
        text.lastIndexOf(needle),
      ]);
    }
  });

  it('a fromIndex out of range is an evaluation error naming lastIndexOf', () => {
    expect(verdict("'abc'.lastIndexOf('a', 5) == 0")?.message).toBe(
      'checks[0] (v1 ConfigMap): healthy evaluation failed: string.lastIndexOf(search, fromIndex): fromIndex out of range',
    );
  });

  it('a long needle in a long value finishes (V8’s own lastIndexOf took 12.7 s on this)', () => {
    const before = process.threadCpuUsage();
    const health = verdict('object.data.value.lastIndexOf(object.data.needle) == -1', {
      value: 'a'.repeat(1_000_000),
      needle: `${'a'.repeat(20_000)}b`,
    });
    const cpu = process.threadCpuUsage(before);
    expect(health?.state).toBe('Healthy');
    // Generous: the linear search takes tens of milliseconds; the quadratic one, seconds.
    expect((cpu.user + cpu.system) / 1000).toBeLessThan(1_000);
  });
});

describe('CEL compiled expressions are cached per runtime', () => {
  it('one text compiles once; the cache is bounded', () => {
    const small = createCelRuntime({ programCacheSize: 2 });
    const first = small.compile('object.a == 1');
    expect(small.compile('object.a == 1')).toBe(first);
    small.compile('object.b == 1');
    small.compile('object.c == 1');
    expect(small.compile('object.a == 1')).not.toBe(first);
  });

  it('the cache is bounded by total characters too: long expressions cannot fill memory', () => {
    const small = createCelRuntime({ programCacheCharacters: 100 });
    const long = `object.a == '${'x'.repeat(60)}'`;
    const first = small.compile(long);
    expect(small.compile(long)).toBe(first);
    small.compile(`object.b == '${'y'.repeat(60)}'`);
    expect(small.compile(long)).not.toBe(first);
  });

  it('a Release without a shared runtime still compiles (a runtime per call)', () => {
    expect(compileChecks([check('true')]).errors).toEqual([]);
  });

  it('an expression longer than the CRD allows is a compile error', () => {
    const { errors } = compileChecks([check(`${'true && '.repeat(600)}true`)], { runtime });
    expect(errors[0]?.message).toContain('longer than 4096 characters');
  });
});
