import type { RetryBackoffPolicy } from './backoff.ts';

/**
 * What a control loop decided about one message. The runtime maps it to a
 * queue action in exactly one place (adapters/sqs/outcome-actions.ts); loops
 * never talk to the queue themselves.
 */
export type Outcome =
  /** The work is finished; the message is acknowledged. */
  | { readonly kind: 'done' }
  /** Not failed, just not finished: look again after delayMs (a Progressing recheck, a wave or hook wait). */
  | {
      readonly kind: 'requeueAfter';
      readonly delayMs: number;
      readonly reason: string;
      /**
       * Wait as a NEW delayed message (the received one is acknowledged), so the wait
       * costs no receive: a message waiting for a busy Lease must never reach the DLQ.
       */
      readonly asNewMessage?: true;
    }
  /**
   * A transient failure: try again after a backoff that grows with the
   * attempt. `policy` is the Release's spec.syncPolicy.retryBackoff when the
   * loop has read it; without it the runtime's default applies.
   */
  | {
      readonly kind: 'retry';
      readonly error: Error;
      readonly policy?: RetryBackoffPolicy;
      /** The attempt the backoff is for when it is more than the receive count (failures that survived interval ticks). */
      readonly attempt?: number;
    }
  /** A terminal failure or a deliberate halt: acknowledged; the next run comes from the interval timer or a change. */
  | { readonly kind: 'stop' }
  /** A superseded or invalid message: acknowledged without doing any work. `gone`: the Release no longer exists. */
  | { readonly kind: 'dropped'; readonly reason: string; readonly gone?: true };

export type OutcomeKind = Outcome['kind'];

export function done(): Outcome {
  return { kind: 'done' };
}

/** @throws RangeError when delayMs is negative or not a finite number — a bug in the calling loop. */
export function requeueAfter(delayMs: number, reason: string): Outcome {
  if (!Number.isFinite(delayMs) || delayMs < 0) {
    throw new RangeError(
      `requeueAfter: delayMs must be a finite number >= 0, got ${delayMs} (reason: ${reason})`,
    );
  }
  return { kind: 'requeueAfter', delayMs, reason };
}

export function retry(error: Error, policy?: RetryBackoffPolicy): Outcome {
  return policy === undefined ? { kind: 'retry', error } : { kind: 'retry', error, policy };
}

export function stop(): Outcome {
  return { kind: 'stop' };
}

export function dropped(reason: string, options: { gone?: boolean } = {}): Outcome {
  return options.gone === true ? { kind: 'dropped', reason, gone: true } : { kind: 'dropped', reason };
}

/** Look again after delayMs as a new message (see requeueAfter's asNewMessage). */
export function waitAsNewMessage(delayMs: number, reason: string): Outcome {
  const outcome = requeueAfter(delayMs, reason);
  return { ...(outcome as Extract<Outcome, { kind: 'requeueAfter' }>), asNewMessage: true };
}
