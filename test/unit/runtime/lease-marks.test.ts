import { describe, expect, it } from 'vitest';
import {
  closedHolder,
  holderAfterEarlier,
  markAfter,
  markedTake,
  markOfHolder,
  nextMark,
} from '../../../domain/runtime/lease-close.ts';

const at = (iso: string) => new Date(iso);

describe('the mark of a run (whole seconds, strictly after the mark it found)', () => {
  it('is now, in whole seconds, when the found mark is older', () => {
    expect(nextMark('2026-12-02T10:00:00Z', at('2026-12-02T10:00:05.900Z'))).toBe('2026-12-02T10:00:05Z');
  });
  it('is one second after the found mark when now is not after it (a burst runs ahead of the clock)', () => {
    expect(nextMark('2026-12-02T10:00:05Z', at('2026-12-02T10:00:05.300Z'))).toBe('2026-12-02T10:00:06Z');
    expect(nextMark('2026-12-02T10:00:09Z', at('2026-12-02T10:00:05.300Z'))).toBe('2026-12-02T10:00:10Z');
  });
  it('is now when nothing was found or the found mark is not a time', () => {
    expect(nextMark(undefined, at('2026-12-02T10:00:05.300Z'))).toBe('2026-12-02T10:00:05Z');
    expect(nextMark('garbage', at('2026-12-02T10:00:05.300Z'))).toBe('2026-12-02T10:00:05Z');
  });
  it('work after the status write carries the next second, which closes nothing', () => {
    expect(markAfter('2026-12-02T10:00:05Z')).toBe('2026-12-02T10:00:06Z');
  });
  it('holder values round-trip through their mark', () => {
    expect(markOfHolder('drift', closedHolder('drift', '2026-12-02T10:00:05Z'))).toBe('2026-12-02T10:00:05Z');
    expect(closedHolder('drift', undefined)).toBe('');
    expect(markOfHolder('drift', 'health@2026-12-02T10:00:05Z')).toBeUndefined();
    expect(markOfHolder('drift', 'drift@')).toBeUndefined();
  });
});

describe('holder ids never repeat for the life of a Lease', () => {
  const loop = 'reconcile' as const;
  it('a run dropped after its take gave the Lease back unchanged: the next run in the same second takes a later holder', () => {
    // Both runs found status mark …:00 and started within second …:05.
    const found = '2026-12-02T10:00:00Z';
    const now = at('2026-12-02T10:00:05.400Z');
    const dropped = `${loop}@${nextMark(found, at('2026-12-02T10:00:05.100Z'))}`;
    const planned = `${loop}@${nextMark(found, now)}`;
    expect(planned).toBe(dropped); // the collision the Lease must not allow
    expect(holderAfterEarlier(loop, planned, dropped, now)).toBe('reconcile@2026-12-02T10:00:06Z');
  });
  it('an earlier holder whose mark is after the planned one (a burst ahead of the clock) also moves it after', () => {
    expect(
      holderAfterEarlier(
        loop,
        'reconcile@2026-12-02T10:00:05Z',
        'reconcile@2026-12-02T10:00:07Z',
        at('2026-12-02T10:00:05.400Z'),
      ),
    ).toBe('reconcile@2026-12-02T10:00:08Z');
  });
  it('keeps the planned holder when it is already after the earlier one', () => {
    expect(
      holderAfterEarlier(
        loop,
        'reconcile@2026-12-02T10:00:06Z',
        'reconcile@2026-12-02T10:00:05Z',
        at('2026-12-02T10:00:06.100Z'),
      ),
    ).toBeUndefined();
  });
  it('ignores holders that carry no mark (random holders, another loop, the free value "")', () => {
    expect(
      holderAfterEarlier(
        loop,
        'reconcile@2026-12-02T10:00:05Z',
        'reconcile-6f1c',
        at('2026-12-02T10:00:05Z'),
      ),
    ).toBeUndefined();
    expect(
      holderAfterEarlier(
        loop,
        'reconcile@2026-12-02T10:00:05Z',
        'drift@2026-12-02T10:00:09Z',
        at('2026-12-02T10:00:05Z'),
      ),
    ).toBeUndefined();
    expect(
      holderAfterEarlier(
        loop,
        'reconcile-6f1c',
        'reconcile@2026-12-02T10:00:05Z',
        at('2026-12-02T10:00:05Z'),
      ),
    ).toBeUndefined();
  });
  it('a chain of runs in one second, each given back without a status write, gets strictly increasing holders', () => {
    const found = '2026-12-02T10:00:00Z';
    const now = at('2026-12-02T10:00:05.000Z');
    const holders: string[] = [];
    let last: string | undefined;
    for (let i = 0; i < 5; i += 1) {
      const planned = `${loop}@${nextMark(found, now)}`;
      const holder = last === undefined ? planned : (holderAfterEarlier(loop, planned, last, now) ?? planned);
      holders.push(holder);
      last = holder;
    }
    expect(new Set(holders).size).toBe(5);
    expect([...holders].sort()).toEqual(holders);
  });
});

describe('the take of a loop whose status write closes its Lease', () => {
  const take = markedTake('health', '2026-12-02T10:00:00Z', () => at('2026-12-02T10:00:03.200Z'));
  it('expects the Lease free as the mark its view of the status carries', () => {
    expect(take.closedAs).toBe('health@2026-12-02T10:00:00Z');
    expect(markedTake('health', undefined, () => at('2026-12-02T10:00:03Z')).closedAs).toBe('');
  });
  it("closed by a run since that view: takes it with a holder after that run's mark, never the free value itself", () => {
    expect(take.holderAfter('health@2026-12-02T10:00:04Z')).toBe('health@2026-12-02T10:00:05Z');
    expect(take.holderAfter('health@2026-12-02T10:00:01Z')).toBe('health@2026-12-02T10:00:03Z');
  });
  it('never repeats a holder that already ran on the Lease', () => {
    expect(take.unique('health@2026-12-02T10:00:03Z', 'health@2026-12-02T10:00:03Z')).toBe(
      'health@2026-12-02T10:00:04Z',
    );
    expect(take.unique('health@2026-12-02T10:00:03Z', 'health@2026-12-02T10:00:01Z')).toBeUndefined();
  });
});
