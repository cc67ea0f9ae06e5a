import type { Attempt, Condition, Release } from '../api/index.ts';
import type { RetryBackoffPolicy } from '../runtime/backoff.ts';
import { requeueAfter, retry, stop, done, type Outcome } from '../runtime/outcome.ts';
import { toRfc3339 } from '../status/conditions.ts';
import type { ReleaseSlice } from '../status/slices.ts';
import { Annotation, annotationOf, RENDER_REF } from './annotations.ts';
import { conditionsOf } from './conclude-conditions.ts';
import { notifyCauseOf } from './conclude-notify.ts';
import { durationMs } from './durations.ts';
import type { RetentionPolicy } from './ports.ts';
import type { ApplyCounts } from './progress.ts';
import type { Resolved } from './resolved.ts';
import type { Rollout } from './rollout.ts';
import { sliceAsFound } from './slice-as-found.ts';
import { ROLLOUT_RECHECK_MS, Stops, type StopRow } from './stops.ts';

import type { ReconcileEnd } from './reconcile-end.ts';

export type { ReconcileEnd };

export type NotifyLoop = 'health' | 'drift';

export interface ReconcileDecision {
  slice: ReleaseSlice;
  outcome: Outcome;
  /**
   * Loops to send the Release to at once: a new render was applied or the current render
   * changed, objects were re-applied (a correction of drift), this run handled a new
   * metadata.generation (e.g. a resume) whose conditions the observers must bring along, or the
   * render is applied and settled (the observers' interval checks ride on this run:
   * domain/status/observer-ticks.ts).
   */
  notify: NotifyLoop[];
  /** The cause of those messages (`applied <renderRef>`, `corrected …`, `generation …`, `settled …`); set when notify is not empty. */
  notifyCause?: string;
}

/**
 * THE place where a reconcile's result becomes status and an Outcome: the
 * Applied reason and status, phase, failure, lastSuccessful, and whether the
 * runtime retries with backoff, rechecks, or stops.
 */
export function conclude(end: ReconcileEnd): ReconcileDecision {
  const row = end.halt === undefined ? undefined : Stops[end.halt.halt];
  const rollout = end.progress?.rollout ?? end.release.status?.rollout;
  const slice = sliceOf(end, attemptOf(end, row), rollout, conditionsOf(end, row, rollout));
  const notifyCause = notifyCauseOf(end, slice);
  return {
    slice,
    outcome: outcomeOf(end, row, rollout?.state),
    notify: notifyCause === undefined ? [] : ['health', 'drift'],
    ...(notifyCause === undefined ? {} : { notifyCause }),
  };
}

/** status.lastAttempted: this run's time, what it resolved, its phase and, for a failure, the stop row's stage and reason. */
function attemptOf(end: ReconcileEnd, row: StopRow | undefined): Attempt {
  const { halt } = end;
  const phase: Attempt['phase'] = row === undefined ? 'Succeeded' : row.stage === undefined ? '' : 'Failed';
  return {
    attemptedAt: toRfc3339(end.now),
    phase,
    ...resolvedFields(end.resolved),
    ...(row?.stage !== undefined && halt !== undefined
      ? {
          failure: {
            stage: row.stage,
            reason: row.reason,
            message: halt.message,
            ...(halt.hook ? { hookName: halt.hook.name, hookPhase: halt.hook.phase } : {}),
          },
        }
      : {}),
  };
}

/** The resolved* fields of status.lastAttempted: what the run found before it stopped. */
function resolvedFields(
  resolved: Resolved,
): Pick<Attempt, 'resolvedSource' | 'resolvedCluster' | 'resolvedMutations' | 'renderRef'> {
  return {
    ...(resolved.source ? { resolvedSource: resolved.source } : {}),
    ...(resolved.cluster ? { resolvedCluster: resolved.cluster } : {}),
    ...(resolved.mutations ? { resolvedMutations: resolved.mutations } : {}),
    ...(resolved.renderRef ? { renderRef: resolved.renderRef } : {}),
  };
}

