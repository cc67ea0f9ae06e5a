/**
 * Which Kubernetes Events a status writer emits about a Release, decided from
 * what changed (pure: the adapters/kube/events.ts recorder writes them as
 * events.k8s.io/v1, deduplicated as series).
 *
 * convoy-release (the reconcile), after its status write:
 *   - RenderApplied    a new render's objects were written (names the objects)
 *   - DriftCorrected   objects of the already-applied render were written again
 *                      because they differed on the cluster — the re-apply of a
 *                      hand-edited object by a reconcile (names them)
 *   - <Applied reason> each change of the Applied reason (SourceNotReady,
 *                      Applied, RolledBack — the rollback —, WaveFailed, …)
 *   - HookStarted / HookSucceeded / HookFailed   a hook's state changed
 *   - Pruned           objects removed from the render were deleted
 * convoy-observe (the drift loop), after its status write:
 *   - DriftDetected    InSync turned False/Drifted (its message names the objects)
 *   - DriftResolved    InSync turned True again after Drifted
 *
 * Notes are built from condition messages and object names only: never object
 * content, so never Secret data. At most 1 KiB (the API's limit).
 */
import type { Condition } from '../api/common.ts';
import type { HookStatus, Release } from '../api/index.ts';
import { isWaitReason } from './verdict.ts';
import { AppliedReason, ConditionType, InSyncReason } from './reasons.ts';
import type { ReleaseSlice } from './slices.ts';

export type EventType = 'Normal' | 'Warning';

export interface EventIntent {
  readonly type: EventType;
  /** CamelCase, at most 128 characters. */
  readonly reason: string;
  /** What convoy did, CamelCase (Apply, Reconcile, Prune, RunHook, CheckDrift). */
  readonly action: string;
  readonly note: string;
}

export const MAX_NOTE = 1024;
const MAX_NAMED = 10;

const cut = (note: string): string => (note.length <= MAX_NOTE ? note : `${note.slice(0, MAX_NOTE - 1)}…`);

/** `ConfigMap a/b, Deployment a/c and 3 more`. */
export function nameObjects(names: readonly string[]): string {
  const shown = names.slice(0, MAX_NAMED).join(', ');
  return names.length > MAX_NAMED ? `${shown} and ${names.length - MAX_NAMED} more` : shown;
}

const conditionOf = (conditions: readonly Condition[] | undefined, type: string) =>
  conditions?.find((c) => c.type === type);

export interface ReconcileWrites {
  /** Objects written by server-side apply this run, described (`Kind ns/name`). */
  readonly written: readonly string[];
  /** Objects deleted by prune this run. */
  readonly pruned: readonly string[];
}

export function reconcileEvents(
  before: Release,
  slice: ReleaseSlice,
  writes: ReconcileWrites,
): EventIntent[] {
  const events: EventIntent[] = [];
  const previous = before.status;
  const renderRef = slice.lastAttempted?.renderRef;
  const appliedBefore = conditionOf(previous?.conditions, ConditionType.Applied);
  const appliedAfter = conditionOf(slice.conditions, ConditionType.Applied);

  if (writes.written.length > 0) {
    const sameRender =
      renderRef !== undefined &&
      previous?.lastSuccessful?.renderRef === renderRef &&
      previous.rollout?.state !== 'Progressing';
    events.push(
      sameRender
        ? {
            type: 'Normal',
            reason: 'DriftCorrected',
            action: 'Apply',
            note: cut(
              `re-applied ${writes.written.length} object(s) of render ${renderRef} that differed on the cluster: ${nameObjects(writes.written)}`,
            ),
          }
        : {
            type: 'Normal',
            reason: 'RenderApplied',
            action: 'Apply',
            note: cut(
              `applied render ${renderRef ?? '(unknown)'}: ${writes.written.length} object(s) written: ${nameObjects(writes.written)}`,
            ),
          },
    );
  }
  if (appliedAfter !== undefined && appliedAfter.reason !== appliedBefore?.reason) {
    const failure =
      appliedAfter.reason === AppliedReason.RolledBack ||
      (appliedAfter.status !== 'True' && !isWaitReason(appliedAfter.reason));
    events.push({
      type: failure ? 'Warning' : 'Normal',
      reason: appliedAfter.reason,
      action: appliedAfter.reason === AppliedReason.RolledBack ? 'Rollback' : 'Reconcile',
      note: cut(
        `Applied is ${appliedAfter.status} (${appliedAfter.reason})${appliedAfter.message === '' ? '' : `: ${appliedAfter.message}`}`,
      ),
    });
  }
  events.push(...hookEvents(previous?.lifecycle?.hooks ?? [], slice.lifecycle?.hooks ?? []));
  if (writes.pruned.length > 0) {
    events.push({
      type: 'Normal',
      reason: 'Pruned',
      action: 'Prune',
      note: cut(
        `deleted ${writes.pruned.length} object(s) no longer in the render: ${nameObjects(writes.pruned)}`,
      ),
    });
  }
  return events;
}

const HOOK_EVENT: Partial<Record<HookStatus['state'], { reason: string; type: EventType }>> = {
  Running: { reason: 'HookStarted', type: 'Normal' },
  Succeeded: { reason: 'HookSucceeded', type: 'Normal' },
  Failed: { reason: 'HookFailed', type: 'Warning' },
};

function hookEvents(before: readonly HookStatus[], after: readonly HookStatus[]): EventIntent[] {
  const key = (h: HookStatus) => `${h.phase}/${h.name}/${h.renderRef ?? ''}`;
  const old = new Map(before.map((h) => [key(h), h.state]));
  return after.flatMap((h) => {
    const event = HOOK_EVENT[h.state];
    if (event === undefined || old.get(key(h)) === h.state) return [];
    const started =
      event.reason !== 'HookStarted' && old.get(key(h)) === undefined
        ? [
            {
              type: 'Normal' as const,
              reason: 'HookStarted',
              action: 'RunHook',
              note: cut(`${h.phase} hook ${h.name} started${h.job ? ` (Job ${h.job})` : ''}`),
            },
          ]
        : [];
    return [
      ...started,
      {
        type: event.type,
        reason: event.reason,
        action: 'RunHook',
        note: cut(
          `${h.phase} hook ${h.name} ${h.state === 'Running' ? 'started' : h.state.toLowerCase()}${h.job ? ` (Job ${h.job})` : ''}${h.message ? `: ${h.message}` : ''}`,
        ),
      },
    ];
  });
}

export function driftEvents(before: Release, inSync: Condition): EventIntent[] {
  const previous = conditionOf(before.status?.conditions, ConditionType.InSync);
  if (
    inSync.reason === InSyncReason.Drifted &&
    (previous?.reason !== InSyncReason.Drifted || previous.message !== inSync.message)
  ) {
    return [{ type: 'Warning', reason: 'DriftDetected', action: 'CheckDrift', note: cut(inSync.message) }];
  }
  if (inSync.status === 'True' && previous?.reason === InSyncReason.Drifted) {
    return [
      {
        type: 'Normal',
        reason: 'DriftResolved',
        action: 'CheckDrift',
        note: cut(`in sync again: ${inSync.message}`),
      },
    ];
  }
  return [];
}
