/**
 * The ways a rollout of a revision ends other than step by step to success: a step that failed
 * (Halted, or RolledBack to the last revision that succeeded), a manual rollback request
 * (convoy.dev/rollback), and a rollout that ended earlier, which stays as it ended. What they share
 * is the failing list and the rollback's wording; advance-rollout.ts decides when each applies.
 */
import type { FailingCluster, Revision } from '../api/release-set.ts';
import { toRfc3339 } from '../status/conditions.ts';
import type { EventIntent } from '../status/release-events.ts';
import { failingEntry } from './failing.ts';
import type { Member } from './generate-fleet.ts';
import { FleetAnnotation } from './labels.ts';
import { RolloutReason } from './reasons.ts';
import {
  event,
  frozen,
  names,
  rollbackWrites,
  succeededMessage,
  writesFor,
  type Sorted,
} from './rollout-members.ts';
import type { RolloutInput, RolloutOutcome, RolloutStatus } from './rollout-outcome.ts';
import type { StepPlan } from './steps.ts';

/** What a rollback to `target` did, for the message: how many Clusters went back, and which could not. */
function rolledBackText(rb: ReturnType<typeof rollbackWrites>, target: Revision): string {
  const rolled = rb.writes.length + rb.pinned;
  const left =
    rb.notPossible.length > 0
      ? `; ${rb.notPossible.length} not rolled back (created by this rollout or not ready at that revision: ${names(rb.notPossible)})`
      : '';
  return `rolled back ${rolled} Clusters to revision ${target.id} (lastSucceededRevision)${left}`;
}

/** convoy.dev/rollback: every Cluster this revision updated back to `target`, where the rollout stands. */
export function requestedRollback(input: RolloutInput, target: Revision): RolloutOutcome {
  const { revision, steps, previous } = input;
  const before = previous?.revision?.id === revision.id ? previous.rollout : undefined;
  const byName = before === undefined ? -1 : steps.findIndex((s) => s.name === before.stepName);
  const k = byName >= 0 ? byName : 0;
  const rb = rollbackWrites(input.members, target);
  const message = `rollback requested (${FleetAnnotation.rollback}=${revision.id}): ${rolledBackText(rb, target)}`;
  const finishedAt = steps.map((step) => {
    const prior = before === undefined ? undefined : previous?.steps?.find((s) => s.name === step.name);
    return prior?.state === 'Succeeded' || prior?.state === 'Failed' ? prior.finishedAt : undefined;
  });
  finishedAt[k] ??= toRfc3339(input.now);
  return {
    rollout: {
      state: 'RolledBack',
      step: k,
      stepName: steps[k].name,
      ...(before?.stepStartedAt === undefined ? {} : { stepStartedAt: before.stepStartedAt }),
    },
    stop: 'rollbackRequested',
    message,
    writes: input.rollout.paused ? [] : rb.writes,
    succeeded: false,
    finishedAt,
    events: [event('Warning', RolloutReason.RollbackRequested, message)],
  };
}

/** A rollout of this revision that already ended (Succeeded, Halted, RolledBack) stays as it ended; undefined: it is active. */
export function endedRollout(
  input: RolloutInput,
  before: RolloutStatus | undefined,
  finishedAt: (string | undefined)[],
): RolloutOutcome | undefined {
  const { revision, members, previous } = input;
  const events: EventIntent[] = [];
  if (before?.state === 'Succeeded') {
    const writes = input.rollout.paused ? [] : writesFor(members);
    return {
      rollout: before,
      stop: 'succeeded',
      message: succeededMessage(revision, members.length),
      writes,
      succeeded: true,
      finishedAt,
      events,
    };
  }
  if (before?.state === 'Halted') {
    const message =
      previous?.conditions?.find((c) => c.type === 'RolloutSucceeded')?.message ??
      `the rollout of revision ${revision.id} halted`;
    return {
      rollout: before,
      stop: 'stepFailed',
      message,
      writes: [],
      succeeded: false,
      finishedAt,
      events,
      frozenFailing: frozen(previous),
    };
  }
  if (before?.state === 'RolledBack') {
    const target = previous?.lastSucceededRevision;
    const rb = target === undefined ? { writes: [] } : rollbackWrites(members, target);
    const condition = previous?.conditions?.find((c) => c.type === 'RolloutSucceeded');
    const message = condition?.message ?? `the rollout of revision ${revision.id} was rolled back`;
    const stop = condition?.reason === RolloutReason.RollbackRequested ? 'rollbackRequested' : 'rolledBack';
    return {
      rollout: before,
      stop,
      message,
      writes: input.rollout.paused ? [] : rb.writes,
      succeeded: false,
      finishedAt,
      events,
      frozenFailing: frozen(previous),
    };
  }

  return undefined;
}

