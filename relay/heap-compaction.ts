/**
 * Gives back the memory a full list leaves behind (the relay's memory). While the
 * relay lists 10,000 Releases, V8's heap grows to hold the list pages being parsed; afterwards
 * the kept Releases need a fraction of it, but V8 keeps the pages it grew by committed (an
 * ordinary full GC frees objects, not pages). Once the relay is ready after a list (its start,
 * a new leadership term), one last-resort GC — V8's "collect all available garbage": compacting,
 * pages released — brings its RSS down to what it keeps. One pause of tens of milliseconds per
 * list, never during a watch burst.
 *
 * Needs `gc` (node --expose-gc, which the image sets: image/relay-node-flags.ts); without it
 * (convoy dev's in-process relay, tests) this does nothing.
 */
import type { Logger } from '../platform/logger.ts';

export interface HeapCompaction {
  stop(): void;
}

export interface HeapCompactionOptions {
  /** How often readiness is looked at. Default 1 s. */
  readonly everyMs?: number;
  /** Default globalThis.gc (present with --expose-gc). */
  readonly gc?: NodeJS.GCFunction | undefined;
}

const mib = (bytes: number) => Math.round((bytes / 1048576) * 10) / 10;

/** Compacts the heap each time `ready` turns true (after the first list, and after every relist of a new term). */
export function compactHeapWhenReady(
  ready: () => boolean,
  logger: Logger,
  options: HeapCompactionOptions = {},
): HeapCompaction {
  const gc = options.gc ?? globalThis.gc;
  if (gc === undefined) return { stop: () => undefined };
  let wasReady = false;
  const timer = setInterval(() => {
    const now = ready();
    if (now && !wasReady) {
      const before = process.memoryUsage();
      gc({ type: 'major', execution: 'sync', flavor: 'last-resort' });
      const after = process.memoryUsage();
      logger.info('heap compacted after a list', {
        rssMiB: [mib(before.rss), mib(after.rss)],
        heapTotalMiB: [mib(before.heapTotal), mib(after.heapTotal)],
      });
    }
    wasReady = now;
  }, options.everyMs ?? 1_000);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}
