/**
 * The "notify state" of a watched object and the transition between two of them
 * (docs/notifications.md, "Transitions"). Pure: the relay computes the state to decide whether a
 * Notification's record of an object is behind, the notify loop to decide what to record and send.
 *
 * A Release's state is the kind of its one combined verdict (domain/status/verdict.ts) at its
 * current render: ready, wait, failure or suspended. Nothing finer: a failure whose reason
 * changes is still the same failure, so a Release that keeps failing for new reasons does not
 * repeat Failed.
 */
import type { Release } from '../api/objects.ts';
import type { Condition } from '../api/common.ts';
import { MAX_NOTIFIED_MESSAGE } from '../api/notification.ts';
import { combinedVerdict } from '../status/verdict.ts';
import type { Transition } from './event.ts';

export type NotifyKind = 'ready' | 'wait' | 'failure' | 'suspended';

export const NOTIFY_KINDS: readonly NotifyKind[] = ['ready', 'wait', 'failure', 'suspended'];

/** An object's state as the notify loop sees it, with what an event tells about it. */
export interface NotifyState {
  readonly kind: NotifyKind;
  readonly signal?: string | undefined;
  readonly reason?: string | undefined;
  readonly message?: string | undefined;
  readonly renderRef?: string | undefined;
  readonly revision?: string | undefined;
  readonly repository?: string | undefined;
  readonly cluster?: string | undefined;
}

/** What the record of an object keeps between two looks (NotifiedObject's state and failing). */
export interface RecordedState {
  readonly kind: NotifyKind;
  /** A failure was seen since the last ready: the next ready is Recovered, not Ready. */
  readonly failing: boolean;
}

const SIGNAL_CONDITION: Readonly<Record<string, string>> = {
  Applied: 'Applied',
  NewRender: 'Applied',
  InSync: 'InSync',
  Healthy: 'Healthy',
  RolloutSucceeded: 'RolloutSucceeded',
};

/** The notify state of a Release: its combined verdict's kind, signal and reason, and the render it is about. */
export function releaseNotifyState(release: Release): NotifyState {
  const verdict = combinedVerdict(release);
  const status = release.status;
  const attempt = status?.lastAttempted;
  const git = attempt?.resolvedSource?.git;
  const where = {
    renderRef: attempt?.renderRef,
    revision: git?.commit ?? attempt?.resolvedSource?.oci?.digest ?? attempt?.resolvedSource?.helm?.version,
    repository: git?.url,
    cluster: release.spec.cluster?.name,
  };
  const message = verdict.message.slice(0, MAX_NOTIFIED_MESSAGE);
  if (verdict.ready) return { kind: 'ready', message, ...where };
  const conditionType = SIGNAL_CONDITION[verdict.signal];
  const condition: Condition | undefined =
    conditionType === undefined
      ? undefined
      : status?.conditions?.find((c: Condition) => c.type === conditionType);
  return {
    kind: verdict.kind === 'suspended' ? 'suspended' : verdict.kind,
    signal: verdict.signal,
    reason: condition?.reason ?? status?.rollout?.state,
    message,
    ...where,
  };
}

/**
 * The transition from what the record holds to `next`, or undefined: none to tell. At most one
 * per change (the table in docs/notifications.md):
 *
 * | from \ to           | ready     | wait     | failure | suspended |
 * |---------------------|-----------|----------|---------|-----------|
 * | (no record)         | Ready     | —        | Failed  | Suspended |
 * | ready               | —         | NotReady | Failed  | Suspended |
 * | wait, after ready   | Ready     | —        | Failed  | Suspended |
 * | wait, after failure | Recovered | —        | Failed  | Suspended |
 * | failure             | Recovered | —        | —       | Suspended |
 * | suspended           | Resumed   | Resumed  | Resumed | —         |
 *
 * "After failure": a failure was recorded since the last ready (`failing`), so a fix that
 * passes through a new render's wait still reads as Recovered. No record: the object was never
 * seen (new, or its record was evicted: MAX_NOTIFIED_OBJECTS); its wait is a start, not a change.
 */
export function transitionOf(previous: RecordedState | undefined, next: NotifyKind): Transition | undefined {
  if (previous?.kind === next) return undefined;
  if (previous?.kind === 'suspended') return 'Resumed';
  switch (next) {
    case 'suspended':
      return 'Suspended';
    case 'failure':
      return 'Failed';
    case 'ready':
      return previous?.failing === true ? 'Recovered' : 'Ready';
    case 'wait':
      return previous?.kind === 'ready' ? 'NotReady' : undefined;
  }
}

/** The record after `next` was seen: `failing` holds from a failure until the next ready. */
export function recordedAfter(previous: RecordedState | undefined, next: NotifyKind): RecordedState {
  if (next === 'ready') return { kind: next, failing: false };
  if (next === 'failure') return { kind: next, failing: true };
  return { kind: next, failing: previous?.failing ?? false };
}

export function isNotifyKind(value: string): value is NotifyKind {
  return (NOTIFY_KINDS as readonly string[]).includes(value);
}
