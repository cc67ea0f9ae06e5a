import { z } from 'zod';
import { TRANSITIONS } from '../notify/event.ts';
import { celRules, conditionsList, exactlyOneOf, localObjectReference, objectName } from './common.ts';
import { GROUP_VERSION } from './group-version.ts';
import { describeZodError, objectMetaSchema, type ParseResult } from './objects.ts';
import { clusterSelectorSchema } from './release-set.ts';

/**
 * A Notification (docs/notifications.md): which Releases and ReleaseSets of its namespace it
 * watches (`spec.for`), which verdict transitions it tells (`spec.transitions`) and to whom (`spec.to`).
 * Its status keeps, per watched object, the last state seen and what each destination was sent:
 * that record is what makes a delivery exactly once across crashes, duplicates and restarts.
 */

/** Objects one Notification may name in spec.for, destinations in spec.to: bounded so admission and a run stay cheap. */
export const MAX_NOTIFICATION_TARGETS = 16;
export const MAX_NOTIFICATION_DESTINATIONS = 8;
/** Objects whose state a Notification's status keeps (the most recently changed; docs/notifications.md). */
export const MAX_NOTIFIED_OBJECTS = 100;
/** Transitions of one object still owed to a destination; an older one is given up (counted) when a newer would pass this. */
export const MAX_PENDING_TRANSITIONS = 5;
/** Characters of a verdict message kept in a pending transition. */
export const MAX_NOTIFIED_MESSAGE = 256;

const secretRef = localObjectReference(
  'The Secret, in the namespace of the Notification, holding the credentials.',
);

const forSchema = z
  .object({
    kind: z.enum(['Release', 'ReleaseSet']).describe('The kind of the objects.'),
    name: objectName('One object of that kind, by name.').optional(),
    selector: clusterSelectorSchema
      .describe('The objects of that kind whose labels match; {} selects all of them.')
      .optional(),
  })
  .meta(celRules(exactlyOneOf(['name', 'selector'])))
  .describe('Which objects of the namespace the Notification watches.');

