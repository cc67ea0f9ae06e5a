/**
 * The second half of a ReleaseSet reconcile: where the rollout of the current revision stands and
 * what to write next, from the previous status, the children as read and now. Everything it needs
 * to remember is in status.rollout (step, stepStartedAt, healthySince) or on the children
 * (convoy.dev/release-set-revision), so a restarted runtime resumes mid-step and mid-soak.
 *
 * In one step: approval first (before anything of the step is written), then the deadline and the
 * failure budget, then, when every Cluster of the step is ready, the soak (minHealthyTime) and the
 * next step; otherwise the next batch, at most maxConcurrent Clusters in flight. How a rollout ends
 * otherwise (a failed step, a rollback request, an earlier end kept) is rollout-ends.ts.
 */
import { toRfc3339 } from '../status/conditions.ts';
import type { EventIntent } from '../status/release-events.ts';
import type { Member } from './generate-fleet.ts';
import { readRollbackRequest } from './rollback-request.ts';
import { endedRollout, requestedRollback, stepFailed } from './rollout-ends.ts';
import { event, sortMembers, succeededMessage, writesFor, type Sorted } from './rollout-members.ts';
import type { RolloutInput, RolloutOutcome, RolloutStatus } from './rollout-outcome.ts';
import type { StepPlan } from './steps.ts';
import { BATCH_RECHECK_SECONDS } from './stops.ts';

export type { RolloutInput, RolloutOutcome, RolloutStatus } from './rollout-outcome.ts';

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

/** Where the active rollout stands: the step, when it started, since when every Cluster of it is ready. */
interface Cursor {
  k: number;
  stepStartedAt: string | undefined;
  healthySince: string | undefined;
}

/** An active rollout resumes where status says (by step name, then index), or starts at the first step. */
function resumeAt(input: RolloutInput, before: RolloutStatus | undefined, events: EventIntent[]): Cursor {
  const { revision, steps, members } = input;
  const byName = before === undefined ? -1 : steps.findIndex((s) => s.name === before.stepName);
  const k = byName >= 0 ? byName : Math.min(before?.step ?? 0, steps.length - 1);
  const stepStartedAt =
    before !== undefined && steps[k]?.name === before.stepName ? before.stepStartedAt : undefined;
  const healthySince = stepStartedAt === undefined ? undefined : before?.healthySince;
  if (before === undefined)
    events.push(
      event(
        'Normal',
        'RolloutStarted',
        `rolling out revision ${revision.id} to ${members.length} Clusters in ${steps.length} steps`,
      ),
    );
  return { k, stepStartedAt, healthySince };
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

  const ended = endedRollout(input, before, finishedAt);
  if (ended !== undefined) return ended;

  const events: EventIntent[] = [];
  const at = resumeAt(input, before, events);
  const rolloutAt = (state: RolloutStatus['state']): RolloutStatus => ({
    state,
    step: at.k,
    stepName: steps[at.k].name,
    ...(at.stepStartedAt === undefined ? {} : { stepStartedAt: at.stepStartedAt }),
    ...(at.healthySince === undefined ? {} : { healthySince: at.healthySince }),
  });

  if (input.rollout.paused) return pausedOutcome(input, before, rolloutAt('Paused'), finishedAt, events);
  // Unpausing restarts the step's clock: the pause does not count against stepTimeout.
  if (before?.state === 'Paused' && at.stepStartedAt !== undefined) at.stepStartedAt = nowText;

  for (;;) {
    const step = steps[at.k];
    const sorted = sortMembers(members.filter((m) => m.step === at.k));
    const earlier = members.filter((m) => m.step < at.k);
    const c: StepContext = { input, step, sorted, earlier, rollout: rolloutAt, finishedAt, events };

    if (at.stepStartedAt === undefined) {
      const waiting = approvalWait(c, before);
      if (waiting !== undefined) return waiting;
      at.stepStartedAt = nowText;
      at.healthySince = undefined;
      events.push(
        event(
          'Normal',
          'StepStarted',
          `step ${step.name} started: ${step.clusters.length} Clusters, at most ${step.maxConcurrent} at once`,
        ),
      );
    }

    const deadline = Date.parse(at.stepStartedAt) + step.timeoutMs;
    const open = [...sorted.inFlight, ...sorted.pending];
    const pastDeadline = now.getTime() >= deadline && open.length > 0;
    if (sorted.failed.length > step.maxFailures || pastDeadline) {
      return stepFailed({ ...c, k: at.k, open, pastDeadline });
    }

    if (open.length === 0) {
      at.healthySince ??= nowText;
      const done = soakedOrSucceeded(c, at.k, at.healthySince);
      if (done !== undefined) return done;
      at.k++;
      at.stepStartedAt = undefined;
      at.healthySince = undefined;
      continue;
    }

    at.healthySince = undefined;
    return batchOutcome({ ...c, deadline, now, rollout: rolloutAt('Progressing') });
  }
}

/** One step of an active rollout, as the steps of `advance` read it. */
interface StepContext {
  input: RolloutInput;
  step: StepPlan;
  sorted: Sorted;
  /** The Clusters of the steps before this one (kept at the revision). */
  earlier: Member[];
  rollout: (state: RolloutStatus['state']) => RolloutStatus;
  finishedAt: (string | undefined)[];
  events: EventIntent[];
}

/** A step that needs approval and has none for this revision waits before anything of it is written; undefined: it may start. */
function approvalWait(c: StepContext, before: RolloutStatus | undefined): RolloutOutcome | undefined {
  const { input, step, events } = c;
  const { revision } = input;
  if (!step.approvalRequired || input.approval === `${step.name}@${revision.id}`) return undefined;
  const first = before?.state !== 'WaitingForApproval' || before.stepName !== step.name;
  return {
    rollout: c.rollout('WaitingForApproval'),
    stop: 'waitingForApproval',
    message: `step ${step.name} (${step.clusters.length} Clusters) needs approval: annotate the ReleaseSet convoy.dev/approve=${step.name}@${revision.id}`,
    writes: writesFor(c.earlier),
    succeeded: false,
    finishedAt: c.finishedAt,
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

/**
 * Every Cluster of the step is ready since `healthySince`: soaking until minHealthyTime has
 * passed, then the step succeeded — and with the last step, the rollout. undefined: the next step begins.
 */
function soakedOrSucceeded(c: StepContext, k: number, healthySince: string): RolloutOutcome | undefined {
  const { input, step, sorted, finishedAt, events } = c;
  const { revision, members, now } = input;
  const nowText = toRfc3339(now);
  const soakEnd = Date.parse(healthySince) + step.minHealthyMs;
  if (now.getTime() < soakEnd) {
    return {
      rollout: c.rollout('Progressing'),
      stop: 'waitingForMinHealthyTime',
      message: `step ${step.name}: every Cluster is ready since ${healthySince}; soaking for minHealthyTime until ${toRfc3339(new Date(soakEnd))}`,
      writes: writesFor([...c.earlier, ...members.filter((m) => m.step === k)]),
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
  if (k < input.steps.length - 1) return undefined;
  events.push(event('Normal', 'RolloutSucceeded', succeededMessage(revision, members.length)));
  return {
    rollout: c.rollout('Succeeded'),
    stop: 'succeeded',
    message: succeededMessage(revision, members.length),
    writes: writesFor(members),
    succeeded: true,
    finishedAt,
    events,
  };
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
