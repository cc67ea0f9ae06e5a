/**
 * Bounded concurrency, in one place: `work` over `items` with at most `limit` in flight, started
 * in input order, results in input order. Once an item throws, or returns a result `stop` accepts,
 * no further item starts; the ones in flight finish. Then the earliest item's answer wins — the
 * error of the earliest failed item is thrown — so the same input reports the same object as a
 * one-by-one run would have, among those that started.
 */

/**
 * The results by input index; an item that never started (after a stop) has none. Throws the
 * error of the earliest failed item.
 */
export async function runBounded<T, R>(
  items: readonly T[],
  limit: number,
  work: (item: T, index: number) => Promise<R>,
  stop: (result: R) => boolean = () => false,
): Promise<(R | undefined)[]> {
  const results = new Array<R | undefined>(items.length);
  const failures: { index: number; error: unknown }[] = [];
  let stopped = false;
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length && !stopped) {
      const index = next++;
      try {
        const result = await work(items[index], index);
        results[index] = result;
        if (stop(result)) stopped = true;
      } catch (error) {
        failures.push({ index, error });
        stopped = true;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, worker));
  if (failures.length > 0) {
    failures.sort((a, b) => a.index - b.index);
    throw (failures[0] as { error: unknown }).error;
  }
  return results;
}

/** Every item's result in input order, at most `limit` in flight; the earliest failure is thrown. */
export async function mapBounded<T, R>(
  items: readonly T[],
  limit: number,
  work: (item: T, index: number) => Promise<R>,
): Promise<R[]> {
  // Without a stop every item ran when nothing threw, so every result is there.
  return (await runBounded(items, limit, work)) as R[];
}
