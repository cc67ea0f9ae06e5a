/**
 * The one place a run's decision becomes requests (domain/runtime/run-decision.ts): it chooses the
 * mark the status write carries, performs the write, falls back when the API server refuses it,
 * runs the effects around it in order and logs the run's line. Every loop's record handler only
 * reads and decides; the Lease guard (lease-guard.ts) hands the decision here with the run's Lease
 * and learns back what the status carries after the write, which is how it knows whether the write
 * closed the Lease or the Lease must be given back.
 */
import { StatusRefusedError, type StatusWriter } from '../../adapters/kube/status-writer.ts';
import { isNotFound } from '../../adapters/kube/management-reader.ts';
import type { EventRecorder } from '../../adapters/kube/events.ts';
import { statusMark } from '../../domain/runtime/lease-close.ts';
import type { Outcome } from '../../domain/runtime/outcome.ts';
import type { Loop, QueueLoop, QueueMessage } from '../../domain/runtime/queue-message.ts';
import {
  commitSteps,
  isRunDecision,
  type Decided,
  type MarkedRun,
  type RunDecision,
  type RunEffect,
} from '../../domain/runtime/run-decision.ts';
import type { AnySlice } from '../../domain/status/slices.ts';
import type { Logger } from '../../platform/logger.ts';
import type { Notifier } from './notifier.ts';
import type { RecordContext, RecordHandler } from './sqs-batch-handler.ts';

/** How one status write ended: a refusal (the CRD's schema, HTTP 422/400) and a deleted object are the decision's to handle. */
export type WriteResult =
  { readonly kind: 'written' } | { readonly kind: 'refused' | 'gone'; readonly error: Error };

/** What a loop's decisions are committed through. */
export interface CommitPorts<S> {
  /** Writes a status slice of the message's object. */
  write(message: QueueMessage, slice: S): Promise<WriteResult>;
  /** The mark the object's status carries once `slice` is written (lease-close.ts statusMark); undefined: none. */
  markOf(slice: S): string | undefined;
  /** Writes Events; undefined: none are written. */
  readonly events?: EventRecorder | undefined;
  /** Sends messages to the other loops; undefined: a decision that sends one fails. */
  readonly notify?: Notifier | undefined;
}

/** A record handler that reads and decides: the runtime commits what it returns. */
export type DecisionHandler<S> = (message: QueueMessage, context: RecordContext) => Promise<Decided<S>>;

/** A loop's run: its decisions and the ports they are committed through. */
export interface LoopRun<S> {
  readonly decide: DecisionHandler<S>;
  readonly commit: CommitPorts<S>;
}

/** The run's Lease, from the Lease guard: its mark, and the guard's ear for what the write left in status. */
export interface RunLease extends MarkedRun {
  /** A write carrying `stamp` is about to be sent (a write with the run's mark closes the Lease when it lands). */
  writing?(stamp: string | undefined): void;
  /** The write landed; the status carries `mark` now (undefined: no mark). */
  written(mark: string | undefined): void;
}

export interface RunToCommit<S> {
  readonly loop: QueueLoop;
  readonly message: QueueMessage;
  readonly logger: Logger;
  /** undefined: the decision may hold no write and no effect (a loop built without them). */
  readonly ports: CommitPorts<S> | undefined;
  /** The run's Lease when its status write closes it; undefined: no mark (the loop's own time is written). */
  readonly lease?: RunLease | undefined;
}

/** Commits what a record handler decided and returns the run's Outcome. Throws what the requests throw. */
export async function commitRun<S>(decided: Decided<S>, run: RunToCommit<S>): Promise<Outcome> {
  return isRunDecision(decided) ? commitDecision(decided, run, false) : decided;
}

async function commitDecision<S>(
  decision: RunDecision<S>,
  run: RunToCommit<S>,
  fallingBack: boolean,
): Promise<Outcome> {
  const log = decision.logContext === undefined ? run.logger : run.logger.child(decision.logContext);
  for (const step of commitSteps(decision, run.lease)) {
    const ports = portsOf(run);
    if (step.step === 'effect') {
      await runEffect(ports, step.effect, log);
      continue;
    }
    run.lease?.writing?.(step.stamp);
    const result = await ports.write(run.message, step.slice);
    if (result.kind === 'gone') {
      if (decision.write?.ifGone !== undefined) return decision.write.ifGone;
      throw result.error;
    }
    if (result.kind === 'refused') {
      const fallback = decision.onRefused;
      if (fallback === undefined || fallingBack) throw result.error;
      // convoy computed a status its own CRD refuses: say so in the loop's condition instead of retrying forever.
      log.error(`the ${run.loop} status was refused; ${fallback.instead}`, { error: result.error });
      return commitDecision(fallback.decide(result.error.message), run, true);
    }
    run.lease?.written(ports.markOf(step.slice));
  }
  if (decision.report !== undefined) log.info(decision.report.message, decision.report.fields);
  return decision.outcome;
}

function portsOf<S>(run: RunToCommit<S>): CommitPorts<S> {
  if (run.ports === undefined)
    throw new Error(
      `the ${run.loop} loop decided a status write or an effect, but its runtime was built without commit ports`,
    );
  return run.ports;
}

async function runEffect<S>(ports: CommitPorts<S>, effect: RunEffect, log: Logger): Promise<void> {
  switch (effect.kind) {
    case 'events': {
      if (ports.events === undefined || effect.intents.length === 0) return;
      const failed = await ports.events.record(effect.subject, effect.intents);
      for (const error of failed) {
        if (effect.subject.kind === 'ReleaseSet')
          log.warn('could not write an Event about the ReleaseSet', { error });
        else log.warn('an Event could not be written', { error: error.message });
      }
      return;
    }
    case 'notify': {
      if (ports.notify === undefined)
        throw new Error(
          `a run decided to send Release ${effect.release.metadata.namespace ?? ''}/${effect.release.metadata.name} to the ${effect.loop} loop, but its runtime has no queue to send with`,
        );
      await ports.notify(effect.loop, effect.release, effect.cause, effect.applied);
      return;
    }
  }
}

/** Commits a Release loop's decisions: its own field manager's slice on the Release's /status, Events about the Release, messages to the other loops. */
export function releaseCommitPorts(
  loop: Loop,
  deps: { statusWriter: StatusWriter; events?: EventRecorder | undefined; notify?: Notifier | undefined },
): CommitPorts<AnySlice> {
  return {
    async write(message, slice) {
      try {
        await deps.statusWriter.apply({ namespace: message.namespace, name: message.name }, slice);
        return { kind: 'written' };
      } catch (error) {
        if (isNotFound(error)) return { kind: 'gone', error: error as Error };
        if (error instanceof StatusRefusedError) return { kind: 'refused', error };
        throw error;
      }
    },
    markOf: (slice) => statusMark(loop, slice.slice),
    events: deps.events,
    notify: deps.notify,
  };
}

/**
 * A loop's run as a record handler without a Lease: it decides and commits at once, every write
 * with the loop's own time (no mark). What tests and benchmarks call; the functions put the Lease
 * guard between the two (loop-handler.ts).
 */
export function committing<S>(loop: QueueLoop, run: LoopRun<S>): RecordHandler {
  return async (message, ctx) =>
    commitRun(await run.decide(message, ctx), { loop, message, logger: ctx.logger, ports: run.commit });
}
