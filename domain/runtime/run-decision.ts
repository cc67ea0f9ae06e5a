/**
 * A record handler decides; the runtime commits (docs/decisions.md, "A run decides, the runtime
 * commits"). A RunDecision is what one run of a loop decided about its message, as data: the
 * status slice to apply, the effects that must come before that write and those that must follow
 * it, what to write instead when the API server refuses the slice, and the Outcome. One module
 * commits every loop's decisions (functions/runtime/run-commit.ts), in the order commitSteps
 * gives, which keeps the Lease's guarantees (lease-close.ts):
 *
 * 1. `before`: effects while the Lease is held and before the write — Events, and messages that
 *    carry the Release as the write will leave it (the reconcile's sealed hint to the observers).
 * 2. the status write. With nothing `after` it and an Outcome that leaves the Lease's record as it
 *    is (closesByStatus), it carries the run's mark and so closes the Lease: from that moment the
 *    next run may hold it, so no run takes the Lease between a write and this run's end.
 * 3. `after`: effects that need the status written (their receiver reads it) and must not be lost
 *    to a crash. The write then carries the mark after the run's, which closes nothing, and the
 *    Lease is given back explicitly once they ran (recording failures and the follow-up): a run
 *    that crashes in between leaves its Lease to expire and its message to come back.
 * 4. `report`: the run's log line, last.
 *
 * Pure: the unit tests check the order of a loop's effects around its write from the decision
 * alone (test/unit/runtime/effect-order.test.ts).
 */
import type { Release } from '../api/objects.ts';
import type { EventIntent } from '../status/release-events.ts';
import { markAfter } from './lease-close.ts';
import type { Outcome } from './outcome.ts';
import type { Loop, QueueMessage } from './queue-message.ts';

/** The object Events are about: the message's Release, or the fleet's ReleaseSet. */
export interface EffectSubject {
  readonly kind?: 'Release' | 'ReleaseSet' | undefined;
  readonly namespace: string;
  readonly name: string;
  readonly uid?: string | undefined;
  readonly resourceVersion?: string | undefined;
}

/** Something a run does besides its status write. The runtime performs it; the next issues add kinds here. */
export type RunEffect =
  /** Events about the run's object; one that cannot be written is logged, never fails the run. */
  | { readonly kind: 'events'; readonly subject: EffectSubject; readonly intents: readonly EventIntent[] }
  /** The Release sent to another loop's queue at once; `applied`: the sealed hint (it carries the Release as written). */
  | {
      readonly kind: 'notify';
      readonly loop: Loop;
      readonly release: Release;
      readonly cause: string;
      readonly applied?: QueueMessage['applied'] | undefined;
    };

/** Events about a Release (the subject the reconcile and drift loops write them on). */
export function releaseEvents(release: Release, intents: readonly EventIntent[]): RunEffect {
  return {
    kind: 'events',
    subject: {
      namespace: release.metadata.namespace ?? 'default',
      name: release.metadata.name,
      uid: release.metadata.uid,
    },
    intents,
  };
}

/** The Release sent to `loop`'s queue. */
export function notifyLoop(
  loop: Loop,
  release: Release,
  cause: string,
  applied?: QueueMessage['applied'],
): RunEffect {
  return applied === undefined
    ? { kind: 'notify', loop, release, cause }
    : { kind: 'notify', loop, release, cause, applied };
}

export interface StatusWrite<S> {
  /**
   * The slice as it carries `stamp`, the time the runtime chose for the write: the run's Lease
   * mark (lease-close.ts), or the mark after it. undefined: no mark (no Lease guard, or a loop
   * without marks) — the loop's own time stands.
   */
  slice(stamp: string | undefined): S;
  /** The Outcome when the write finds the object deleted (a `gone` drop); undefined: that error fails the run. */
  readonly ifGone?: Outcome | undefined;
}

export interface RefusedFallback<S> {
  /** What is written instead, for the log line: `the <loop> status was refused; <instead>`. */
  readonly instead: string;
  /**
   * The decision committed instead, given the refusal's message: its own write, effects, report
   * and Outcome. The refused decision's `before` effects have run; its `after` ones do not.
   */
  decide(refusal: string): RunDecision<S>;
}

export interface RunReport {
  readonly message: string;
  readonly fields?: Readonly<Record<string, unknown>> | undefined;
}

export interface RunDecision<S> {
  /** undefined: the run writes no status (its Lease is given back explicitly). */
  readonly write?: StatusWrite<S> | undefined;
  readonly before: readonly RunEffect[];
  readonly after: readonly RunEffect[];
  /** undefined: a refused write fails the run. */
  readonly onRefused?: RefusedFallback<S> | undefined;
  readonly outcome: Outcome;
  /** Fields every line the runtime logs about this decision carries (e.g. renderRef). */
  readonly logContext?: Readonly<Record<string, unknown>> | undefined;
  /** The line logged once the decision is committed; undefined: none. */
  readonly report?: RunReport | undefined;
}

/** What a record handler returns: a decision, or an Outcome alone (nothing to write or do: a drop, a stop). */
export type Decided<S> = Outcome | RunDecision<S>;

export function isRunDecision<S>(decided: Decided<S>): decided is RunDecision<S> {
  return !('kind' in decided);
}

/** The run's Lease as the commit sees it: the mark its status write closes the Lease with. */
export interface MarkedRun {
  readonly mark: string;
  /** Whether the write alone may end a run ending in `outcome`: nothing the Lease records has to change (lease-close.ts closesByStatus). */
  closes(outcome: Outcome): boolean;
}

/**
 * The stamp a decision's write carries: the run's mark when the write may be the run's last act
 * — no `after` effects, and an Outcome the Lease need not record — else the mark after it, which
 * closes nothing. undefined without a mark.
 */
export function stampOf<S>(decision: RunDecision<S>, run: MarkedRun | undefined): string | undefined {
  if (run === undefined) return undefined;
  return decision.after.length === 0 && run.closes(decision.outcome) ? run.mark : markAfter(run.mark);
}

export type CommitStep<S> =
  | { readonly step: 'effect'; readonly effect: RunEffect }
  | { readonly step: 'write'; readonly slice: S; readonly stamp: string | undefined };

/** The steps of a decision's commit, in order (functions/runtime/run-commit.ts performs exactly these). */
export function commitSteps<S>(decision: RunDecision<S>, run?: MarkedRun): CommitStep<S>[] {
  const effect = (e: RunEffect): CommitStep<S> => ({ step: 'effect', effect: e });
  const stamp = stampOf(decision, run);
  const write: CommitStep<S>[] =
    decision.write === undefined ? [] : [{ step: 'write', slice: decision.write.slice(stamp), stamp }];
  return [...decision.before.map(effect), ...write, ...decision.after.map(effect)];
}
