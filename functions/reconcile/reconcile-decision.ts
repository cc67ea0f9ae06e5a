/**
 * What a reconcile run decided (domain/runtime/run-decision.ts), for the runtime to commit: the
 * convoy-release slice, stamped with the run's mark; the Events and messages to drift and health
 * around it; Applied False/DeployFailed when the CRD refuses the slice. Pure but for sealing the
 * hint (applied-hint.ts), so the order of effects around the write is checked without a cluster.
 */
import type { Release } from '../../domain/api/objects.ts';
import { concludeStatusRefused, type ReconcileDecision } from '../../domain/reconcile/conclude.ts';
import type { ReconcilePorts } from '../../domain/reconcile/ports.ts';
import type { ReconcileResult } from '../../domain/reconcile/reconcile.ts';
import { dropped, type Outcome } from '../../domain/runtime/outcome.ts';
import {
  notifyLoop,
  releaseEvents,
  type RunDecision,
  type StatusWrite,
} from '../../domain/runtime/run-decision.ts';
import { FieldManager } from '../../domain/status/field-managers.ts';
import type { EventIntent } from '../../domain/status/release-events.ts';
import type { AnySlice, ReleaseSlice } from '../../domain/status/slices.ts';
import { appliedHint, type HintKey } from '../runtime/applied-hint.ts';

/** Deleted while it was reconciled: nothing left to report on. */
const GONE: Outcome = dropped('the Release was deleted during the reconcile', { gone: true });

/** The convoy-release write: reconciledAt is the run's mark when it has one (lease-close.ts), else the reconcile's own time. */
function releaseWrite(slice: ReleaseSlice, ifGone?: Outcome): StatusWrite<AnySlice> {
  return {
    slice: (stamp) => ({
      manager: FieldManager.release,
      slice: stamp === undefined ? slice : { ...slice, reconciledAt: stamp },
    }),
    ...(ifGone === undefined ? {} : { ifGone }),
  };
}

/** The Progressing recheck that found the wave still waiting (domain/reconcile/recheck.ts): only this attempt's time is written. */
export function recheckDecision(waiting: { outcome: Outcome; slice: ReleaseSlice }): RunDecision<AnySlice> {
  return {
    write: releaseWrite(waiting.slice, GONE),
    before: [],
    after: [],
    outcome: waiting.outcome,
    report: {
      message: 'reconciled',
      fields: {
        recheck: 'the wave it waits on',
        reason: waiting.outcome.kind === 'requeueAfter' ? waiting.outcome.reason : undefined,
      },
    },
  };
}

export interface ReconcileDecisionInput {
  readonly release: Release;
  readonly result: Extract<ReconcileResult, { kind: 'reconciled' }>;
  /** The run's Events (release-events.ts: from the objects it wrote and pruned). */
  readonly events: readonly EventIntent[];
  /** The notices to drift and health wait for the run that finishes the rollout (a first deploy during a burst). */
  readonly noticesWait: boolean;
  /** Seals the hint the notices carry (applied-hint.ts); undefined: they carry none, and the observers read. */
  readonly hintKey?: HintKey | undefined;
  /** For the status written instead of a refused one. */
  readonly ports: Pick<ReconcilePorts, 'now' | 'retentionDefault'>;
}

/**
 * A full reconcile's decision. The status write closes the run's Lease, so it is the run's last
 * act: the Events go first, and so do the messages to drift and health when they carry the
 * Release as written (the sealed hint). Messages without it make the observers read the Release,
 * so they follow the write, which then carries the later mark and closes nothing.
 */
export function reconcileDecision(input: ReconcileDecisionInput): RunDecision<AnySlice> {
  const { release, result } = input;
  const loops = input.noticesWait ? [] : result.notify;
  const hint =
    loops.length > 0 && input.hintKey !== undefined && result.observed !== undefined
      ? appliedHint(
          input.hintKey,
          release,
          { manager: FieldManager.release, slice: result.slice },
          result.observed,
        )
      : undefined;
  const cause = result.notifyCause ?? `applied ${result.renderRef ?? ''}`.trim();
  const notices = loops.map((loop) => notifyLoop(loop, release, cause, hint));
  const applied = result.slice.conditions.find((c) => c.type === 'Applied');
  return {
    write: releaseWrite(result.slice, GONE),
    before: [releaseEvents(release, input.events), ...(hint === undefined ? [] : notices)],
    after: hint === undefined ? notices : [],
    onRefused: {
      instead: 'writing Applied False/DeployFailed instead',
      decide: (refusal) =>
        refusedDecision(
          concludeStatusRefused(
            release,
            input.ports.now(),
            refusal,
            result.slice.resolvedRetentionPolicy ?? input.ports.retentionDefault,
          ),
        ),
    },
    outcome: result.outcome,
    logContext: { renderRef: result.renderRef },
    report: {
      message: 'reconciled',
      fields: { applied: applied?.reason, phase: result.slice.lastAttempted?.phase },
    },
  };
}

/** convoy computed a status its own CRD refuses: Applied says so, every other field as it was, and the run stops (no retry loop). */
function refusedDecision(refused: ReconcileDecision): RunDecision<AnySlice> {
  return { write: releaseWrite(refused.slice), before: [], after: [], outcome: refused.outcome };
}
