/**
 * Writes Kubernetes Events (events.k8s.io/v1) about a Release, deduplicated
 * as series: the Event's name is derived from the Release, reason, action and
 * note, so a repeat — from any function container — finds the existing Event
 * and counts it in `series` instead of creating another one.
 *
 * Best effort: an Event that cannot be written must not fail the reconcile
 * that caused it; `record` resolves to the error instead of throwing, and the
 * caller logs it.
 */
import { createHash } from 'node:crypto';
import type { EventIntent } from '../../domain/status/release-events.ts';
import { createKubeClient, isKubeApiError, resourcePath } from './http.ts';
import type { KubeClientConfig } from './kubeconfig.ts';
import { microTime } from './lease.ts';

export interface EventSubject {
  /** The kind of convoy object the Event is about; default Release (the fleet function: ReleaseSet). */
  readonly kind?: 'Release' | 'ReleaseSet' | 'Notification' | undefined;
  readonly namespace: string;
  readonly name: string;
  readonly uid?: string | undefined;
  readonly resourceVersion?: string | undefined;
}

export interface EventRecorder {
  /** Writes the Events; resolves to the errors of those that could not be written. */
  record(subject: EventSubject, events: readonly EventIntent[]): Promise<Error[]>;
}

export interface EventRecorderOptions {
  /** reportingController, e.g. `convoy.dev/reconcile`. */
  readonly controller: string;
  /** reportingInstance, e.g. the function's name or the host. */
  readonly instance: string;
  readonly now?: () => Date;
}

interface StoredEvent {
  metadata?: { resourceVersion?: string };
  series?: { count?: number };
}

/** `<release>.<16 hex>`: the same Event for the same Release, reason, action and note. */
export function eventName(subject: EventSubject, event: EventIntent): string {
  const digest = createHash('sha256')
    .update(`${subject.uid ?? ''}\0${event.type}\0${event.reason}\0${event.action}\0${event.note}`)
    .digest('hex')
    .slice(0, 16);
  return `${subject.name.slice(0, 253 - 17)}.${digest}`;
}

export function createEventRecorder(config: KubeClientConfig, opts: EventRecorderOptions): EventRecorder {
  const client = createKubeClient(config, { timeoutMs: 10_000 });
  const now = opts.now ?? (() => new Date());
  const writeOne = async (subject: EventSubject, event: EventIntent): Promise<void> => {
    const name = eventName(subject, event);
    const path = resourcePath('events.k8s.io/v1', 'events', subject.namespace, name);
    const at = microTime(now());
    // Most Events are new (a new render, a reason change): create first, one request; a
    // repeat (409) is read and counted in its series.
    try {
      await client.create(resourcePath('events.k8s.io/v1', 'events', subject.namespace), {
        apiVersion: 'events.k8s.io/v1',
        kind: 'Event',
        metadata: { name, namespace: subject.namespace },
        eventTime: at,
        reportingController: opts.controller,
        reportingInstance: opts.instance.slice(0, 128),
        action: event.action,
        reason: event.reason,
        type: event.type,
        note: event.note,
        regarding: {
          apiVersion: 'convoy.dev/v1alpha1',
          kind: subject.kind ?? 'Release',
          namespace: subject.namespace,
          name: subject.name,
          ...(subject.uid !== undefined ? { uid: subject.uid } : {}),
          ...(subject.resourceVersion !== undefined ? { resourceVersion: subject.resourceVersion } : {}),
        },
      });
      return;
    } catch (error) {
      if (!isKubeApiError(error, 409)) throw error;
    }
    const existing = await client.get<StoredEvent>(path);
    const count = Math.max(2, (existing.series?.count ?? 1) + 1);
    await client.patch(path, { series: { count, lastObservedTime: at } }, { type: 'merge' });
  };
  return {
    async record(subject, events) {
      const errors: Error[] = [];
      for (const event of events) {
        try {
          await writeOne(subject, event);
        } catch (error) {
          errors.push(error instanceof Error ? error : new Error(String(error)));
        }
      }
      return errors;
    },
  };
}
