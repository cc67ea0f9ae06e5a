import { describe, expect, it } from 'vitest';
import { mapBounded, runBounded } from '../../../domain/runtime/bounded.ts';

interface Gate<T> {
  promise: Promise<T>;
  open(value: T): void;
  fail(error: Error): void;
}

/** A promise the test settles by hand, so the order of events is the test's, not the clock's. */
function gate<T>(): Gate<T> {
  let open!: (value: T) => void;
  let fail!: (error: Error) => void;
  const promise = new Promise<T>((resolve, reject) => {
    open = resolve;
    fail = reject;
  });
  return { promise, open, fail };
}

const settle = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('bounded concurrency (domain/runtime/bounded.ts)', () => {
  it('keeps at most `limit` items in flight and returns the results in input order', async () => {
    let inFlight = 0;
    let most = 0;
    const results = await mapBounded([5, 1, 4, 2, 3, 0], 2, async (n) => {
      inFlight++;
      most = Math.max(most, inFlight);
      for (let i = 0; i < n; i++) await settle();
      inFlight--;
      return n * 10;
    });
    expect(results).toEqual([50, 10, 40, 20, 30, 0]);
    expect(most).toBe(2);
  });

  it('starts the items in input order', async () => {
    const started: number[] = [];
    await mapBounded([0, 1, 2, 3, 4], 3, async (n) => {
      started.push(n);
      await settle();
    });
    expect(started).toEqual([0, 1, 2, 3, 4]);
  });

  it('after a failure starts nothing new, lets the items in flight finish and throws the earliest failed item’s error', async () => {
    const gates = [gate<number>(), gate<number>(), gate<number>()];
    const started: number[] = [];
    const finished: number[] = [];
    const run = mapBounded([0, 1, 2, 3], 3, async (n) => {
      started.push(n);
      const value = await gates[n].promise;
      finished.push(n);
      return value;
    });
    await settle();
    gates[1].fail(new Error('item 1 failed'));
    await settle();
    gates[0].fail(new Error('item 0 failed'));
    gates[2].open(2);
    await expect(run).rejects.toThrow('item 0 failed');
    expect(started).toEqual([0, 1, 2]);
    expect(finished).toEqual([2]);
  });

  it('after a result `stop` accepts starts nothing new and leaves the items never started without a result', async () => {
    const results = await runBounded(
      [1, 2, -3, 4, 5],
      1,
      (n) => Promise.resolve(n),
      (n) => n < 0,
    );
    expect(results).toEqual([1, 2, -3, undefined, undefined]);
  });

  it('answers an empty list at once, and a limit below 1 runs one at a time', async () => {
    expect(await mapBounded([], 4, () => Promise.resolve(1))).toEqual([]);
    expect(await mapBounded([1, 2], 0, (n) => Promise.resolve(n))).toEqual([1, 2]);
  });
});
