/**
 * What a health run decided (domain/runtime/run-decision.ts), for the runtime to commit: Healthy
 * and healthSummary on every assessment (checkedAt drives the relay's health timer and, as the
 * run's mark, closes its Lease), and Healthy Unknown/Pending when the CRD refuses the slice. Pure:
 * the order around the write is checked without a cluster.
 */
import type { Release } from '../../domain/api/objects.ts';
import {
  healthRefusedVerdict,
  healthSlice,
  healthVerdict,
  type HealthObservation,
  type HealthVerdict,
} from '../../domain/observe/health-verdict.ts';
import type { RunDecision, StatusWrite } from '../../domain/runtime/run-decision.ts';
import { FieldManager } from '../../domain/status/field-managers.ts';
import type { AnySlice } from '../../domain/status/slices.ts';

/**
 * The decision of an assessment made at `now` (the objects as read then). The write carries the
 * run's mark when it has one (domain/runtime/lease-close.ts) as healthSummary.checkedAt of this
 * assessment's summary and as Healthy's lastTransitionTime on a transition; a summary kept from an
 * earlier check (the cluster or the store could not be read) keeps its own checkedAt.
 */
export function healthDecision(
  release: Release,
  observation: HealthObservation,
  now: Date,
): RunDecision<AnySlice> {
  const verdict = healthVerdict(release, observation, now);
  const fresh = observation.kind === 'assessed';
  return {
    write: healthWrite(release, verdict, now, fresh),
    before: [],
    after: [],
    onRefused: {
      instead: 'writing Healthy Unknown/Pending instead',
      decide: (refusal) => {
        const refused = healthRefusedVerdict(refusal);
        return {
          write: healthWrite(release, refused, now, false),
          before: [],
          after: [],
          outcome: refused.outcome,
        };
      },
    },
    outcome: verdict.outcome,
    logContext: observation.kind === 'notAssessed' ? undefined : { renderRef: observation.renderRef },
    report: {
      message: 'health assessed',
      fields: { healthy: verdict.condition.reason, aggregate: verdict.aggregate },
    },
  };
}

function healthWrite(
  release: Release,
  verdict: HealthVerdict,
  now: Date,
  fresh: boolean,
): StatusWrite<AnySlice> {
  return {
    slice(stamp) {
      const summary = verdict.healthSummary;
      const stamped =
        stamp !== undefined && fresh && summary !== undefined
          ? { ...verdict, healthSummary: { ...summary, checkedAt: stamp } }
          : verdict;
      return {
        manager: FieldManager.health,
        slice: healthSlice(release, stamped, stamp === undefined ? now : new Date(stamp)),
      };
    },
  };
}
