/**
 * Progress of a long apply in status: while the objects of a large render are
 * checked and applied, the reconcile writes status.lastAttempted with phase Syncing and the counts
 * so far — at most once per interval, never per object, and not at all in a run shorter than one
 * interval (an ordinary reconcile still makes exactly one status write). conclude.ts turns the
 * counts into the status slice; the runtime's writer sends it.
 */

/** How far the apply step of this run has come. */
export interface ApplyCounts {
  /** Objects of the render. */
  total: number;
  /** Objects the dry run has checked so far (equal to total once it is done, or when it is skipped). */
  checked: number;
  /** Objects the apply step has handled so far: written, or left alone because the dry run found them unchanged. */
  applied: number;
}

export interface ProgressPolicy {
  /** Least time between two progress writes, and from the start of the run to the first one. */
  intervalMs: number;
}

/** Every 10 s: a user watching sees the counts move; 10,000 objects cost a few writes (bench largeRelease). */
export const DEFAULT_PROGRESS_INTERVAL_MS = 10_000;

/** Whether a progress write is due at `nowMs` when the last one (or the run's start) was at `lastAtMs`. */
export function progressDue(lastAtMs: number, nowMs: number, policy: ProgressPolicy): boolean {
  return nowMs - lastAtMs >= policy.intervalMs;
}

/** Receives the counts as they change and writes them when a write is due. */
export interface ProgressTracker {
  /** Records the counts; resolves once the write it caused (if any) is done. */
  update(counts: Partial<ApplyCounts>): Promise<void>;
  readonly counts: Readonly<ApplyCounts>;
}

/**
 * One run's tracker: `write` is called with the counts when a write is due (checked on each
 * update). Updates during a write do not start another; the next due update writes the newer counts.
 */
export function createProgressTracker(options: {
  policy: ProgressPolicy;
  /** Milliseconds now (the reconcile's clock). */
  clock: () => number;
  /** When the run started, in the clock's milliseconds. */
  startedAtMs: number;
  total: number;
  write: (counts: ApplyCounts) => Promise<void>;
}): ProgressTracker {
  const counts: ApplyCounts = { total: options.total, checked: 0, applied: 0 };
  let lastAtMs = options.startedAtMs;
  let writing = false;
  return {
    counts,
    async update(change) {
      if (change.checked !== undefined) counts.checked = change.checked;
      if (change.applied !== undefined) counts.applied = change.applied;
      const now = options.clock();
      if (writing || !progressDue(lastAtMs, now, options.policy)) return;
      writing = true;
      lastAtMs = now;
      try {
        await options.write({ ...counts });
      } finally {
        writing = false;
      }
    },
  };
}
