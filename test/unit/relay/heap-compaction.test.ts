import { afterEach, describe, expect, it, vi } from 'vitest';
import { createLogger } from '../../../platform/logger.ts';
import { compactHeapWhenReady } from '../../../relay/heap-compaction.ts';

afterEach(() => {
  vi.useRealTimers();
});

describe('compactHeapWhenReady', () => {
  it('compacts once each time the relay turns ready (after a list), with the last-resort flavour, and logs it', () => {
    vi.useFakeTimers();
    const lines: string[] = [];
    const logger = createLogger({ level: 'info', write: (line) => lines.push(line) });
    const calls: unknown[] = [];
    const gc = ((options?: unknown) => {
      calls.push(options);
    }) as NodeJS.GCFunction;
    let ready = false;
    const compaction = compactHeapWhenReady(() => ready, logger, { gc, everyMs: 1_000 });
    vi.advanceTimersByTime(3_000);
    expect(calls).toEqual([]);
    ready = true;
    vi.advanceTimersByTime(5_000);
    expect(calls).toEqual([{ type: 'major', execution: 'sync', flavor: 'last-resort' }]);
    // A new term lists again: not ready, then ready once more.
    ready = false;
    vi.advanceTimersByTime(1_000);
    ready = true;
    vi.advanceTimersByTime(1_000);
    expect(calls).toHaveLength(2);
    compaction.stop();
    ready = false;
    vi.advanceTimersByTime(1_000);
    ready = true;
    vi.advanceTimersByTime(1_000);
    expect(calls).toHaveLength(2);
    expect(lines.filter((l) => l.includes('heap compacted after a list'))).toHaveLength(2);
  });

  it('does nothing without gc (node without --expose-gc: convoy dev, tests)', () => {
    vi.useFakeTimers();
    const logger = createLogger({ level: 'info', write: () => undefined });
    const ready = vi.fn(() => true);
    const compaction = compactHeapWhenReady(ready, logger, { gc: undefined });
    vi.advanceTimersByTime(5_000);
    expect(ready).not.toHaveBeenCalled();
    compaction.stop();
  });
});