/** The convoy-release slice at the end of a run: every field it owns, decided from the run and the status it found. */
function sliceOf(
  end: ReconcileEnd,
  lastAttempted: Attempt,
  rollout: Rollout | undefined,
  conditions: Condition[],
): ReleaseSlice {
  const { release, halt } = end;
  const status = release.status ?? {};
  const succeeded = lastAttempted.phase === 'Succeeded';
  const pinnedRef = annotationOf(release, Annotation.pin);
  return {
    observedGeneration: release.metadata.generation ?? 0,
    reconciledAt: toRfc3339(end.now),
    lastAttempted,
    // After a rollback the last healthy render is what runs on the cluster.
    lastSuccessful:
      halt?.halt === 'rolledBack'
        ? status.lastHealthy
        : succeeded && end.upToDateMessage === undefined
          ? lastAttempted
          : status.lastSuccessful,
    lastHealthy:
      succeeded && rollout?.state === 'Succeeded' && rollout.renderRef === lastAttempted.renderRef
        ? lastAttempted
        : status.lastHealthy,
    rollout,
    waves: end.progress?.waves ?? status.waves,
    pin:
      pinnedRef === undefined
        ? undefined
        : {
            // A malformed pin is shown cut short (Applied's message quotes it); it names no render.
            renderRef: RENDER_REF.test(pinnedRef) ? pinnedRef : printable(pinnedRef),
            state: end.pinState ?? status.pin?.state ?? 'Active',
          },
    lifecycle: end.lifecycle ? { hooks: end.lifecycle.status } : status.lifecycle,
    resolvedRetentionPolicy: end.retention,
    lastHandledSyncAt: end.handledSyncAt ?? status.lastHandledSyncAt,
    lastHandledForceSyncAt: end.handledForceSyncAt ?? status.lastHandledForceSyncAt,
    conditions,
  };
}

/**
 * The status of a run still under way (progress.ts): lastAttempted with phase Syncing, what the
 * run has resolved so far and its counts. Every other field of convoy-release — conditions,
 * lastSuccessful, rollout, observedGeneration and reconciledAt included — stays as the run found
 * it: the slice is a server-side apply of the whole writer, so a field left out would be removed,
 * and the run's own mark in reconciledAt would close its Lease (domain/runtime/lease-close.ts)
 * before the run is done. The run's last write (conclude) replaces all of it.
 */
export function concludeProgress(
  begun: Pick<ReconcileEnd, 'release' | 'now' | 'resolved'>,
  counts: ApplyCounts,
  at: Date,
): ReleaseSlice {
  const lastAttempted: Attempt = {
    attemptedAt: toRfc3339(begun.now),
    phase: 'Syncing',
    ...resolvedFields(begun.resolved),
    progress: {
      total: counts.total,
      checked: counts.checked,
      applied: counts.applied,
      updatedAt: toRfc3339(at),
    },
  };
  return { ...sliceAsFound(begun.release.status), lastAttempted };
}

/**
 * The status computed by a reconcile was refused by the Release CRD (convoy's
 * own fault, e.g. a bad value copied from input): the run ends Applied
 * False/DeployFailed naming the refused fields, keeps every other field as it
 * was, and is not retried (the next change or interval tick runs again).
 */
export function concludeStatusRefused(
  release: Release,
  now: Date,
  message: string,
  retention: RetentionPolicy,
): ReconcileDecision {
  const decision = conclude({
    release,
    now,
    resolved: {},
    retention,
    halt: { halt: 'statusRefused', message },
  });
  // Only fields the server accepted before, and nothing copied from the annotations.
  const { notifyCause: _none, ...kept } = decision;
  return { ...kept, slice: { ...decision.slice, pin: undefined }, notify: [] };
}

/** A malformed annotation value as status may show it: printable ASCII (others as `?`), at most 100 characters. */
function printable(value: string): string {
  return [...value]
    .slice(0, 100)
    .map((ch) => (/^[\x20-\x7e]$/.test(ch) ? ch : '?'))
    .join('');
}

function outcomeOf(end: ReconcileEnd, row: StopRow | undefined, rolloutState: string | undefined): Outcome {
  if (row === undefined) {
    return rolloutState === 'Progressing' ? requeueAfter(ROLLOUT_RECHECK_MS, 'rollout Progressing') : done();
  }
  if (row.retry)
    return retry(end.halt?.error ?? new Error(end.halt?.message ?? row.reason), retryPolicyOf(end.release));
  if ('recheckMs' in row && row.recheckMs !== undefined) return requeueAfter(row.recheckMs, row.reason);
  return stop();
}

/** spec.syncPolicy.retryBackoff in the runtime's terms; undefined → the work-queue default. */
export function retryPolicyOf(release: Release): RetryBackoffPolicy | undefined {
  const backoff = release.spec.syncPolicy.retryBackoff;
  if (backoff === undefined) return undefined;
  return {
    initialMs: durationMs(backoff.initial, 5_000),
    factor: backoff.factor,
    maxMs: durationMs(backoff.max, 600_000),
  };
}
