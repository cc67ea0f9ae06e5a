import { randomUUID } from 'node:crypto';
import { busyDelayMs, isSuperseded, type LeasePort } from '../../domain/runtime/lease.ts';
import { dropped, requeueAfter, type Outcome } from '../../domain/runtime/outcome.ts';
import type { Loop } from '../../domain/runtime/queue-message.ts';
import type { RecordHandler } from './sqs-batch-handler.ts';

export interface LeaseGuardOptions {
  loop: Loop;
  leases: LeasePort;
  /** Function timeout + margin: a crashed holder's Lease expires after this. */
  durationSeconds: number;
  random?: () => number;
  now?: () => Date;
}

/**
 * Wraps a record handler so that one run per Release and loop happens at a
 * time, and duplicate chains collapse: a busy Lease requeues the record after
 * 1–3 s; a redelivered record superseded by a newer follow-up is dropped.
 */
export function withLease(handler: RecordHandler, options: LeaseGuardOptions): RecordHandler {
  const random = options.random ?? Math.random;
  const now = options.now ?? (() => new Date());
  return async (message, ctx) => {
    const holder = `${options.loop}-${randomUUID()}`;
    const taken = await options.leases.acquire(options.loop, message.uid, holder, options.durationSeconds);
    if (taken.kind === 'busy') return requeueAfter(busyDelayMs(random), `lease held by ${taken.holder}`);
    const lease = taken.lease;
    let outcome: Outcome | undefined;
    try {
      if (isSuperseded(lease, ctx.messageId, ctx.receiveCount)) {
        outcome = dropped(`superseded by follow-up ${lease.followUp?.messageId ?? ''}`);
        return outcome;
      }
      outcome = await handler(message, ctx);
      return outcome;
    } finally {
      const followUp =
        outcome === undefined || outcome.kind === 'requeueAfter' || outcome.kind === 'retry'
          ? {
              messageId: ctx.messageId,
              ...(outcome?.kind === 'requeueAfter' ? { dueAt: new Date(now().getTime() + outcome.delayMs).toISOString() } : {}),
            }
          : outcome.kind === 'dropped'
            ? lease.followUp
            : undefined;
      await options.leases.release(lease, followUp);
    }
  };
}
