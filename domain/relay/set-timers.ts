/**
 * The interval timer of a ReleaseSet: what wakes a set when its template's source has
 * something new (a commit on the branch it follows, a chart version in its range) while nothing
 * else changed. The fleet function resolves the template's source on every run, so a message is
 * all it takes; this says when the relay sends one, cause `timer: interval`.
 *
 * - The interval is the template's spec.syncPolicy.interval, with the default a Release has (5m,
 *   domain/relay/timers.ts), at least MIN_INTERVAL_MS. An interval that does not parse (say a
 *   `${cluster.…}` placeholder) gets the default. Overrides are not read: a set has one timer.
 * - Any message the set was sent this term (a watch trigger, a webhook push, the timer itself)
 *   restarts it: the next is an interval later.
 * - A set not sent anything yet this term (the relay just took the lead; the first list's message
 *   does not count) is due at its slot after the term started: a point on a grid of the interval
 *   offset by a hash of its uid (timers.ts nextSlot/spreadOffset), so a restarted relay spreads
 *   the timers of many sets over one interval instead of sending them all at once.
 * - A set being deleted has no timer.
 *
 * Pure; the relay (relay/relay.ts) keeps the last send per set and caches each set's due time.
 */
import { parseDuration } from '../runtime/duration.ts';
import { DEFAULT_SYNC_INTERVAL_MS, MIN_INTERVAL_MS, nextSlot, spreadOffset } from './timers.ts';

/** The cause of a timer's fleet message. */
export const SET_TIMER_CAUSE = 'timer: interval';

/** What the timer reads of a ReleaseSet (the relay's slim copy fits). */
export interface TimedReleaseSet {
  readonly metadata?:
    { readonly uid?: string | undefined; readonly deletionTimestamp?: string | undefined } | undefined;
  readonly spec?:
    | {
        readonly template?:
          | {
              readonly spec?:
                { readonly syncPolicy?: { readonly interval?: unknown } | undefined } | undefined;
            }
          | undefined;
      }
    | undefined;
}

/** The set's timer interval in milliseconds (see above). */
export function releaseSetInterval(set: TimedReleaseSet): number {
  const text = set.spec?.template?.spec?.syncPolicy?.interval;
  const parsed = typeof text === 'string' ? parseDuration(text) : undefined;
  return Math.max(parsed?.ok === true ? parsed.ms : DEFAULT_SYNC_INTERVAL_MS, MIN_INTERVAL_MS);
}

/**
 * When the set's timer is next due (ms since the epoch), or undefined for a set being deleted or
 * without a uid. `lastSent`: the last message the set was sent this term (see above).
 */
export function releaseSetTimerDue(
  set: TimedReleaseSet,
  lastSent: Date | undefined,
  termStartedAt: Date,
): number | undefined {
  const uid = set.metadata?.uid;
  if (uid === undefined || uid === '' || set.metadata?.deletionTimestamp !== undefined) return undefined;
  const interval = releaseSetInterval(set);
  if (lastSent !== undefined) return lastSent.getTime() + interval;
  return nextSlot(termStartedAt.getTime(), interval, spreadOffset(`${uid}/fleet`, interval));
}
