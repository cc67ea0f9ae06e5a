/**
 * What a drift run decided (domain/runtime/run-decision.ts), for the runtime to commit: InSync as
 * the check found it — written only when it changes —, the Events of a transition and the request
 * to the reconcile in mode Correct after that write, and InSync Unknown/Pending when the CRD refuses
 * the condition. Pure: the order of effects around the write is checked without a cluster.
 */
import type { Release } from '../../domain/api/objects.ts';
import {
  inSyncRefusedVerdict,
  inSyncVerdict,
  observeSlice,
  type DriftCheck,
  type InSyncVerdict,
} from '../../domain/observe/insync-verdict.ts';
import { jsonEqual } from '../../domain/render/kube-object.ts';
import {
  notifyLoop,
  releaseEvents,
  type RunDecision,
  type RunEffect,
} from '../../domain/runtime/run-decision.ts';
import { findCondition } from '../../domain/status/conditions.ts';
import { FieldManager } from '../../domain/status/field-managers.ts';
import { ConditionType } from '../../domain/status/reasons.ts';
import { driftEvents } from '../../domain/status/release-events.ts';
import type { AnySlice } from '../../domain/status/slices.ts';

/**
 * The decision of a drift check made at `now`. InSync's lastTransitionTime (on a transition) is
 * the run's mark when it has one (domain/runtime/lease-close.ts), else `now`.
 */
export function driftDecision(release: Release, check: DriftCheck, now: Date): RunDecision<AnySlice> {
  const verdict = inSyncVerdict(release, check);
  const logContext = check.kind === 'checked' ? { renderRef: check.renderRef } : undefined;
  // Whether InSync changes does not depend on the stamp: a transition changes status, reason or message too.
  const changed = !jsonEqual(
    findCondition(release.status?.conditions, ConditionType.InSync),
    observeSlice(release, verdict, now).conditions[0],
  );
  return {
    ...verdictDecision(release, verdict, now, changed, logContext),
    onRefused: {
      instead: 'writing InSync Unknown/Pending instead',
      decide: (refusal) =>
        verdictDecision(release, inSyncRefusedVerdict(verdict, refusal), now, true, logContext),
    },
  };
}

function verdictDecision(
  release: Release,
  verdict: InSyncVerdict,
  now: Date,
  write: boolean,
  logContext: Record<string, unknown> | undefined,
): RunDecision<AnySlice> {
  const inSync = observeSlice(release, verdict, now).conditions[0];
  const events = write && inSync !== undefined ? driftEvents(release, inSync) : [];
  // Both need InSync written first (the reconcile reads it; the Events report it), and neither may
  // be lost to a crash: the write then keeps the Lease until they are sent.
  const after: RunEffect[] = [
    ...(events.length > 0 ? [releaseEvents(release, events)] : []),
    ...(verdict.correct
      ? [notifyLoop('reconcile', release, `drift: ${verdict.drifted} objects drifted (mode Correct)`)]
      : []),
  ];
  return {
    ...(write
      ? {
          write: {
            slice: (stamp: string | undefined) => ({
              manager: FieldManager.observe,
              slice: observeSlice(release, verdict, stamp === undefined ? now : new Date(stamp)),
            }),
          },
        }
      : {}),
    before: [],
    after,
    outcome: verdict.outcome,
    logContext,
    report: {
      message: 'drift checked',
      fields: { inSync: verdict.condition.reason, drifted: verdict.drifted, corrected: verdict.correct },
    },
  };
}
