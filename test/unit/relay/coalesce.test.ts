import { describe, expect, it } from 'vitest';
import { createCoalesceBuffer } from '../../../domain/relay/coalesce.ts';

const key = { namespace: 'team-a', name: 'podinfo', uid: 'u1' };
const rule = { windowMs: 200, minSpacingMs: 1_000 };

describe('coalescing per (loop, Release)', () => {
  it('many events within the window become one send that keeps the first cause and the count', () => {
    const buffer = createCoalesceBuffer(rule);
    buffer.add('reconcile', key, 'first', 0);
    for (let t = 1; t < 200; t += 10) buffer.add('reconcile', key, 'later', t);
    expect(buffer.takeDue(199)).toEqual([]);
    const [send, ...rest] = buffer.takeDue(200);
    expect(rest).toEqual([]);
    expect(send).toMatchObject({ loop: 'reconcile', key, cause: 'first', count: 21, firstAt: 0 });
  });

  it('different loops and different Releases are separate sends', () => {
    const buffer = createCoalesceBuffer(rule);
    buffer.add('reconcile', key, 'a', 0);
    buffer.add('drift', key, 'b', 0);
    buffer.add('reconcile', { ...key, name: 'other' }, 'c', 0);
    expect(buffer.takeDue(200)).toHaveLength(3);
  });

  it('a key just sent waits for the spacing; events meanwhile go out together after it', () => {
    const buffer = createCoalesceBuffer(rule);
    buffer.add('reconcile', key, 'first', 0);
    expect(buffer.takeDue(200)).toHaveLength(1);
    buffer.add('reconcile', key, 'second', 300);
    buffer.add('reconcile', key, 'third', 900);
    expect(buffer.nextDueAt()).toBe(1_200);
    expect(buffer.takeDue(1_199)).toEqual([]);
    expect(buffer.takeDue(1_200)).toMatchObject([{ cause: 'second', count: 2 }]);
  });

  it('every event is followed by a send no earlier than the event', () => {
    const buffer = createCoalesceBuffer(rule);
    const sends: number[] = [];
    let lastEvent = 0;
    for (let t = 0; t < 5_000; t += 7) {
      buffer.add('reconcile', key, 'e', t);
      lastEvent = t;
      if (buffer.takeDue(t).length > 0) sends.push(t);
    }
    for (let t = 5_000; t < 7_000; t += 7) if (buffer.takeDue(t).length > 0) sends.push(t);
    expect(sends.at(-1)).toBeGreaterThanOrEqual(lastEvent);
    expect(sends.length).toBeLessThanOrEqual(6); // about one per second
  });

  it('takeAll empties the buffer whether or not sends are due', () => {
    const buffer = createCoalesceBuffer(rule);
    buffer.add('health', key, 'x', 0);
    expect(buffer.takeAll(0)).toHaveLength(1);
    expect(buffer.size()).toBe(0);
    expect(buffer.nextDueAt()).toBeUndefined();
  });
});
