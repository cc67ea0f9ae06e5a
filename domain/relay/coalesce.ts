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
 * Time is passed in (milliseconds); the buffer does no I/O.
 */
import type { Loop } from '../runtime/queue-message.ts';

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

/** One message to send: the first cause, how many events it stands for, and when the first came. */
export interface CoalescedSend {
  readonly loop: Loop;
  readonly key: ReleaseKey;
  readonly cause: string;
  readonly count: number;
  readonly firstAt: number;
  readonly dueAt: number;
}

export interface CoalesceBuffer {
  /** Records an event at time `at`. */
  add(loop: Loop, key: ReleaseKey, cause: string, at: number): void;
  /** Removes and returns the sends due at `now`, remembering them as sent at `now`. */
  takeDue(now: number): CoalescedSend[];
  /** Removes and returns every pending send, due or not. */
  takeAll(now: number): CoalescedSend[];
  /** The earliest due time of a pending send. */
  nextDueAt(): number | undefined;
  size(): number;
}

export function coalesceId(loop: Loop, key: ReleaseKey): string {
  return `${loop}/${key.namespace}/${key.name}/${key.uid}`;
}

export function createCoalesceBuffer(rule: CoalesceRule = DEFAULT_COALESCE_RULE): CoalesceBuffer {
  const pending = new Map<string, CoalescedSend>();
  const lastSentAt = new Map<string, number>();

  const take = (now: number, all: boolean): CoalescedSend[] => {
    const out: CoalescedSend[] = [];
    for (const [id, send] of pending) {
      if (!all && send.dueAt > now) continue;
      pending.delete(id);
      lastSentAt.set(id, now);
      out.push(send);
    }
    // A send older than the spacing no longer holds anything back.
    for (const [id, at] of lastSentAt) if (at + rule.minSpacingMs <= now) lastSentAt.delete(id);
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
      const dueAt = Math.max(at + rule.windowMs, last === undefined ? 0 : last + rule.minSpacingMs);
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
