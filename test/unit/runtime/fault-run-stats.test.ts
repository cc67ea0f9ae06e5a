import { describe, expect, it } from 'vitest';
import { runStats, type LogLine } from '../../../test/faults/harness.ts';

/** An outcome line of a full reconcile run of shop/a. */
function run(time: string, fields: Record<string, unknown>): LogLine {
  return {
    time,
    level: 'info',
    msg: 'done',
    loop: 'reconcile',
    namespace: 'shop',
    name: 'a',
    outcome: 'done',
    ...fields,
  };
}

describe('the fault suite judges overlap by the time each run held its Lease', () => {
  it('a run taking the Lease after the previous run sent its closing write is no overlap, though its outcome line came later', () => {
    const base = Date.parse('2026-12-07T10:00:00.000Z');
    const lines = [
      // first run: held 0–1000 ms; its outcome line is logged 150 ms after its closing write was sent
      run('2026-12-07T10:00:01.150Z', { durationMs: 1150, leaseHeldFrom: base, leaseHeldUntil: base + 1000 }),
      // second run: took the Lease at 1010 ms
      run('2026-12-07T10:00:02.000Z', {
        durationMs: 990,
        leaseHeldFrom: base + 1010,
        leaseHeldUntil: base + 1900,
      }),
    ];
    expect(runStats(lines, 1).overlappingRuns).toBe(0);
  });

  it('two runs holding the Lease at once count as one overlap', () => {
    const base = Date.parse('2026-12-07T10:00:00.000Z');
    const lines = [
      run('2026-12-07T10:00:01.150Z', { durationMs: 1150, leaseHeldFrom: base, leaseHeldUntil: base + 1000 }),
      run('2026-12-07T10:00:02.000Z', {
        durationMs: 1500,
        leaseHeldFrom: base + 500,
        leaseHeldUntil: base + 1900,
      }),
    ];
    expect(runStats(lines, 1).overlappingRuns).toBe(1);
  });
});
