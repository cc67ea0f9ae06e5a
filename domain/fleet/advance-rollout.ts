/**
 * The second half of a ReleaseSet reconcile: where the rollout of the current revision stands and
 * what to write next, from the previous status, the children as read and now. Everything it needs
 * to remember is in status.rollout (step, stepStartedAt, healthySince) or on the children
 * (convoy.dev/release-set-revision), so a restarted runtime resumes mid-step and mid-soak.
 *
 * In one step: approval first (before anything of the step is written), then the deadline and the
 * failure budget, then, when every Cluster of the step is ready, the soak (minHealthyTime) and the
 * next step; otherwise the next batch, at most maxConcurrent Clusters in flight.
 */
import type { ReleaseSetSpec, ReleaseSetStatus, Revision } from '../api/release-set.ts';
import { toRfc3339 } from '../status/conditions.ts';
import { failingEntry } from './failing.ts';
import type { Member } from './generate-fleet.ts';
import { FleetAnnotation } from './labels.ts';
import {
  event,
  frozen,
  names,
  rollbackWrites,
  sortMembers,
  succeededMessage,
  writesFor,
  type Sorted,
} from './rollout-members.ts';
import type { StepPlan } from './steps.ts';
import { BATCH_RECHECK_SECONDS, type FleetStopName } from './stops.ts';
import type { ChildWrite } from './writes.ts';
import { readRollbackRequest } from './rollback-request.ts';
import { RolloutReason } from './reasons.ts';
import type { FailingCluster } from '../api/release-set.ts';
import type { EventIntent } from '../status/release-events.ts';

export type RolloutStatus = NonNullable<ReleaseSetStatus['rollout']>;

export interface RolloutInput {
  readonly revision: Revision;
  readonly steps: readonly StepPlan[];
  readonly members: readonly Member[];
  readonly rollout: ReleaseSetSpec['rollout'];
  readonly previous: ReleaseSetStatus | undefined;
  /** The value of convoy.dev/approve on the set. */
  readonly approval: string | undefined;
  /** The value of convoy.dev/rollback on the set (rollback-request.ts). */
  readonly rollbackRequest?: string | undefined;
  readonly now: Date;
}

export interface RolloutOutcome {
  readonly rollout: RolloutStatus;
  readonly stop: FleetStopName;
  readonly message: string;
  readonly writes: readonly ChildWrite[];
  readonly requeueAfterSeconds?: number;
  /** Set when this revision succeeded (now or before). */
  readonly succeeded: boolean;
  /** When each step finished, by step index. */
  readonly finishedAt: readonly (string | undefined)[];
  /** The full failing list of a failure found now (Halted, RolledBack); undefined: computed from the children. */
  readonly failing?: readonly FailingCluster[];
  /** The failing list of a failure found earlier, kept as it was (the rollback may have made the children well). */
  readonly frozenFailing?: Pick<ReleaseSetStatus, 'failing' | 'failingOmitted'>;
  readonly events: readonly EventIntent[];
}

/**
 * The rollout's next move. A manual rollback request (convoy.dev/rollback=<revision id>) for the
 * current revision, with an older revision that succeeded, ends the rollout RolledBack at once;
 * one that cannot be acted on is noted in the message and changes nothing.
 */
export function advanceRollout(input: RolloutInput): RolloutOutcome {
  const { revision, previous } = input;
  const request = readRollbackRequest(input.rollbackRequest, revision, previous?.lastSucceededRevision);
  const state = previous?.revision?.id === revision.id ? previous.rollout?.state : undefined;
  if (request.kind === 'requested' && state !== 'RolledBack') return requestedRollback(input, request.target);
  const outcome = advance(input);
  return request.kind === 'ignored'
    ? { ...outcome, message: `${outcome.message}; ${request.note}` }
    : outcome;
}

