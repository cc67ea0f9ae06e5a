import { describe, expect, it } from 'vitest';
import { formatDuration, parseDuration } from '../../../domain/runtime/duration.ts';

describe('parseDuration (Go / Kubernetes durations)', () => {
  it.each([
    ['5s', 5_000],
    ['10m', 600_000],
    ['1h30m', 5_400_000],
    ['720h', 2_592_000_000],
    ['500ms', 500],
    ['1.5h', 5_400_000],
    ['2h45m30s', 9_930_000],
    ['1m0.5s', 60_500],
    ['.5s', 500],
    ['+5s', 5_000],
    ['0', 0],
    ['0s', 0],
    ['250us', 0.25],
    ['1µs', 0.001],
    ['1000000ns', 1],
  ])('%s is %d ms', (input, ms) => {
    expect(parseDuration(input)).toEqual({ ok: true, ms });
  });

  it.each([
    ['', 'empty'],
    ['5', 'missing unit after "5"'],
    ['5d', 'unknown unit "d"'],
    ['2H', 'unknown unit "H"'],
    ['-5s', 'must not be negative'],
    ['1h 30m', 'expected a number at " 30m"'],
    ['s', 'expected a number at "s"'],
    ['1.2.3s', 'missing unit after "1.2"'],
    ['3000000h', 'longer than about 292 years'],
  ])('%j is refused: %s', (input, why) => {
    const result = parseDuration(input);
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.error).toContain(`invalid duration ${JSON.stringify(input)}`);
    expect(result.error).toContain(why);
  });
});

describe('formatDuration (as Go prints it)', () => {
  it.each([
    [0, '0s'],
    [0.25, '250µs'],
    [500, '500ms'],
    [1_500, '1.5s'],
    [5_000, '5s'],
    [90_000, '1m30s'],
    [5_400_000, '1h30m0s'],
    [2_592_000_000, '720h0m0s'],
  ])('%d ms is %s', (ms, text) => {
    expect(formatDuration(ms)).toBe(text);
  });

  it('round-trips through parseDuration', () => {
    for (const ms of [1, 999, 61_001, 3_723_000]) {
      expect(parseDuration(formatDuration(ms))).toEqual({ ok: true, ms });
    }
  });
});
