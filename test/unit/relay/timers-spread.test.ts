// A relay that starts leading spreads the timers that were overdue at that moment over
// one interval instead of sending them all in its first tick.
import { describe, expect, it } from 'vitest';
import { dueLoops, dueTimes, nextSlot, spreadOffset } from '../../../domain/relay/timers.ts';
import type { Release } from '../../../domain/api/index.ts';
import { release } from './fixtures.ts';

const TERM_START = new Date('2026-01-01T12:00:00Z');
const DRIFT_INTERVAL_MS = 5 * 60_000;

/** A settled Release: reconciled and checked recently, InSync unchanged for two hours (its drift timer is overdue). */
const template = release({
  spec: { syncPolicy: { interval: '1h' } },
  status: {
    reconciledAt: '2026-01-01T11:59:00Z',
    healthSummary: {
      renderRef: 'r',
      checkedAt: '2026-01-01T11:59:00Z',
      total: 0,
      healthy: 0,
      progressing: 0,
      degraded: 0,
      missing: 0,
      unknown: 0,
      objects: [],
    },
    conditions: [
      {
        type: 'InSync',
        status: 'True',
        reason: 'InSync',
        message: '',
        lastTransitionTime: '2026-01-01T10:00:00Z',
        observedGeneration: 1,
      },
    ],
  },
});
const settled = (i: number): Release => ({
  ...template,
  metadata: { ...template.metadata, name: `app-${i}`, uid: `uid-${i}` },
});

describe('timers overdue when the relay starts leading', () => {
  it('without a term start, every overdue drift timer is due at once (the burst this bounds)', () => {
    const fleet = Array.from({ length: 1000 }, (_, i) => settled(i));
    expect(fleet.filter((r) => dueLoops(r, TERM_START).includes('drift'))).toHaveLength(1000);
  });

  it(
    'spreads 10,000 overdue drift timers evenly over one interval, and sends each once',
    { timeout: 30_000 },
    () => {
      const fleet = Array.from({ length: 10_000 }, (_, i) => settled(i));
      const perSecond = new Array<number>(DRIFT_INTERVAL_MS / 1000).fill(0);
      const wrong: string[] = [];
      for (const r of fleet) {
        const due = dueTimes(r, TERM_START, {}, TERM_START).drift.getTime();
        const offset = due - TERM_START.getTime();
        if (offset < 0 || offset >= DRIFT_INTERVAL_MS)
          wrong.push(`${r.metadata.name}: due ${offset} ms after the term start`);
        else perSecond[Math.floor(offset / 1000)] += 1;
        // Due from its slot on (not before), and once sent there, not again for an interval.
        if (dueLoops(r, new Date(due - 1), {}, TERM_START).includes('drift'))
          wrong.push(`${r.metadata.name}: due before its slot`);
        if (!dueLoops(r, new Date(due), {}, TERM_START).includes('drift'))
          wrong.push(`${r.metadata.name}: not due at its slot`);
        if (dueLoops(r, new Date(due + 1000), { drift: new Date(due) }, TERM_START).includes('drift'))
          wrong.push(`${r.metadata.name}: due again after its send`);
      }
      expect(wrong).toEqual([]);
      // The steady rate is 10,000 / 300 s ≈ 33 per second; no second sends more than three times that.
      expect(Math.max(...perSecond)).toBeLessThanOrEqual(100);
    },
  );

  it('leaves a timer that was not overdue at the term start, or that this term already sent, as it was', () => {
    const r = settled(1);
    // Reconcile: reconciled 11:59 + 1h, not overdue.
    expect(dueTimes(r, TERM_START, {}, TERM_START).reconcile).toEqual(new Date('2026-01-01T12:59:00Z'));
    const sent = new Date('2026-01-01T12:00:30Z');
    expect(dueTimes(r, sent, { drift: sent }, TERM_START).drift).toEqual(
      new Date(sent.getTime() + DRIFT_INTERVAL_MS),
    );
  });

  it('is due at the same slot whichever restart found it overdue, so frequent restarts still reach it', () => {
    const r = settled(7);
    const first = dueTimes(r, TERM_START, {}, TERM_START).drift;
    const laterStart = new Date(TERM_START.getTime() + 1000);
    const second = dueTimes(r, laterStart, {}, laterStart).drift;
    if (first.getTime() >= laterStart.getTime()) expect(second).toEqual(first);
    expect(first.getTime()).toBeGreaterThanOrEqual(TERM_START.getTime());
    expect(first.getTime()).toBeLessThan(TERM_START.getTime() + DRIFT_INTERVAL_MS);
  });
});

describe('nextSlot and spreadOffset', () => {
  it('finds the first slot at or after a time', () => {
    expect(nextSlot(1000, 300, 100)).toBe(1000);
    expect(nextSlot(1001, 300, 100)).toBe(1300);
    expect(nextSlot(999, 300, 100)).toBe(1000);
    expect(nextSlot(0, 300, 299)).toBe(299);
  });

  it('gives a stable offset within the interval', () => {
    expect(spreadOffset('uid-1/drift', 300_000)).toBe(spreadOffset('uid-1/drift', 300_000));
    for (let i = 0; i < 100; i++) {
      const o = spreadOffset(`uid-${i}/drift`, 300_000);
      expect(o).toBeGreaterThanOrEqual(0);
      expect(o).toBeLessThan(300_000);
    }
  });
});