export interface FailInput {
  input: RolloutInput;
  step: StepPlan;
  k: number;
  sorted: Sorted;
  open: Member[];
  pastDeadline: boolean;
  rollout: (state: RolloutStatus['state']) => RolloutStatus;
  finishedAt: (string | undefined)[];
  events: EventIntent[];
  earlier: Member[];
}

/** A step failed (more than maxFailures, or past its stepTimeout): RollbackFleet to the last revision that succeeded, or Halt. */
export function stepFailed(f: FailInput): RolloutOutcome {
  const { input, step, k, sorted, open, pastDeadline } = f;
  const { revision, now, previous } = input;
  const timeoutText = pastDeadline
    ? `step ${step.name} passed its deadline (stepTimeout from ${f.rollout('Halted').stepStartedAt ?? ''})`
    : undefined;
  const failing: FailingCluster[] = [];
  for (const m of sorted.failed) {
    if (m.state.kind === 'updated')
      failing.push(
        failingEntry({ cluster: m.cluster.name, release: m.state.release, verdict: m.state.verdict, now }),
      );
  }
  if (timeoutText !== undefined) {
    for (const m of open) {
      if (m.state.kind === 'updated')
        failing.push(
          failingEntry({
            cluster: m.cluster.name,
            release: m.state.release,
            verdict: m.state.verdict,
            timedOut: timeoutText,
            now,
          }),
        );
      else if (m.state.kind !== 'held')
        failing.push({
          cluster: m.cluster.name,
          release: m.name,
          signal: 'Applied',
          reason: 'StepTimeout',
          message: `${timeoutText}: not written yet (waiting for a slot)`,
          since: toRfc3339(now),
        });
    }
  }
  failing.sort((a, b) => (a.cluster < b.cluster ? -1 : a.cluster > b.cluster ? 1 : 0));
  const why =
    sorted.failed.length > step.maxFailures
      ? `step ${step.name} failed: ${sorted.failed.length} of ${step.clusters.length} Clusters failed, more than maxFailures ${step.maxFailures} (${names(sorted.failed)})`
      : `step ${step.name} passed its stepTimeout with ${open.length} of ${step.clusters.length} Clusters not ready (${names(open)})`;
  f.finishedAt[k] = toRfc3339(now);
  const target = previous?.lastSucceededRevision;
  if (step.onFailure === 'RollbackFleet' && target !== undefined && target.id !== revision.id) {
    const rb = rollbackWrites(input.members, target);
    const message = `${why}; ${rolledBackText(rb, target)}`;
    return {
      rollout: f.rollout('RolledBack'),
      stop: 'rolledBack',
      message,
      writes: rb.writes,
      succeeded: false,
      finishedAt: f.finishedAt,
      failing,
      events: [...f.events, event('Warning', 'RolledBack', message)],
    };
  }
  const noTarget =
    step.onFailure === 'RollbackFleet'
      ? '; onFailure is RollbackFleet but no earlier revision succeeded, so there is nothing to roll back to: halted'
      : '; halted (onFailure Halt)';
  const message = `${why}${noTarget}`;
  return {
    rollout: f.rollout('Halted'),
    stop: 'stepFailed',
    message,
    writes: [],
    succeeded: false,
    finishedAt: f.finishedAt,
    failing,
    events: [...f.events, event('Warning', 'StepFailed', message)],
  };
}
