import { describe, expect, it } from 'vitest';
import {
  DEFAULT_RETRY_BACKOFF,
  MAX_DELAY_SECONDS,
  retryDelayMs,
  retryDelaySeconds,
} from '../../../domain/runtime/backoff.ts';

describe('retryDelaySeconds without a policy (controller work-queue default: 5 ms doubling to 1000 s)', () => {
  it.each([
    // attempt, exact delay, seconds (rounded up)
    [1, 5, 1],
    [2, 10, 1],
    [8, 640, 1],
    [9, 1_280, 2],
    [10, 2_560, 3],
    [12, 10_240, 11],
    [18, 655_360, 656],
    [19, 1_000_000, 1_000],
    [30, 1_000_000, 1_000],
  ])('attempt %i waits %i ms, i.e. %i s', (attempt, ms, seconds) => {
    expect(retryDelayMs(attempt)).toBe(ms);
    expect(retryDelaySeconds(attempt)).toBe(seconds);
  });

  it('the default is 5 ms × 2^(attempt-1) capped at 1000 s', () => {
    expect(DEFAULT_RETRY_BACKOFF).toEqual({ initialMs: 5, factor: 2, maxMs: 1_000_000 });
  });
});

describe('retryDelaySeconds with spec.syncPolicy.retryBackoff: min(initial × factor^(attempt-1), max)', () => {
  const policy = { initialMs: 10_000, factor: 3, maxMs: 600_000 };

  it.each([
    [1, 10],
    [2, 30],
    [3, 90],
    [4, 270],
    [5, 600],
    [6, 600],
  ])('factor 3 from 10 s: attempt %i waits %i s', (attempt, seconds) => {
    expect(retryDelaySeconds(attempt, policy)).toBe(seconds);
  });

  it('a fractional delay is rounded up to the next whole second', () => {
    expect(retryDelaySeconds(1, { initialMs: 1_500, factor: 1.5, maxMs: 60_000 })).toBe(2);
    expect(retryDelaySeconds(2, { initialMs: 1_500, factor: 1.5, maxMs: 60_000 })).toBe(3); // 2.25 s
  });

  it('a positive delay below one second waits one second', () => {
    expect(retryDelaySeconds(1, { initialMs: 1, factor: 2, maxMs: 10 })).toBe(1);
  });

  it('factor 1 keeps the initial delay', () => {
    expect(retryDelaySeconds(50, { initialMs: 7_000, factor: 1, maxMs: 60_000 })).toBe(7);
  });

  it('a zero initial delay is zero seconds', () => {
    expect(retryDelaySeconds(3, { initialMs: 0, factor: 2, maxMs: 60_000 })).toBe(0);
  });

  it('a max beyond 12 h is capped at 12 h, SQS’s longest visibility timeout', () => {
    const long = { initialMs: 3_600_000, factor: 10, maxMs: 7 * 24 * 3_600_000 };
    expect(retryDelaySeconds(1, long)).toBe(3_600);
    expect(retryDelaySeconds(2, long)).toBe(36_000);
    expect(retryDelaySeconds(3, long)).toBe(MAX_DELAY_SECONDS);
    expect(MAX_DELAY_SECONDS).toBe(43_200);
  });
});

describe('retryDelaySeconds edge cases', () => {
  it('a huge attempt does not overflow: it waits the max', () => {
    expect(retryDelaySeconds(1_000_000)).toBe(1_000);
    expect(retryDelaySeconds(Number.MAX_SAFE_INTEGER, { initialMs: 1_000, factor: 10, maxMs: 60_000 })).toBe(
      60,
    );
    expect(retryDelayMs(5_000, { initialMs: 1, factor: 2, maxMs: 1e308 })).toBe(1e308);
  });

  it.each([0, -3, Number.NaN])('attempt %s counts as the first attempt', (attempt) => {
    expect(retryDelaySeconds(attempt, { initialMs: 4_000, factor: 2, maxMs: 60_000 })).toBe(4);
  });

  it.each([
    [{ initialMs: -1, factor: 2, maxMs: 10 }, /initialMs/],
    [{ initialMs: 1, factor: 0.5, maxMs: 10 }, /factor/],
    [{ initialMs: 1, factor: 2, maxMs: Number.NaN }, /maxMs/],
  ])('an invalid policy %j is refused, naming the field', (policy, field) => {
    expect(() => retryDelaySeconds(1, policy)).toThrow(field);
  });
});
