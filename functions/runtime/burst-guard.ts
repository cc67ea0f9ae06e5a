import { isDependencyChange } from '../../adapters/reconcile/ttl-cache.ts';
import type { QueueBacklog } from '../../adapters/sqs/queue-backlog.ts';
import {
  burstWaitMs,
  DEFAULT_BURST_POLICY,
  yieldsInBurst,
  type BurstPolicy,
} from '../../domain/runtime/burst-yield.ts';
import { requeueAfter, waitAsNewMessage } from '../../domain/runtime/outcome.ts';
import type { Loop } from '../../domain/runtime/queue-message.ts';
import { HINT_MAX_AGE_MS } from './applied-hint.ts';
import type { RecordHandler } from './sqs-batch-handler.ts';

/** A hinted message comes back this long before its hint expires (SQS delays are whole seconds). */
const HINT_MARGIN_MS = 5_000;

export interface BurstGuardOptions {
  readonly loop: Loop;
  /** The reconcile queue's messages waiting for a function (adapters/sqs/queue-backlog.ts). */
  readonly reconcileBacklog: QueueBacklog;
  readonly policy?: BurstPolicy;
  readonly now?: () => Date;
}

/**
 * Wraps a loop's handler so that, during a reconcile burst, what may wait does, before any request
 * to Kubernetes (domain/runtime/burst-yield.ts): drift and health wait as a new delayed message (no
 * receive spent), a reconcile recheck or retry as a redelivery (it stays the same message, so its
 * next delivery is still a recheck; its waits are at least 10 s, so it spends no more receives than
 * its 10-s rechecks would). The backlog is read only for a message that could wait.
 */
export function withBurstYield(handler: RecordHandler, options: BurstGuardOptions): RecordHandler {
  const policy = options.policy ?? DEFAULT_BURST_POLICY;
  const now = options.now ?? (() => new Date());
  return async (message, ctx) => {
    if (
      !yieldsInBurst({
        loop: options.loop,
        receiveCount: ctx.receiveCount,
        announcesChange: announcesChange(message.cause),
      })
    )
      return handler(message, ctx);
    const backlog = await options.reconcileBacklog();
    const waitMs = burstWaitMs(
      {
        loop: options.loop,
        backlog,
        receiveCount: ctx.receiveCount,
        announcesChange: announcesChange(message.cause),
        sentAt: new Date(message.sentAt),
        now: now(),
        spreadKey: message.uid === '' ? `${message.namespace}/${message.name}` : message.uid,
      },
      // The reconcile's sealed answers are usable for HINT_MAX_AGE_MS: a hinted message waits no
      // longer (domain/runtime/burst-yield.ts), so waiting never costs the observer its reads.
      message.applied === undefined
        ? policy
        : { ...policy, maxAgeMs: Math.min(policy.maxAgeMs, HINT_MAX_AGE_MS - HINT_MARGIN_MS) },
    );
    if (waitMs === undefined) return handler(message, ctx);
    const reason = `a reconcile burst: ${backlog ?? '?'} reconcile messages wait for a function; ${options.loop === 'reconcile' ? 'this recheck' : `this ${options.loop} check`} waits ${Math.round(waitMs / 1000)} s`;
    return options.loop === 'reconcile' ? requeueAfter(waitMs, reason) : waitAsNewMessage(waitMs, reason);
  };
}

/** A reconcile message that announces a change (a push, a changed dependency): it is the burst's own work, never held back. */
function announcesChange(cause: string): boolean {
  return cause.startsWith('git push ') || isDependencyChange(cause);
}