const destinationSchema = z
  .object({
    eventBridge: z
      .object({
        busName: z
          .string()
          .min(1)
          .max(256)
          .optional()
          .describe("The event bus; default the installation's (CONVOY_NOTIFY_EVENT_BUS)."),
      })
      .optional()
      .describe('Amazon EventBridge PutEvents, one entry per transition (detail-type = the transition).'),
    webhook: z
      .object({ secretRef })
      .optional()
      .describe('A JSON POST signed with HMAC-SHA256. Secret keys: url, and hmacKey (optional).'),
    slack: z
      .object({ secretRef })
      .optional()
      .describe('A Slack incoming webhook (Block Kit). Secret key: url.'),
    commitStatus: z
      .object({
        provider: z.enum(['github', 'gitlab']).describe('The Git forge.'),
        secretRef,
        apiUrl: z
          .string()
          .max(512)
          .regex(/^https?:\/\//, { message: 'must be an http(s) URL' })
          .optional()
          .describe('API base; default https://api.github.com or https://gitlab.com/api/v4.'),
        repository: z
          .string()
          .min(1)
          .max(256)
          .optional()
          .describe("owner/repo (GitHub) or the project's path or id (GitLab); default from the source URL."),
      })
      .optional()
      .describe('A commit status on the commit the render came from. Secret key: token.'),
  })
  .meta(celRules(exactlyOneOf(['eventBridge', 'webhook', 'slack', 'commitStatus'])))
  .describe('One destination: exactly one of eventBridge, webhook, slack, commitStatus.');

export type NotificationDestination = z.infer<typeof destinationSchema>;

export const notificationSpecSchema = z
  .object({
    for: z
      .array(forSchema)
      .min(1)
      .max(MAX_NOTIFICATION_TARGETS)
      .describe('The objects watched: by name or by label selector.'),
    transitions: z
      .array(z.enum(TRANSITIONS))
      .min(1)
      .max(TRANSITIONS.length)
      .describe('The transitions to tell; the others are recorded but not sent.'),
    to: z
      .array(destinationSchema)
      .min(1)
      .max(MAX_NOTIFICATION_DESTINATIONS)
      .describe('Where every transition goes; each destination is delivered to, and recorded, on its own.'),
    suspend: z.boolean().optional().describe('true: nothing is sent; transitions are still recorded.'),
  })
  .describe('What to tell, about which objects, to whom.');

export type NotificationSpec = z.infer<typeof notificationSpecSchema>;

const timestamp = (description: string) => z.iso.datetime({ offset: true }).describe(description);

/** One transition still owed to at least one destination. */
const pendingSchema = z.object({
  sequence: z.number().int().min(1).describe('The transition number; the event id is <uid>/<sequence>.'),
  transition: z.enum(TRANSITIONS),
  verdict: z.object({
    kind: z.string().max(32),
    signal: z.string().max(64).optional(),
    reason: z.string().max(256).optional(),
    message: z.string().max(MAX_NOTIFIED_MESSAGE).optional(),
  }),
  previous: z.object({ kind: z.string().max(32), reason: z.string().max(256).optional() }).optional(),
  renderRef: z.string().max(256).optional(),
  revision: z.string().max(256).optional(),
  repository: z.string().max(1024).optional(),
  cluster: z.string().max(253).optional(),
  occurredAt: timestamp('When the transition was seen.'),
});

const deliverySchema = z.object({
  to: z.number().int().min(0).max(MAX_NOTIFICATION_DESTINATIONS).describe('The index in spec.to.'),
  type: z.string().max(32).describe('The destination type, for readers.'),
  sentSequence: z
    .number()
    .int()
    .min(0)
    .describe('The last sequence delivered (or given up): later ones are owed.'),
  attempts: z.number().int().min(0).describe('Attempts at the next owed sequence that did not deliver it.'),
  firstFailedAt: timestamp('When the next owed sequence first failed.').optional(),
  lastError: z.string().max(1024).optional().describe('Why the last attempt failed; never Secret data.'),
  gaveUp: z.number().int().min(0).optional().describe('Transitions given up for this destination.'),
  claimedUntil: timestamp(
    'A run is delivering to this destination until then; another run leaves it alone (a crashed run expires).',
  ).optional(),
});

const objectRecordSchema = z.object({
  kind: z.enum(['Release', 'ReleaseSet']),
  name: z.string().max(253),
  uid: z.string().max(128),
  state: z.string().max(32).describe('The notify state last recorded: ready, wait, failure or suspended.'),
  failing: z.boolean().optional().describe('A failure was recorded since the last ready.'),
  sequence: z.number().int().min(0).describe('The last transition number of the object.'),
  changedAt: timestamp('When the state was last recorded as changed.'),
  pending: z.array(pendingSchema).max(MAX_PENDING_TRANSITIONS).optional(),
  deliveries: z.array(deliverySchema).max(MAX_NOTIFICATION_DESTINATIONS).optional(),
});

export type NotifiedObject = z.infer<typeof objectRecordSchema>;
export type PendingTransition = z.infer<typeof pendingSchema>;
export type DeliveryRecord = z.infer<typeof deliverySchema>;

export const notificationStatusSchema = z
  .object({
    observedGeneration: z.number().int().min(0).optional(),
    objects: z
      .array(objectRecordSchema)
      .max(MAX_NOTIFIED_OBJECTS)
      .optional()
      .describe(
        'Per watched object, the last state and what each destination was sent; the most recent first.',
      ),
    conditions: conditionsList.optional(),
  })
  .describe('Written by the field manager convoy-notify only.');

export type NotificationStatus = z.infer<typeof notificationStatusSchema>;

export const notificationSchema = z.object({
  apiVersion: z.literal(GROUP_VERSION),
  kind: z.literal('Notification'),
  metadata: objectMetaSchema,
  spec: notificationSpecSchema,
  status: notificationStatusSchema.optional(),
});

export type Notification = z.infer<typeof notificationSchema>;

/** Parses a Notification read from the API server, naming the field on failure. */
export function parseNotification(raw: unknown): ParseResult<Notification> {
  const parsed = notificationSchema.safeParse(raw);
  return parsed.success
    ? { ok: true, value: parsed.data }
    : { ok: false, error: describeZodError(parsed.error) };
}
