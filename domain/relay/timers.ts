/**
 * When each loop is next due for a Release. The times are derived from the
 * status the functions write, so a restarted relay resumes the timers
 * instead of starting them over:
 *
 * - reconcile: the later of status.lastAttempted.attemptedAt and
 *   status.reconciledAt (every run writes them; creation before the first
 *   run) + spec.syncPolicy.interval. Suspended Releases get no reconcile
 *   timer; their observers keep running.
 * - drift: the drift loop writes no timestamp on every check (InSync's
 *   lastTransitionTime moves only on a transition), so the relay remembers
 *   when it last sent each Release to the drift queue. After a restart it
 *   has no memory and falls back to InSync's lastTransitionTime (creation
 *   before the first check): at worst one early drift check per Release.
 * - health: status.healthSummary.checkedAt (written on every assessment),
 *   else Healthy's lastTransitionTime, else creation
 *   + healthAssessment.interval.
 *
 * Drift and health run at least every FRESHNESS_INTERVAL_MS, with or
 * without their spec blocks, so that Healthy (NotConfigured) and InSync
 * follow a new metadata.generation within minutes (the combined verdict
 * needs every condition's observedGeneration to match).
 *
 * A send is remembered too (lastSent): a loop is not due again until an
 * interval after the later of the status time and the last send, so a
 * Release is not sent every tick while its function runs, and a loop whose
 * function is down is retried once per interval.
 *
 * While an observer waits for the reconcile — Healthy or InSync is already
 * Pending at the current generation because the current render is not
 * applied yet (waiting at a wave or hook, failed, no render yet) — its interval
 * tick could only write the same Pending again. The reconcile sends the
 * Release to both observers as soon as it applies the render or the current
 * render changes (domain/reconcile/conclude.ts), so such a loop's timer falls
 * back to FRESHNESS_INTERVAL_MS (a backstop for a lost message). In a burst
 * these ticks filled the observer queues: the message that the render was
 * applied waited behind them. And when the relay sees the status
 * change the reconcile notified about (`observersNotified`), it counts it as
 * a send of both observer loops: their next tick is an interval later, not at
 * once next to the reconcile's message. The same holds for every reconcile of a
 * settled Release: it sends both observers the answers of its
 * own check of every object, so their interval checks ride on the reconcile's
 * tick and cost no reads of their own; an observer whose interval is shorter
 * than the reconcile's still ticks on its own in between.
 *
 * A relay that starts leading (termStartedAt) finds many timers overdue at
 * once: the drift base is InSync's lastTransitionTime, hours old in a
 * settled fleet, and a relay that was down finds every loop overdue. Sent
 * at once, a fleet of 10,000 Releases would be 10,000 messages in the first
 * second. A loop that was overdue when the term started and that this term
 * has not sent yet is due instead at its Release's next slot after the term
 * started: a fixed point on a grid of the loop's interval, offset by a hash
 * of the Release's uid, so the overdue timers spread evenly over one
 * interval (the steady-state rate), and a relay restarted more often than
 * the interval still reaches every slot.
 */
import type { Condition, Release } from '../api/index.ts';
import { parseDuration } from '../runtime/duration.ts';
import type { Loop } from '../runtime/queue-message.ts';
import { observersRideOnReconcile } from '../status/observer-ticks.ts';

export const FRESHNESS_INTERVAL_MS = 10 * 60_000;
/** Shortest timer interval: a zero or tiny interval must not turn the relay into a busy loop. */
export const MIN_INTERVAL_MS = 1_000;

export const DEFAULT_SYNC_INTERVAL_MS = 5 * 60_000;
const DEFAULT_DRIFT_INTERVAL_MS = 5 * 60_000;
const DEFAULT_HEALTH_INTERVAL_MS = 60_000;

export type LastSent = Partial<Record<Loop, Date>>;

export interface DueTimes {
  /** Undefined for a suspended Release. */
  readonly reconcile: Date | undefined;
  readonly drift: Date;
  readonly health: Date;
}

export interface TimerIntervals {
  readonly reconcile: number;
  readonly drift: number;
  readonly health: number;
}

/** The interval of each loop's timer in milliseconds. */
export function timerIntervals(release: Release): TimerIntervals {
  const spec = release.spec;
  const drift = Math.min(
    durationMs(spec.driftDetection.interval, DEFAULT_DRIFT_INTERVAL_MS),
    FRESHNESS_INTERVAL_MS,
  );
  const health =
    spec.healthAssessment === undefined
      ? FRESHNESS_INTERVAL_MS
      : Math.min(
          durationMs(spec.healthAssessment.interval, DEFAULT_HEALTH_INTERVAL_MS),
          FRESHNESS_INTERVAL_MS,
        );
  return { reconcile: durationMs(spec.syncPolicy.interval, DEFAULT_SYNC_INTERVAL_MS), drift, health };
}

/**
 * When each loop is next due; `now` stands in for a missing creationTimestamp. With
 * `termStartedAt`, a loop overdue at that time and not sent since is spread (see above).
 */
