import type { Condition, HookStatus } from '../api/index.ts';
import { nextCondition } from '../status/conditions.ts';
import { AppliedReason, ConditionType, LifecycleReason, appliedTrueReasons } from '../status/reasons.ts';
import type { ReconcileEnd } from './reconcile-end.ts';
import type { Rollout } from './rollout.ts';
import type { StopRow } from './stops.ts';

/**
 * The conditions convoy-release writes at the end of a run: Applied always (the stop row's reason,
 * or Applied), RolloutSucceeded when spec.failurePolicy is set, LifecycleSucceeded when the
 * Release has hooks.
 */
export function conditionsOf(
  end: ReconcileEnd,
  row: StopRow | undefined,
  rollout: Rollout | undefined,
): Condition[] {
  const { release, now } = end;
  const previous = release.status?.conditions;
  const stamp = { generation: release.metadata.generation ?? 0, now };
  const conditions: Condition[] = [
    nextCondition(previous, appliedCondition(end, row?.reason ?? AppliedReason.Applied), stamp),
  ];
  if (release.spec.failurePolicy !== undefined && rollout !== undefined) {
    conditions.push(nextCondition(previous, rolloutCondition(rollout), stamp));
  }
  const lifecycle = lifecycleCondition(end, end.lifecycle?.status ?? release.status?.lifecycle?.hooks);
  if (lifecycle !== undefined) conditions.push(nextCondition(previous, lifecycle, stamp));
  return conditions;
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

/** RolloutSucceeded: the reason is the rollout state. */
function rolloutCondition(rollout: Rollout) {
  return {
    type: ConditionType.RolloutSucceeded,
    status: rollout.state === 'Succeeded' ? ('True' as const) : ('False' as const),
    reason: rollout.state,
    message: `rollout of ${rollout.renderRef} is ${rollout.state}${rollout.wave !== undefined ? ` (wave ${rollout.wave})` : ''}`,
  };
}

/** LifecycleSucceeded: present when the Release has hooks; about the hooks of the current render. */
function lifecycleCondition(end: ReconcileEnd, entries: readonly HookStatus[] | undefined) {
  if (end.release.spec.lifecycleRef === undefined) return undefined;
  const renderRef = end.resolved.renderRef;
  const current = (entries ?? []).filter((h) => h.renderRef === renderRef);
  if (current.length === 0 && end.lifecycle === undefined) return undefined;
  const ignored = new Set(
    (end.lifecycle?.hooks ?? []).filter((h) => h.onFailure === 'Ignore').map((h) => h.name),
  );
  const failed = current.find((h) => h.state === 'Failed' && !ignored.has(h.name));
  if (failed) {
    return {
      type: ConditionType.LifecycleSucceeded,
      status: 'False' as const,
      reason: LifecycleReason.HookFailed,
      message: `${failed.phase} hook ${failed.name} failed: ${failed.message ?? ''}`.trim(),
    };
  }
  const running = current.filter((h) => h.state === 'Running' || h.state === 'Pending');
  if (running.length > 0) {
    return {
      type: ConditionType.LifecycleSucceeded,
      status: 'False' as const,
      reason: LifecycleReason.Running,
      message: `hooks running: ${running.map((h) => `${h.phase}/${h.name}`).join(', ')}`,
    };
  }
  return {
    type: ConditionType.LifecycleSucceeded,
    status: 'True' as const,
    reason: LifecycleReason.Succeeded,
    message: `${current.length} hooks of ${renderRef ?? 'the render'} succeeded`,
  };
}
