import { isHalt, type Halt } from './halt.ts';

/**
 * Runs `work` over `items` with at most `limit` in flight, in order of start. Once one returns a
 * Halt, no further item starts; the ones in flight finish, and the Halt of the earliest item is
 * returned (so the message names the same object a one-by-one run would have stopped at, among
 * those that started). undefined: every item was done.
 */
export async function eachBounded<T>(
  items: readonly T[],
  limit: number,
  work: (item: T, index: number) => Promise<Halt | undefined>,
): Promise<Halt | undefined> {
  const halts: { index: number; halt: Halt }[] = [];
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length && halts.length === 0) {
      const index = next++;
      const result = await work(items[index], index);
      if (isHalt(result)) halts.push({ index, halt: result });
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, worker));
  if (halts.length === 0) return undefined;
  halts.sort((a, b) => a.index - b.index);
  return halts[0]?.halt;
}