export function dueTimes(
  release: Release,
  now: Date,
  lastSent: LastSent = {},
  termStartedAt?: Date,
): DueTimes {
  const configured = timerIntervals(release);
  const intervals = {
    ...configured,
    health: healthWaitsForReconcile(release) ? FRESHNESS_INTERVAL_MS : configured.health,
    drift: driftWaitsForReconcile(release) ? FRESHNESS_INTERVAL_MS : configured.drift,
  };
  const status = release.status;
  const created = time(release.metadata.creationTimestamp) ?? now.getTime();

  const reconcileBase =
    latest(time(status?.lastAttempted?.attemptedAt), time(status?.reconciledAt)) ?? created;
  const driftBase = time(conditionOf(release, 'InSync')?.lastTransitionTime) ?? created;
  const healthBase =
    time(status?.healthSummary?.checkedAt) ??
    time(conditionOf(release, 'Healthy')?.lastTransitionTime) ??
    created;

  const spreadKey = release.metadata.uid ?? `${release.metadata.namespace ?? ''}/${release.metadata.name}`;
  const due = (base: number, loop: Loop, interval: number) => {
    const sent = lastSent[loop]?.getTime();
    const at = (latest(base, sent) ?? base) + interval;
    if (termStartedAt === undefined || sent !== undefined || at >= termStartedAt.getTime())
      return new Date(at);
    return new Date(
      nextSlot(termStartedAt.getTime(), interval, spreadOffset(`${spreadKey}/${loop}`, interval)),
    );
  };
  return {
    reconcile: release.spec.suspend ? undefined : due(reconcileBase, 'reconcile', intervals.reconcile),
    drift: due(driftBase, 'drift', intervals.drift),
    health: due(healthBase, 'health', intervals.health),
  };
}

/** The loops due at `now`, in loop order. */
export function dueLoops(release: Release, now: Date, lastSent: LastSent = {}, termStartedAt?: Date): Loop[] {
  const times = dueTimes(release, now, lastSent, termStartedAt);
  const loops: Loop[] = [];
  for (const loop of ['reconcile', 'drift', 'health'] as const) {
    const at = times[loop];
    if (at !== undefined && at.getTime() <= now.getTime()) loops.push(loop);
  }
  return loops;
}

/**
 * Healthy is Unknown/Pending at the current generation because the current render is not
 * applied (the health ladder's first Pending row, domain/observe/health-verdict.ts): a health
 * check cannot change it; the reconcile's message will.
 */
export function healthWaitsForReconcile(release: Release): boolean {
  if (release.spec.healthAssessment === undefined || !pendingAtGeneration(release, 'Healthy')) return false;
  const status = release.status;
  const current =
    status?.rollout?.state === 'RolledBack'
      ? status.lastSuccessful?.renderRef
      : (status?.lastAttempted?.renderRef ?? status?.lastSuccessful?.renderRef);
  return current === undefined || current !== status?.lastSuccessful?.renderRef;
}

/**
 * InSync is Unknown/Pending at the current generation because no render is applied yet or a
 * newer one is being rolled out (planDriftCheck, domain/observe/insync-verdict.ts).
 */
export function driftWaitsForReconcile(release: Release): boolean {
  if (!pendingAtGeneration(release, 'InSync')) return false;
  const status = release.status;
  const applied = status?.lastSuccessful?.renderRef;
  const rollout = status?.rollout;
  return applied === undefined || (rollout?.state === 'Progressing' && rollout.renderRef !== applied);
}

/**
 * Whether a status update (old → next) is one after which the reconcile sent the Release to
 * the health and drift queues (conclude.ts: the current render changed, a new render was
 * applied, a rollback happened, or a run of a settled Release, on which the observers'
 * interval checks ride: domain/status/observer-ticks.ts).
 */
export function observersNotified(old: Release | undefined, next: Release | undefined): boolean {
  if (old === undefined || next === undefined || old.metadata.uid !== next.metadata.uid) return false;
  const before = old.status;
  const after = next.status;
  const attempted = after?.lastAttempted?.renderRef;
  if (attempted !== undefined && attempted !== before?.lastAttempted?.renderRef) return true;
  const applied = after?.lastSuccessful?.renderRef;
  if (applied !== undefined && applied !== before?.lastSuccessful?.renderRef) return true;
  if (after?.rollout?.state === 'RolledBack' && before?.rollout?.state !== 'RolledBack') return true;
  // A new reconcile write of a settled Release: the observers' interval checks rode on that run
  // (domain/status/observer-ticks.ts), so their own timers start over from it.
  return (
    after?.reconciledAt !== undefined &&
    after.reconciledAt !== before?.reconciledAt &&
    observersRideOnReconcile(after)
  );
}

function pendingAtGeneration(release: Release, type: 'Healthy' | 'InSync'): boolean {
  const condition = conditionOf(release, type);
  return (
    condition?.reason === 'Pending' && condition.observedGeneration === (release.metadata.generation ?? 0)
  );
}

function conditionOf(release: Release, type: string): Condition | undefined {
  return release.status?.conditions?.find((condition) => condition.type === type);
}

function durationMs(text: string, fallback: number): number {
  const parsed = parseDuration(text);
  return Math.max(parsed.ok ? parsed.ms : fallback, MIN_INTERVAL_MS);
}

function time(text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const ms = Date.parse(text);
  return Number.isNaN(ms) ? undefined : ms;
}

function latest(...times: (number | undefined)[]): number | undefined {
  const known = times.filter((t) => t !== undefined);
  return known.length === 0 ? undefined : Math.max(...known);
}

/** The first time at or after `from` that lies `offset` past a multiple of `interval` (ms since the epoch). */
export function nextSlot(from: number, interval: number, offset: number): number {
  return from + ((((offset - from) % interval) + interval) % interval);
}

/** A stable offset in [0, interval) for `key` (FNV-1a, 32 bits). */
export function spreadOffset(key: string, interval: number): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) {
    hash ^= key.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash % Math.max(1, Math.floor(interval));
}