/** convoy.dev/rollback: every Cluster this revision updated back to `target`, where the rollout stands. */
function requestedRollback(input: RolloutInput, target: Revision): RolloutOutcome {
  const { revision, steps, previous } = input;
  const before = previous?.revision?.id === revision.id ? previous.rollout : undefined;
  const byName = before === undefined ? -1 : steps.findIndex((s) => s.name === before.stepName);
  const k = byName >= 0 ? byName : 0;
  const rb = rollbackWrites(input.members, target);
  const rolled = rb.writes.length + rb.pinned;
  const left =
    rb.notPossible.length > 0
      ? `; ${rb.notPossible.length} not rolled back (created by this rollout or not ready at that revision: ${names(rb.notPossible)})`
      : '';
  const message = `rollback requested (${FleetAnnotation.rollback}=${revision.id}): rolled back ${rolled} Clusters to revision ${target.id} (lastSucceededRevision)${left}`;
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

function advance(input: RolloutInput): RolloutOutcome {
  const { revision, steps, members, now, previous } = input;
  const nowText = toRfc3339(now);
  const sameRevision = previous?.revision?.id === revision.id;
  const before = sameRevision ? previous?.rollout : undefined;
  const finishedAt: (string | undefined)[] = steps.map((step) => {
    const prior = sameRevision ? previous?.steps?.find((s) => s.name === step.name) : undefined;
    return prior?.state === 'Succeeded' ? prior.finishedAt : undefined;
  });
  const events: EventIntent[] = [];
  const stepMembers = (k: number) => members.filter((m) => m.step === k);
  const last = steps.length - 1;

  const ended = endedRollout(input, before, finishedAt);
  if (ended !== undefined) return ended;

  // An active rollout: resume where status says, or start at the first step.
  const byName = before === undefined ? -1 : steps.findIndex((s) => s.name === before.stepName);
  let k = byName >= 0 ? byName : Math.min(before?.step ?? 0, last);
  let stepStartedAt =
    before !== undefined && steps[k]?.name === before.stepName ? before.stepStartedAt : undefined;
  let healthySince = stepStartedAt === undefined ? undefined : before?.healthySince;
  if (before === undefined)
    events.push(
      event(
        'Normal',
        'RolloutStarted',
        `rolling out revision ${revision.id} to ${members.length} Clusters in ${steps.length} steps`,
      ),
    );

  const rolloutAt = (state: RolloutStatus['state']): RolloutStatus => ({
    state,
    step: k,
    stepName: steps[k].name,
    ...(stepStartedAt === undefined ? {} : { stepStartedAt }),
    ...(healthySince === undefined ? {} : { healthySince }),
  });

  if (input.rollout.paused) return pausedOutcome(input, before, rolloutAt('Paused'), finishedAt, events);
  // Unpausing restarts the step's clock: the pause does not count against stepTimeout.
  if (before?.state === 'Paused' && stepStartedAt !== undefined) stepStartedAt = nowText;

  for (;;) {
    const step = steps[k];
    const sorted = sortMembers(stepMembers(k));
    const earlier = members.filter((m) => m.step < k);

    if (stepStartedAt === undefined) {
      if (step.approvalRequired && input.approval !== `${step.name}@${revision.id}`) {
        const waiting = rolloutAt('WaitingForApproval');
        const first = before?.state !== 'WaitingForApproval' || before.stepName !== step.name;
        return {
          rollout: waiting,
          stop: 'waitingForApproval',
          message: `step ${step.name} (${step.clusters.length} Clusters) needs approval: annotate the ReleaseSet convoy.dev/approve=${step.name}@${revision.id}`,
          writes: writesFor(earlier),
          succeeded: false,
          finishedAt,
          events: first
            ? [
                ...events,
                event(
                  'Normal',
                  'WaitingForApproval',
                  `step ${step.name} waits for convoy.dev/approve=${step.name}@${revision.id}`,
                ),
              ]
            : events,
        };
      }
      stepStartedAt = nowText;
      healthySince = undefined;
      events.push(
        event(
          'Normal',
          'StepStarted',
          `step ${step.name} started: ${step.clusters.length} Clusters, at most ${step.maxConcurrent} at once`,
        ),
      );
    }

    const started = Date.parse(stepStartedAt);
    const deadline = started + step.timeoutMs;
    const open = [...sorted.inFlight, ...sorted.pending];
    const pastDeadline = now.getTime() >= deadline && open.length > 0;
    if (sorted.failed.length > step.maxFailures || pastDeadline) {
      return fail({
        input,
        step,
        k,
        sorted,
        open,
        pastDeadline,
        rollout: rolloutAt,
        finishedAt,
        events,
        earlier,
      });
    }

    if (open.length === 0) {
      healthySince ??= nowText;
      const soakEnd = Date.parse(healthySince) + step.minHealthyMs;
      if (now.getTime() < soakEnd) {
        return {
          rollout: rolloutAt('Progressing'),
          stop: 'waitingForMinHealthyTime',
          message: `step ${step.name}: every Cluster is ready since ${healthySince}; soaking for minHealthyTime until ${toRfc3339(new Date(soakEnd))}`,
          writes: writesFor([...earlier, ...stepMembers(k)]),
          requeueAfterSeconds: Math.max(1, Math.ceil((soakEnd - now.getTime()) / 1000)),
          succeeded: false,
          finishedAt,
          events,
        };
      }
      finishedAt[k] = nowText;
      events.push(
        event(
          'Normal',
          'StepSucceeded',
          `step ${step.name} succeeded: ${sorted.ready.length} Clusters ready${sorted.failed.length > 0 ? `, ${sorted.failed.length} failed within maxFailures` : ''}`,
        ),
      );
      if (k === last) {
        events.push(event('Normal', 'RolloutSucceeded', succeededMessage(revision, members.length)));
        return {
          rollout: rolloutAt('Succeeded'),
          stop: 'succeeded',
          message: succeededMessage(revision, members.length),
          writes: writesFor(members),
          succeeded: true,
          finishedAt,
          events,
        };
      }
      k++;
      stepStartedAt = undefined;
      healthySince = undefined;
      continue;
    }

    healthySince = undefined;
    return batchOutcome({
      step,
      sorted,
      earlier,
      deadline,
      now,
      rollout: rolloutAt('Progressing'),
      finishedAt,
      events,
    });
  }
}

/** A rollout of this revision that already ended (Succeeded, Halted, RolledBack) stays as it ended; undefined: it is active. */
function endedRollout(
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

/** spec.rollout.paused: the rollout holds at its step; nothing is written or deleted. */
function pausedOutcome(
  input: RolloutInput,
  before: RolloutStatus | undefined,
  rollout: RolloutStatus,
  finishedAt: (string | undefined)[],
  events: EventIntent[],
): RolloutOutcome {
  const stepName = input.steps[rollout.step].name;
  return {
    rollout,
    stop: 'paused',
    message: `spec.rollout.paused is true: the rollout of revision ${input.revision.id} holds at step ${stepName}; nothing is written or deleted until it is unpaused`,
    writes: [],
    succeeded: false,
    finishedAt,
    events:
      before?.state === 'Paused'
        ? events
        : [...events, event('Normal', 'Paused', `rollout paused at step ${stepName}`)],
  };
}

/** The step goes on: the next batch of the step, at most maxConcurrent Clusters in flight, rechecked within BATCH_RECHECK_SECONDS. */
function batchOutcome(b: {
  step: StepPlan;
  sorted: Sorted;
  earlier: Member[];
  deadline: number;
  now: Date;
  rollout: RolloutStatus;
  finishedAt: (string | undefined)[];
  events: EventIntent[];
}): RolloutOutcome {
  const { step, sorted, earlier, deadline, now, finishedAt, events } = b;
  const slots = Math.max(0, step.maxConcurrent - sorted.inFlight.length);
  const batch = sorted.pending.slice(0, slots);
  const restores = [...earlier, ...sorted.inFlight, ...sorted.ready, ...sorted.failed];
  return {
    rollout: b.rollout,
    stop: 'waitingForBatchHealth',
    message:
      `step ${step.name}: ${sorted.ready.length} of ${step.clusters.length} Clusters ready, ${sorted.inFlight.length + batch.length} updating` +
      `${sorted.pending.length - batch.length > 0 ? `, ${sorted.pending.length - batch.length} waiting for a slot (maxConcurrent ${step.maxConcurrent})` : ''}` +
      `${sorted.failed.length > 0 ? `, ${sorted.failed.length} failed (maxFailures ${step.maxFailures})` : ''}; deadline ${toRfc3339(new Date(deadline))}`,
    writes: [...writesFor(batch), ...writesFor(restores)],
    requeueAfterSeconds: Math.max(
      1,
      Math.min(BATCH_RECHECK_SECONDS, Math.ceil((deadline - now.getTime()) / 1000)),
    ),
    succeeded: false,
    finishedAt,
    events,
  };
}

interface FailInput {
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

function fail(f: FailInput): RolloutOutcome {
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
    const rolled = rb.writes.length + rb.pinned;
    const left =
      rb.notPossible.length > 0
        ? `; ${rb.notPossible.length} not rolled back (created by this rollout or not ready at that revision: ${names(rb.notPossible)})`
        : '';
    const message = `${why}; rolled back ${rolled} Clusters to revision ${target.id} (lastSucceededRevision)${left}`;
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
