/**
 * The event a destination receives for one pending transition (domain/notify/event.ts): built
 * from the record alone, so a resend after a crash carries the same id and the same content.
 */
import type { PendingTransition } from '../api/notification.ts';
import { NOTIFICATION_SCHEMA, type NotificationEvent } from './event.ts';
import type { WatchedObject } from './records.ts';

export function eventOf(
  namespace: string,
  object: WatchedObject,
  pending: PendingTransition,
  dashboardUrl?: string,
): NotificationEvent {
  const render =
    pending.renderRef === undefined && pending.revision === undefined && pending.repository === undefined
      ? undefined
      : { ref: pending.renderRef, revision: pending.revision, repository: pending.repository };
  return {
    schema: NOTIFICATION_SCHEMA,
    id: `${object.uid}/${pending.sequence}`,
    transition: pending.transition,
    object: { kind: object.kind, namespace, name: object.name, uid: object.uid },
    cluster: pending.cluster,
    verdict: pending.verdict,
    previous: pending.previous,
    render,
    occurredAt: pending.occurredAt,
    // The dashboard's routes: #/r/<namespace>/<name> a Release, #/rs/<namespace>/<name> a ReleaseSet.
    dashboardUrl:
      dashboardUrl === undefined
        ? undefined
        : `${dashboardUrl.replace(/\/$/, '')}/dashboard#/${object.kind === 'Release' ? 'r' : 'rs'}/${namespace}/${object.name}`,
  };
}
