import { z } from 'zod';

/**
 * The body of every message on the reconcile, drift, health and fleet queues.
 * The relay writes it; the functions parse it. A body that fails this
 * schema is never worked on: it is left to reach the dead-letter queue.
 */

export const QUEUE_MESSAGE_VERSION = 1;

/** The three loops of a Release; code that works per Release iterates these. */
export const LOOPS = ['reconcile', 'drift', 'health'] as const;
export type Loop = (typeof LOOPS)[number];

/**
 * The ReleaseSet's loop: its message names the ReleaseSet (namespace, name, uid are
 * the set's), it goes to the fleet queue (CONVOY_FLEET_QUEUE_URL) and the fleet function.
 */
export const FLEET_LOOP = 'fleet';
export type FleetLoop = typeof FLEET_LOOP;

/**
 * The notify loop (docs/notifications.md): its message names a Release or a ReleaseSet (`kind`)
 * whose verdict may have changed; it goes to the notify queue (CONVOY_NOTIFY_QUEUE_URL) and the
 * notify function, so a slow or failing destination never delays another loop.
 */
export const NOTIFY_LOOP = 'notify';
export type NotifyLoop = typeof NOTIFY_LOOP;

/** The loops every install path deploys a queue and function for: the Release loops and the fleet loop. */
export const QUEUE_LOOPS = [...LOOPS, FLEET_LOOP] as const;
export type QueueLoop = (typeof QUEUE_LOOPS)[number];

/**
 * Every loop a queue message may name: QUEUE_LOOPS and the notify loop, whose queue and function
 * an installation adds where it runs them (convoy dev; the construct once it deploys them).
 */
export const MESSAGE_LOOPS = [...QUEUE_LOOPS, NOTIFY_LOOP] as const;
export type MessageLoop = (typeof MESSAGE_LOOPS)[number];

// Kubernetes object names: a namespace is a DNS-1123 label, a Release name a DNS-1123 subdomain.
const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

export const queueMessageSchema = z.object({
  v: z.literal(QUEUE_MESSAGE_VERSION),
  loop: z.enum(MESSAGE_LOOPS),
  namespace: z
    .string()
    .max(63)
    .regex(DNS_LABEL, { message: 'must be a Kubernetes namespace name (DNS-1123 label)' }),
  name: z
    .string()
    .max(253)
    .regex(DNS_SUBDOMAIN, { message: 'must be a Kubernetes object name (DNS-1123 subdomain)' }),
  uid: z.string().min(1).max(128),
  /** The kind of the object a notify message names; absent: Release (every other loop's messages name their loop's kind). */
  kind: z.enum(['Release', 'ReleaseSet']).optional(),
  /** Why the message was sent (a watch event, a timer, an API call); logged on every line. */
  cause: z.string().min(1).max(1024),
  sentAt: z.iso.datetime({ offset: true }),
  /**
   * The Release as the relay's watch last saw it, on its message for a Release just added.
   * Never acted on (a message is a hint, never an authority): the
   * reconcile reads the live Release before anything else and only compares this copy with it
   * (functions/runtime/release-reads.ts).
   */
  release: z.record(z.string(), z.unknown()).optional(),
  /**
   * Set by the functions on a message they send again as a new one (a wait for a busy Lease, a
   * recheck that costs no receive): the SQS message id of the message whose wait this one
   * continues, kept through every further resend. The Lease records a run's follow-up by that id
   * (functions/runtime/lease-guard.ts), so a recheck that had to wait is still the follow-up and
   * is never dropped as covered by the run that scheduled it. A hint like the rest: a forged one
   * can at most cause one more run of an object that exists.
   */
  followUpOf: z.string().min(1).max(128).optional(),
  /**
   * Sent by the reconcile to drift and health right after an apply: the Release
   * as it just wrote it, the render's objects (`objects`; a Secret's as metadata only) and the
   * objects as the apply answered them (`live`), so the first checks after an apply need no
   * reads of the cluster or the render store. Absent from the relay's messages; ignored on a
   * redelivery or when stale (functions/runtime/applied-hint.ts).
   */
  applied: z
    .object({
      renderRef: z.string().min(1).max(256),
      release: z.record(z.string(), z.unknown()),
      live: z.array(z.record(z.string(), z.unknown())),
      objects: z.array(z.record(z.string(), z.unknown())).optional(),
      /** When the reconcile sealed the hint (RFC 3339); covered by `mac`. */
      at: z.string().max(64).optional(),
      /**
       * HMAC-SHA256 of the rest of the hint with the functions' key: a hint without a
       * valid seal is ignored, as anyone who can send to the queue can write one.
       */
      mac: z.string().max(128).optional(),
    })
    .optional(),
});

export type QueueMessage = z.infer<typeof queueMessageSchema>;

export type ParseQueueMessageResult =
  { readonly ok: true; readonly message: QueueMessage } | { readonly ok: false; readonly error: string };

/** The id a message's follow-up is recorded under: the first message of its chain of resends. */
export function chainIdOf(message: Pick<QueueMessage, 'followUpOf'>, messageId: string): string {
  return message.followUpOf ?? messageId;
}

/** The body of `message` (received as `messageId`) sent again as a new message: it carries its chain's id. */
export function resentMessageBody(message: QueueMessage, messageId: string): string {
  return queueMessageBody({ ...message, followUpOf: chainIdOf(message, messageId) });
}

/** Parses and validates a message body. Never throws; the error names each bad field. */
export function parseQueueMessage(body: string): ParseQueueMessageResult {
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch {
    // The parser's message quotes the body; a malformed body is not echoed into logs.
    return { ok: false, error: `message body is not JSON (${body.length} characters)` };
  }
  const result = queueMessageSchema.safeParse(json);
  if (result.success) return { ok: true, message: result.data };
  const problems = result.error.issues.map((issue) => {
    const field = issue.path.length === 0 ? 'message body' : issue.path.map(String).join('.');
    return `${field}: ${issue.message}`;
  });
  return { ok: false, error: `invalid queue message: ${problems.join('; ')}` };
}

/**
 * The body the relay and the functions send; validates first, so a bad message fails at the
 * sender. The message as SQS carries it: JSON with every character outside printable ASCII written as a
 * `\uXXXX` escape. SQS refuses bodies with characters outside #x9 | #xA | #xD | #x20–#xD7FF |
 * #xE000–#xFFFD | #x10000–#x10FFFF (and the embedded SQS server refuses everything above #xFFFD),
 * while a Release or applied object carried in a message may hold any text a user wrote (emoji,
 * NUL in an annotation): escaped, every body is plain ASCII and parses back to the same value.
 */
export function queueMessageBody(message: QueueMessage): string {
  return asciiJson(queueMessageSchema.parse(message));
}

/** JSON.stringify, with every UTF-16 code unit outside 0x20–0x7E escaped (JSON.stringify already escapes those below 0x20). */
export function asciiJson(value: unknown): string {
  return JSON.stringify(value).replace(
    /[\u007f-\uffff]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}
