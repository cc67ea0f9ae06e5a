/**
 * One read of a message's Release per run, shared by the check that admits the message, the
 * Lease guard — which needs the loop's status mark before it takes the Lease
 * (domain/runtime/lease-close.ts) — and the record handler, which gets the same answer instead
 * of a second GET. The guard keeps the answer for the handler only when the take proves no run
 * of the loop came in between (taken from the mark that read showed, or created); otherwise the
 * handler reads again.
 *
 * A message is a hint, never an authority: whoever can send to a queue can name any
 * Release, uid and spec. So before anything else — the Lease included — a message's Release is
 * read on the live API (`admit`): one naming a Release that does not exist, or whose uid is not
 * the live one, is dropped with the reason logged; the relay's copy of a Release just added
 * (`message.release`) is only compared with the live one, never acted on. The one message not
 * read first is an observer's message whose hint the reconcile sealed (applied-hint.ts): the
 * reconcile built it, seconds ago, from its own live read.
 */
import { isPlainObject, jsonEqual } from '../../domain/render/kube-object.ts';
import { statusMark, type MarkedStatus } from '../../domain/runtime/lease-close.ts';
import { parseRelease, type Release } from '../../domain/api/objects.ts';
import { dropped, stop, type Outcome } from '../../domain/runtime/outcome.ts';
import type { Loop, QueueMessage } from '../../domain/runtime/queue-message.ts';
import type { ReleaseSource } from '../../adapters/kube/release-source.ts';
import { hintedRelease, hintProblem, type HintKey } from './applied-hint.ts';
import type { Logger } from '../../platform/logger.ts';
import type { RecordContext, RecordHandler } from './sqs-batch-handler.ts';

export interface LeaseMarks {
  /** The loop's mark as the message's Release carries it: from its sealed hint (drift, health) or the shared read; `fresh` reads again. */
  mark(message: QueueMessage, ctx: RecordContext, fresh: boolean): Promise<string | undefined>;
  /** The read may be older than the Lease's last run: the handler reads the Release again. */
  stale(message: QueueMessage): void;
  /**
   * Wraps the Lease-guarded handler: the message's Release is verified on the live API first
   * (see the header), so a message for a Release that does not exist, or for another uid, is
   * dropped before any request but that one read — no Lease, no render, no status.
   */
  admit?(guarded: RecordHandler): RecordHandler;
}

export interface SharedReadsOptions {
  /** The functions' hint key (clients.ts): an observer trusts a hint only under its seal; unset: no hint is used. */
  hintKey?: HintKey | undefined;
  now?: () => Date;
  /**
   * An observer's check of a message whose sealed hint already decides the run: an Outcome
   * when the run, computed from the hint alone, would change nothing — no status write, no Event, no message — which ends the message before the Lease: a run without effects
   * needs no exclusion, and a take and give-back would be its only requests. undefined: the run
   * goes on under the Lease as usual. Called only for a message whose hint is usable.
   */
  withoutLease?: ((message: QueueMessage, ctx: RecordContext) => Promise<Outcome | undefined>) | undefined;
}

export function sharedReleaseReads(
  source: ReleaseSource,
  loop: Loop,
  options: SharedReadsOptions = {},
): { releases: ReleaseSource; marks: LeaseMarks } {
  const { hintKey } = options;
  const now = options.now ?? (() => new Date());
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
      get: (namespace, name, message) =>
        message !== undefined && message.namespace === namespace && message.name === name
          ? read(message, false)
          : source.get(namespace, name),
    },
    marks: {
      async mark(message, ctx, fresh) {
        const hinted =
          loop === 'reconcile' || fresh
            ? undefined
            : hintedRelease(hintKey, message, ctx.receiveCount, now());
        const raw = hinted?.release ?? (await read(message, fresh));
        const status =
          isPlainObject(raw) && isPlainObject(raw['status']) ? (raw['status'] as MarkedStatus) : undefined;
        return statusMark(loop, status);
      },
      stale(message) {
        reads.delete(message);
      },
      admit(guarded) {
        return async (message, ctx) => {
          if (loop !== 'reconcile' && message.applied !== undefined) {
            const problem = hintProblem(hintKey, message, ctx.receiveCount, now());
            // Sealed by the reconcile from its own live read: the observer works on it, saving a read.
            if (problem === undefined)
              return (await options.withoutLease?.(message, ctx)) ?? guarded(message, ctx);
            ctx.logger.warn(
              'the hint the message carries is not used; the Release and the cluster are read instead',
              { hint: problem },
            );
          }
          const live = await read(message, false);
          const refusal = refusalOf(message, live);
          if (refusal !== undefined) return refusal;
          if (message.release !== undefined) compareCopy(message.release, live, ctx.logger);
          return guarded(message, ctx);
        };
      },
    },
  };
}

const metadataOf = (raw: unknown): Record<string, unknown> =>
  isPlainObject(raw) && isPlainObject(raw['metadata']) ? raw['metadata'] : {};
const text = (value: unknown): string | undefined =>
  typeof value === 'string' ? value : typeof value === 'number' ? String(value) : undefined;

/** The Outcome that ends a message whose Release is not the live one, or undefined: go on. */
export function refusalOf(message: QueueMessage, live: unknown): Outcome | undefined {
  const key = `${message.namespace}/${message.name}`;
  if (live === undefined)
    return dropped(
      `the message names Release ${key}, which does not exist (deleted since, or never created): nothing is done for it`,
    );
  const uid = text(metadataOf(live)['uid']);
  if (uid !== message.uid) {
    return dropped(
      `the message is for uid ${message.uid}, the live Release ${key} has uid ${uid ?? '?'} (deleted and created again since, or forged): nothing is done for it`,
    );
  }
  return undefined;
}

/** Logs when the copy a message carries is not the live Release (a stale or forged copy); the live one is used either way. */
function compareCopy(copy: Record<string, unknown>, live: unknown, logger: Logger): void {
  const fields = ['namespace', 'name', 'uid', 'generation', 'resourceVersion'] as const;
  const of = (raw: unknown) => Object.fromEntries(fields.map((f) => [f, text(metadataOf(raw)[f])]));
  const carried = of(copy);
  const actual = of(live);
  // The resourceVersion alone moves with any status write between the relay's send and this read.
  const differs: string[] = fields.filter((f) => f !== 'resourceVersion' && carried[f] !== actual[f]);
  if (!jsonEqual(isPlainObject(live) ? live['spec'] : undefined, copy['spec'])) differs.push('spec');
  if (differs.length === 0) return;
  logger.warn('the Release copy the message carries is not the live Release; the live Release is used', {
    differs,
    carried,
    live: actual,
  });
}

/** The Release of a message (through `releases`: the run's shared read), or the Outcome that ends the message without work. */
export async function loadRelease(
  releases: ReleaseSource,
  message: QueueMessage,
  ctx: RecordContext,
): Promise<Release | Outcome> {
  const raw = await releases.get(message.namespace, message.name, message);
  if (raw === undefined) return dropped('the Release no longer exists', { gone: true });
  const parsed = parseRelease(raw);
  if (!parsed.ok) {
    ctx.logger.error('the Release does not parse; was it written before the CRD schema?', {
      reason: parsed.error,
    });
    return stop();
  }
  if (message.uid !== '' && parsed.value.metadata.uid !== message.uid) {
    return dropped(
      `the message is for uid ${message.uid}, the Release now has uid ${parsed.value.metadata.uid ?? '?'}`,
      { gone: true },
    );
  }
  return parsed.value;
}
