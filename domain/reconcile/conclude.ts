import type { Attempt, Condition, HookStatus, LifecycleHook, Release } from '../api/index.ts';
import { durationMs } from './durations.ts';
import type { RetryBackoffPolicy } from '../runtime/backoff.ts';
import { requeueAfter, retry, stop, done, type Outcome } from '../runtime/outcome.ts';
import { nextCondition, toRfc3339 } from '../status/conditions.ts';
import { AppliedReason, ConditionType, LifecycleReason, appliedTrueReasons } from '../status/reasons.ts';
import { ownedConditions, type ReleaseSlice } from '../status/slices.ts';
import { observersRideOnReconcile } from '../status/observer-ticks.ts';
import { FieldManager } from '../status/field-managers.ts';
import type { ApplyCounts } from './progress.ts';
import { Annotation, annotationOf, RENDER_REF } from './annotations.ts';
import type { Halt } from './halt.ts';
import type { PinState, Resolved } from './prepare-render.ts';
import type { RolloutProgress } from './rollout.ts';
import { ROLLOUT_RECHECK_MS, Stops } from './stops.ts';
import type { RetentionPolicy } from './ports.ts';

/** Everything a reconcile learned, however far it got. */
export interface ReconcileEnd {
  release: Release;
  now: Date;
  resolved: Resolved;
  /** undefined: every step ran (a render is applied). */
  halt?: Halt;
  /** Set once the sync waves were reached. */
  progress?: RolloutProgress;
  pinState?: PinState;
  /** A manual-mode /sync request this run applied. */
  handledSyncAt?: string;
  /** A force-sync request this run handled (success or not). */
  handledForceSyncAt?: string;
  retention: RetentionPolicy;
  /** Hooks of spec.lifecycleRef and their status entries, when the reconcile reached them. */
  lifecycle?: { hooks: readonly LifecycleHook[]; status: HookStatus[] };
  /** Applied True without applying: manual mode, render unchanged. */
  upToDateMessage?: string;
}

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
  const { release, now, halt } = end;
  const status = release.status ?? {};
  const row = halt === undefined ? undefined : Stops[halt.halt];
  const phase: Attempt['phase'] = row === undefined ? 'Succeeded' : row.stage === undefined ? '' : 'Failed';
  const lastAttempted: Attempt = {
    attemptedAt: toRfc3339(now),
    phase,
    ...(end.resolved.source ? { resolvedSource: end.resolved.source } : {}),
    ...(end.resolved.cluster ? { resolvedCluster: end.resolved.cluster } : {}),
    ...(end.resolved.mutations ? { resolvedMutations: end.resolved.mutations } : {}),
    ...(end.resolved.renderRef ? { renderRef: end.resolved.renderRef } : {}),
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
  const succeeded = phase === 'Succeeded';
  const rollout = end.progress?.rollout ?? status.rollout;
  const applied = appliedCondition(end, row?.reason ?? AppliedReason.Applied);
  const generation = release.metadata.generation ?? 0;
  const conditions: Condition[] = [
    nextCondition(status.conditions, applied, { generation, now }),
  ];
  if (release.spec.failurePolicy !== undefined && rollout !== undefined) {
    conditions.push(
      nextCondition(
        status.conditions,
        {
          type: ConditionType.RolloutSucceeded,
          status: rollout.state === 'Succeeded' ? 'True' : 'False',
          reason: rollout.state,
          message: `rollout of ${rollout.renderRef} is ${rollout.state}${rollout.wave !== undefined ? ` (wave ${rollout.wave})` : ''}`,
        },
        { generation, now },
      ),
    );
  }
  const hookEntries = end.lifecycle?.status ?? status.lifecycle?.hooks;
  const lifecycleInput = lifecycleCondition(end, hookEntries);
  if (lifecycleInput !== undefined) conditions.push(nextCondition(status.conditions, lifecycleInput, { generation, now }));

  const pinnedRef = annotationOf(release, Annotation.pin);
  const slice: ReleaseSlice = {
    observedGeneration: generation,
    reconciledAt: toRfc3339(now),
    lastAttempted,
    // After a rollback the last healthy render is what runs on the cluster.
    lastSuccessful:
      halt?.halt === 'rolledBack'
        ? status.lastHealthy
        : succeeded && end.upToDateMessage === undefined
          ? lastAttempted
          : status.lastSuccessful,
    lastHealthy: succeeded && rollout?.state === 'Succeeded' && rollout.renderRef === lastAttempted.renderRef
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

  const newRender =
    (succeeded && end.upToDateMessage === undefined && lastAttempted.renderRef !== status.lastSuccessful?.renderRef) ||
    (halt?.halt === 'rolledBack' && status.rollout?.state !== 'RolledBack');
  // The current render changed (a new render waits at a wave, for a hook, for /sync, or failed to
  // apply): the observers hear it at once, so Healthy turns Pending (and InSync follows) within
  // seconds rather than at their next interval tick.
  const currentChanged = lastAttempted.renderRef !== undefined && lastAttempted.renderRef !== status.lastAttempted?.renderRef;
  // The same render applied again over objects that differed (drift corrected, a deleted object
  // re-created): InSync (and Healthy) are recomputed right away, as after an apply, instead of
  // staying False until the drift loop's next interval tick (issue 23).
  const rewritten = end.progress?.written ?? 0;
  const corrected = succeeded && !newRender && !currentChanged && rewritten > 0;
  // A new metadata.generation (a resume, any spec edit that leaves the render as it was): the
  // observers' conditions carry the old generation until they run again, and the combined verdict
  // waits for every condition's observedGeneration; told now, they follow within one run each.
  const generationChanged = status.observedGeneration !== generation;
  const renderRef = lastAttempted.renderRef ?? '';
  // Settled (the render applied, nothing in progress): this run just checked every object, so the
  // observers' interval checks ride on it (domain/status/observer-ticks.ts; issue 24 item 1).
  const settled = observersRideOnReconcile(slice);
  const notifyCause =
    newRender || currentChanged
      ? `applied ${renderRef}`.trim()
      : corrected
        ? `corrected ${renderRef}: ${rewritten} objects applied again`
        : generationChanged
          ? `generation ${generation} handled (was ${status.observedGeneration ?? 'none'})`
          : settled
            ? `settled ${renderRef}: the observers' interval checks ride on this reconcile`
            : undefined;
  return {
    slice,
    outcome: outcomeOf(end, row, rollout?.state),
    notify: notifyCause === undefined ? [] : ['health', 'drift'],
    ...(notifyCause === undefined ? {} : { notifyCause }),
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
  const status = begun.release.status ?? {};
  const owned: readonly string[] = ownedConditions[FieldManager.release];
  const lastAttempted: Attempt = {
    attemptedAt: toRfc3339(begun.now),
    phase: 'Syncing',
    ...(begun.resolved.source ? { resolvedSource: begun.resolved.source } : {}),
    ...(begun.resolved.cluster ? { resolvedCluster: begun.resolved.cluster } : {}),
    ...(begun.resolved.mutations ? { resolvedMutations: begun.resolved.mutations } : {}),
    ...(begun.resolved.renderRef ? { renderRef: begun.resolved.renderRef } : {}),
    progress: { total: counts.total, checked: counts.checked, applied: counts.applied, updatedAt: toRfc3339(at) },
  };
  return {
    observedGeneration: status.observedGeneration,
    reconciledAt: status.reconciledAt,
    lastAttempted,
    lastSuccessful: status.lastSuccessful,
    lastHealthy: status.lastHealthy,
    rollout: status.rollout,
    pin: status.pin,
    waves: status.waves,
    lifecycle: status.lifecycle,
    resolvedRetentionPolicy: status.resolvedRetentionPolicy,
    lastHandledSyncAt: status.lastHandledSyncAt,
    lastHandledForceSyncAt: status.lastHandledForceSyncAt,
    conditions: (status.conditions ?? []).filter((c) => owned.includes(c.type)),
  };
}

/**
 * The status computed by a reconcile was refused by the Release CRD (convoy's
 * own fault, e.g. a bad value copied from input): the run ends Applied
 * False/DeployFailed naming the refused fields, keeps every other field as it
 * was, and is not retried (the next change or interval tick runs again).
 */
export function concludeStatusRefused(release: Release, now: Date, message: string, retention: RetentionPolicy): ReconcileDecision {
  const decision = conclude({ release, now, resolved: {}, retention, halt: { halt: 'statusRefused', message } });
  // Only fields the server accepted before, and nothing copied from the annotations.
  const { notifyCause: _none, ...kept } = decision;
  return { ...kept, slice: { ...decision.slice, pin: undefined }, notify: [] };
}

/** A malformed annotation value as status may show it: printable ASCII (others as `?`), at most 100 characters. */
function printable(value: string): string {
  return [...value].slice(0, 100).map((ch) => (/^[\x20-\x7e]$/.test(ch) ? ch : '?')).join('');
}

/** LifecycleSucceeded: present when the Release has hooks; about the hooks of the current render. */
function lifecycleCondition(end: ReconcileEnd, entries: readonly HookStatus[] | undefined) {
  if (end.release.spec.lifecycleRef === undefined) return undefined;
  const renderRef = end.resolved.renderRef;
  const current = (entries ?? []).filter((h) => h.renderRef === renderRef);
  if (current.length === 0 && end.lifecycle === undefined) return undefined;
  const ignored = new Set((end.lifecycle?.hooks ?? []).filter((h) => h.onFailure === 'Ignore').map((h) => h.name));
  const failed = current.find((h) => h.state === 'Failed' && !ignored.has(h.name));
  if (failed) {
    return { type: ConditionType.LifecycleSucceeded, status: 'False' as const, reason: LifecycleReason.HookFailed, message: `${failed.phase} hook ${failed.name} failed: ${failed.message ?? ''}`.trim() };
  }
  const running = current.filter((h) => h.state === 'Running' || h.state === 'Pending');
  if (running.length > 0) {
    return { type: ConditionType.LifecycleSucceeded, status: 'False' as const, reason: LifecycleReason.Running, message: `hooks running: ${running.map((h) => `${h.phase}/${h.name}`).join(', ')}` };
  }
  return { type: ConditionType.LifecycleSucceeded, status: 'True' as const, reason: LifecycleReason.Succeeded, message: `${current.length} hooks of ${renderRef ?? 'the render'} succeeded` };
}

function appliedCondition(end: ReconcileEnd, reason: AppliedReason) {
  const message =
    end.halt?.message ??
    end.upToDateMessage ??
    `applied ${end.resolved.renderRef ?? 'the render'}${end.progress ? ` (${end.progress.written} objects written; rollout ${end.progress.rollout.state})` : ''}`;
  return {
    type: ConditionType.Applied,
    status: appliedTrueReasons.has(reason) ? ('True' as const) : ('False' as const),
    reason,
    message,
  };
}

function outcomeOf(end: ReconcileEnd, row: (typeof Stops)[keyof typeof Stops] | undefined, rolloutState: string | undefined): Outcome {
  if (row === undefined) {
    return rolloutState === 'Progressing' ? requeueAfter(ROLLOUT_RECHECK_MS, 'rollout Progressing') : done();
  }
  if (row.retry) return retry(end.halt?.error ?? new Error(end.halt?.message ?? row.reason), retryPolicyOf(end.release));
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
