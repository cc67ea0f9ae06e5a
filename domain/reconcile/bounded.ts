import { runBounded } from '../runtime/bounded.ts';
import { isHalt, type Halt } from './halt.ts';

/**
 * Runs `work` over `items` with at most `limit` in flight, in order of start (domain/runtime/bounded.ts).
 * Once one returns a Halt, no further item starts; the ones in flight finish, and the Halt of the
 * earliest item is returned (so the message names the same object a one-by-one run would have
 * stopped at, among those that started). undefined: every item was done.
 */
export async function eachBounded<T>(
  items: readonly T[],
  limit: number,
  work: (item: T, index: number) => Promise<Halt | undefined>,
): Promise<Halt | undefined> {
  const results = await runBounded(items, limit, work, isHalt);
  return results.find(isHalt);
}
