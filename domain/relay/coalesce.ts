/**
 * Coalescing of sends per (loop, Release). A function reads the Release
 * when it runs, so one message after the last event does all the work that
 * many would: a burst of events becomes one message.
 *
 * The rule: the first event for a (loop, key) opens a window of `windowMs`;
 * events within it only raise the count (the first cause is kept). A key is
 * then not sent again within `minSpacingMs` of its last send: events in
 * that time wait and go out together when it ends. So every event is
 * followed by a send no earlier than the event, and a key that changes all
 * the time is sent about once per `minSpacingMs`.
 *
 * A loop may have a rule of its own: the fleet loop's window is longer (FLEET_COALESCE_RULE), as
 * one ReleaseSet hears of every change of each of its children.
 *
 * Time is passed in (milliseconds); the buffer does no I/O.
 */
import type { MessageLoop } from '../runtime/queue-message.ts';

export interface ReleaseKey {
  readonly namespace: string;
  readonly name: string;
  readonly uid: string;
}

export interface CoalesceRule {
  readonly windowMs: number;
  readonly minSpacingMs: number;
}

export const DEFAULT_COALESCE_RULE: CoalesceRule = { windowMs: 200, minSpacingMs: 1_000 };

/**
 * The fleet loop's rule: a set's first event opens a 1-s window, and a set is sent at
 * most once a second. A burst of child verdict changes lasting d seconds becomes at most
 * floor(d) + 2 messages per set (one per second while it lasts, one after its last event).
 */
export const FLEET_COALESCE_RULE: CoalesceRule = { windowMs: 1_000, minSpacingMs: 1_000 };

/** One message to send: the first cause, how many events it stands for, and when the first came. */
export interface CoalescedSend {
  readonly loop: MessageLoop;
  readonly key: ReleaseKey;
  readonly cause: string;
  readonly count: number;
  readonly firstAt: number;
  readonly dueAt: number;
}

export interface CoalesceBuffer {
  /** Records an event at time `at`. */
  add(loop: MessageLoop, key: ReleaseKey, cause: string, at: number): void;
  /** Removes and returns the sends due at `now`, remembering them as sent at `now`. */
  takeDue(now: number): CoalescedSend[];
  /** Removes and returns every pending send, due or not. */
  takeAll(now: number): CoalescedSend[];
  /** The earliest due time of a pending send. */
  nextDueAt(): number | undefined;
  size(): number;
}

export function coalesceId(loop: MessageLoop, key: ReleaseKey): string {
  return `${loop}/${key.namespace}/${key.name}/${key.uid}`;
}

/** `rules` gives a loop a rule of its own; the others follow `rule`. */
export function createCoalesceBuffer(
  rule: CoalesceRule = DEFAULT_COALESCE_RULE,
  rules: Readonly<Partial<Record<MessageLoop, CoalesceRule>>> = {},
): CoalesceBuffer {
  const ruleOf = (loop: MessageLoop): CoalesceRule => rules[loop] ?? rule;
  const pending = new Map<string, CoalescedSend>();
  const lastSentAt = new Map<string, { readonly at: number; readonly spacingMs: number }>();

  const take = (now: number, all: boolean): CoalescedSend[] => {
    const out: CoalescedSend[] = [];
    for (const [id, send] of pending) {
      if (!all && send.dueAt > now) continue;
      pending.delete(id);
      lastSentAt.set(id, { at: now, spacingMs: ruleOf(send.loop).minSpacingMs });
      out.push(send);
    }
    // A send older than the spacing no longer holds anything back.
    for (const [id, last] of lastSentAt) if (last.at + last.spacingMs <= now) lastSentAt.delete(id);
    return out.sort((a, b) => a.dueAt - b.dueAt);
  };

  return {
    add(loop, key, cause, at) {
      const id = coalesceId(loop, key);
      const open = pending.get(id);
      if (open !== undefined) {
        pending.set(id, { ...open, count: open.count + 1 });
        return;
      }
      const last = lastSentAt.get(id);
      const dueAt = Math.max(at + ruleOf(loop).windowMs, last === undefined ? 0 : last.at + last.spacingMs);
      pending.set(id, { loop, key, cause, count: 1, firstAt: at, dueAt });
    },
    takeDue: (now) => take(now, false),
    takeAll: (now) => take(now, true),
    nextDueAt() {
      let next: number | undefined;
      for (const send of pending.values()) if (next === undefined || send.dueAt < next) next = send.dueAt;
      return next;
    },
    size: () => pending.size,
  };
}
