import { describe, expect, it } from 'vitest';
import { toSqsAction } from '../../../adapters/sqs/outcome-actions.ts';
import { done, dropped, requeueAfter, retry, stop } from '../../../domain/runtime/outcome.ts';

const first = { receiveCount: 1 };

describe('toSqsAction: the queue contract table', () => {
  it('done → record succeeds (deleted)', () => {
    expect(toSqsAction(done(), first)).toEqual({ ack: true });
  });

  it('stop → record succeeds; the next run comes from the interval timer or a change', () => {
    expect(toSqsAction(stop(), first)).toEqual({ ack: true });
  });

  it('dropped (superseded or invalid) → record succeeds', () => {
    expect(toSqsAction(dropped('superseded by a newer follow-up'), first)).toEqual({ ack: true });
  });

  it('requeueAfter(d) → visibility d rounded up to whole seconds, reported as failed', () => {
    expect(toSqsAction(requeueAfter(10_000, 'wave 1 progressing'), first)).toEqual({
      ack: false,
      visibilitySeconds: 10,
    });
    expect(toSqsAction(requeueAfter(2_001, 'hook running'), first)).toEqual({
      ack: false,
      visibilitySeconds: 3,
    });
  });

  it('requeueAfter(0) → visibility 1 s, never an immediate redelivery', () => {
    expect(toSqsAction(requeueAfter(0, 'now'), first)).toEqual({ ack: false, visibilitySeconds: 1 });
  });

  it('requeueAfter beyond 12 h → capped at 43200 s', () => {
    expect(toSqsAction(requeueAfter(48 * 3_600_000, 'later'), first)).toEqual({
      ack: false,
      visibilitySeconds: 43_200,
    });
  });

  it('retry(error) without a policy → default backoff of the receive count, jittered by the message id', () => {
    const seconds = (receiveCount: number, jitterKey: string) => {
      const action = toSqsAction(retry(new Error('x')), { receiveCount, jitterKey });
      return action.ack ? Number.NaN : action.visibilitySeconds;
    };
    for (const id of ['m-1', 'm-2', 'm-3', 'm-4']) {
      expect(seconds(1, id)).toBeGreaterThanOrEqual(1);
      expect(seconds(1, id)).toBeLessThanOrEqual(2);
      expect(seconds(4, id)).toBeGreaterThanOrEqual(8);
      expect(seconds(4, id)).toBeLessThanOrEqual(16);
      expect(seconds(40, id)).toBeGreaterThanOrEqual(150);
      expect(seconds(40, id)).toBeLessThanOrEqual(300);
    }
  });

  it('retry(error) with the context policy → min(initial × factor^(attempt-1), max)', () => {
    const retryPolicy = { initialMs: 2_000, factor: 2, maxMs: 30_000 };
    expect(toSqsAction(retry(new Error('x')), { receiveCount: 3, retryPolicy })).toEqual({
      ack: false,
      visibilitySeconds: 8,
    });
    expect(toSqsAction(retry(new Error('x')), { receiveCount: 9, retryPolicy })).toEqual({
      ack: false,
      visibilitySeconds: 30,
    });
  });

  it('retry(error, policy) → the outcome’s policy wins over the context policy', () => {
    const outcome = retry(new Error('x'), { initialMs: 5_000, factor: 1, maxMs: 5_000 });
    const retryPolicy = { initialMs: 60_000, factor: 1, maxMs: 60_000 };
    expect(toSqsAction(outcome, { receiveCount: 4, retryPolicy })).toEqual({
      ack: false,
      visibilitySeconds: 5,
    });
  });

  it('retry with a zero delay → visibility 1 s', () => {
    const retryPolicy = { initialMs: 0, factor: 2, maxMs: 0 };
    expect(toSqsAction(retry(new Error('x')), { receiveCount: 2, retryPolicy })).toEqual({
      ack: false,
      visibilitySeconds: 1,
    });
  });

  it('retry with a policy past 12 h → capped at 43200 s', () => {
    const retryPolicy = { initialMs: 86_400_000, factor: 2, maxMs: 864_000_000 };
    expect(toSqsAction(retry(new Error('x')), { receiveCount: 1, retryPolicy })).toEqual({
      ack: false,
      visibilitySeconds: 43_200,
    });
  });
});

describe('outcome constructors', () => {
  it('requeueAfter refuses a negative or non-finite delay, naming the reason', () => {
    expect(() => requeueAfter(-1, 'wave 2')).toThrow(/delayMs .* -1 \(reason: wave 2\)/);
    expect(() => requeueAfter(Number.POSITIVE_INFINITY, 'x')).toThrow(RangeError);
  });
});
