/**
 * One read of a message's Release per run, shared by the Lease guard — which needs the loop's
 * status mark before it takes the Lease (domain/runtime/lease-close.ts) — and the record
 * handler, which gets the same answer instead of a second GET. The guard keeps the answer for
 * the handler only when the take proves no run of the loop came in between (taken from the mark
 * that read showed, or created); otherwise the handler reads again.
 */
import { isPlainObject } from '../../domain/render/kube-object.ts';
import { statusMark, type MarkedStatus } from '../../domain/runtime/lease-close.ts';
import type { Loop, QueueMessage } from '../../domain/runtime/queue-message.ts';
import type { ReleaseSource } from '../reconcile/reconcile-record.ts';
import { hintedRelease } from './applied-hint.ts';
import type { RecordContext } from './sqs-batch-handler.ts';

export interface LeaseMarks {
  /** The loop's mark as the message's Release carries it: from its hint (drift, health) or the shared read; `fresh` reads again. */
  mark(message: QueueMessage, ctx: RecordContext, fresh: boolean): Promise<string | undefined>;
  /** The read may be older than the Lease's last run: the handler reads the Release again. */
  stale(message: QueueMessage): void;
}

export function sharedReleaseReads(source: ReleaseSource, loop: Loop, now: () => Date = () => new Date()): { releases: ReleaseSource; marks: LeaseMarks } {
  const reads = new WeakMap<QueueMessage, Promise<unknown>>();
  const read = (message: QueueMessage, fresh: boolean): Promise<unknown> => {
    const known = reads.get(message);
    if (known !== undefined && !fresh) return known;
    const reading = source.get(message.namespace, message.name);
    reads.set(message, reading);
    // A failed read is not kept: the handler (or a retry) asks again.
    reading.catch(() => reads.delete(message));
    return reading;
  };
  return {
    releases: {
      get: (namespace, name, message) => (message !== undefined && message.namespace === namespace && message.name === name ? read(message, false) : source.get(namespace, name)),
    },
    marks: {
      async mark(message, ctx, fresh) {
        // The relay's copy of a Release just added: kept for the handler only if the take creates the Lease.
        if (loop === 'reconcile' && !fresh && ctx.receiveCount === 1 && message.release !== undefined && !reads.has(message)) {
          reads.set(message, Promise.resolve(message.release));
        }
        const hinted = loop === 'reconcile' || fresh ? undefined : hintedRelease(message, ctx.receiveCount, now());
        const raw = hinted?.release ?? (await read(message, fresh));
        const status = isPlainObject(raw) && isPlainObject(raw['status']) ? (raw['status'] as MarkedStatus) : undefined;
        return statusMark(loop, status);
      },
      stale(message) {
        reads.delete(message);
      },
    },
  };
}
