import { describe, expect, it } from 'vitest';
import {
  DEFAULT_RETRY_BACKOFF,
  MAX_DELAY_SECONDS,
  retryDelayMs,
  retryDelaySeconds,
} from '../../../domain/runtime/backoff.ts';

describe('the default backoff (a Release without spec.syncPolicy.retryBackoff): 2 s doubling to 5 min, equal jitter', () => {
  const keys = Array.from({ length: 200 }, (_, i) => `message-${i}`);

  it('the default is 2 s × 2^(attempt-1) capped at 5 min, less up to half of it (equal jitter)', () => {
    expect(DEFAULT_RETRY_BACKOFF).toEqual({ initialMs: 2_000, factor: 2, maxMs: 300_000, jitter: 0.5 });
  });

  it('the first retry waits at least 1 s, for every message', () => {
    for (const key of keys) {
      expect(retryDelayMs(1, undefined, key)).toBeGreaterThanOrEqual(1_000);
      expect(retryDelaySeconds(1, undefined, key)).toBeGreaterThanOrEqual(1);
    }
  });

  it.each([
    // attempt, lowest and highest delay in ms
    [1, 1_000, 2_000],
    [2, 2_000, 4_000],
    [3, 4_000, 8_000],
    [8, 128_000, 256_000],
    [9, 150_000, 300_000],
    [30, 150_000, 300_000],
  ])('attempt %i waits between %i and %i ms', (attempt, low, high) => {
    const delays = keys.map((key) => retryDelayMs(attempt, undefined, key));
    for (const d of delays) {
      expect(d).toBeGreaterThanOrEqual(low);
      expect(d).toBeLessThanOrEqual(high);
    }
    // Jitter: messages do not all wait the same; they spread over the range.
    expect(new Set(delays).size).toBeGreaterThan(150);
    expect(Math.min(...delays)).toBeLessThan(low + (high - low) * 0.1);
    expect(Math.max(...delays)).toBeGreaterThan(high - (high - low) * 0.1);
  });

  it('never waits longer than the 5-min cap, even for a huge attempt', () => {
    for (const key of keys) expect(retryDelaySeconds(1_000_000, undefined, key)).toBeLessThanOrEqual(300);
    expect(retryDelaySeconds(Number.MAX_SAFE_INTEGER)).toBe(300);
  });

  it("eight retries of one message take minutes, not ~10 s as with client-go's 5 ms", () => {
    for (const key of keys.slice(0, 20)) {
      const total = [1, 2, 3, 4, 5, 6, 7, 8].reduce(
        (sum, attempt) => sum + retryDelaySeconds(attempt, undefined, key),
        0,
      );
      expect(total).toBeGreaterThanOrEqual(255);
    }
  });

  it('the same message and attempt always get the same delay (the runtime and the Lease agree)', () => {
    expect(retryDelayMs(4, undefined, 'abc')).toBe(retryDelayMs(4, undefined, 'abc'));
  });

  it('without a key the delay is the top of the range', () => {
    expect(retryDelayMs(1)).toBe(2_000);
    expect(retryDelaySeconds(3)).toBe(8);
  });
});

describe('retryDelaySeconds with spec.syncPolicy.retryBackoff: min(initial × factor^(attempt-1), max), no jitter', () => {
  it('a policy without jitter is followed exactly, whatever the message', () => {
    const policy = { initialMs: 2_000, factor: 2, maxMs: 8_000 };
    expect([1, 2, 3, 4].map((a) => retryDelaySeconds(a, policy, 'some-message'))).toEqual([2, 4, 8, 8]);
  });

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
    expect(retryDelaySeconds(1_000_000)).toBe(300);
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
    [{ initialMs: 1, factor: 2, maxMs: 10, jitter: 1.5 }, /jitter/],
  ])('an invalid policy %j is refused, naming the field', (policy, field) => {
    expect(() => retryDelaySeconds(1, policy)).toThrow(field);
  });
});
