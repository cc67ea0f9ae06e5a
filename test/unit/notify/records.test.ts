import { describe, expect, it } from 'vitest';
import {
  MAX_NOTIFIED_OBJECTS,
  MAX_PENDING_TRANSITIONS,
  type NotificationSpec,
  type NotificationStatus,
} from '../../../domain/api/notification.ts';
import {
  CLAIM_MS,
  MAX_DELIVERY_ATTEMPTS,
  claim,
  dueOnEvent,
  owesAny,
  isBehind,
  observe,
  owed,
  recordOf,
  selects,
  settle,
  type Settled,
  type WatchedObject,
} from '../../../domain/notify/records.ts';
import type { NotifyKind } from '../../../domain/notify/state.ts';

const spec = (over: Partial<NotificationSpec> = {}): NotificationSpec => ({
  for: [{ kind: 'Release', selector: { matchLabels: { team: 'a' } } }],
  transitions: ['Ready', 'Failed', 'Recovered'],
  to: [{ webhook: { secretRef: { name: 'hook' } } }, { slack: { secretRef: { name: 'slack' } } }],
  ...over,
});
const api: WatchedObject = { kind: 'Release', name: 'api', uid: 'u1', labels: { team: 'a' } };
const t0 = new Date('2026-01-01T00:00:00Z');
const later = (ms: number) => new Date(t0.getTime() + ms);

/** Observes `kinds` in order, delivering everything owed to every destination after each. */
function run(kinds: NotifyKind[], s = spec()) {
  let status: NotificationStatus = {};
  const sent: string[] = [];
  kinds.forEach((kind, i) => {
    const now = later(i * 1000);
    status = observe(s, status, api, { kind }, now).status;
    const claimed = claim(s, status, api.uid, now);
    status = claimed.status;
    const record = recordOf(status, api.uid)!;
    const results = claimed.destinations.map((to) => {
      const list = owed(
        record,
        record.deliveries!.find((d) => d.to === to)!,
      );
      for (const p of list) sent.push(`${to}:${p.transition}#${p.sequence}`);
      return { to, sentThrough: list.at(-1)?.sequence };
    });
    status = settle(status, api.uid, results, now).status;
  });
  return { status, sent };
}

describe('selection', () => {
  it('by name or by label selector, of the named kind only', () => {
    expect(selects(spec(), api)).toBe(true);
    expect(selects(spec(), { ...api, labels: { team: 'b' } })).toBe(false);
    expect(selects(spec({ for: [{ kind: 'Release', name: 'api' }] }), api)).toBe(true);
    expect(selects(spec({ for: [{ kind: 'ReleaseSet', name: 'api' }] }), api)).toBe(false);
  });
});

describe('exactly once', () => {
  it('ready → failing → recovered sends three transitions to each destination, in order', () => {
    const { sent, status } = run(['wait', 'ready', 'failure', 'wait', 'ready']);
    expect(sent).toEqual([
      '0:Ready#1',
      '1:Ready#1',
      '0:Failed#2',
      '1:Failed#2',
      '0:Recovered#3',
      '1:Recovered#3',
    ]);
    expect(recordOf(status, 'u1')?.pending).toBeUndefined();
  });
  it('a second look at the same state (a duplicate message) changes nothing and owes nothing', () => {
    const { status } = run(['ready']);
    const again = observe(spec(), status, api, { kind: 'ready' }, later(5000));
    expect(again.changed).toBe(false);
    expect(claim(spec(), again.status, 'u1', later(5000)).destinations).toEqual([]);
  });
  it('the pending transition is recorded before any send: a crash after the write still owes it', () => {
    const observed = observe(spec(), {}, api, { kind: 'failure' }, t0);
    expect(observed.changed).toBe(true);
    const record = recordOf(observed.status, 'u1')!;
    expect(record.deliveries!.map((d) => owed(record, d).map((p) => p.transition))).toEqual([
      ['Failed'],
      ['Failed'],
    ]);
  });
  it('a live claim keeps a concurrent run away; an expired one (a crashed run) does not', () => {
    const observed = observe(spec(), {}, api, { kind: 'failure' }, t0).status;
    const first = claim(spec(), observed, 'u1', t0);
    expect(first.destinations).toEqual([0, 1]);
    const second = claim(spec(), first.status, 'u1', later(1000));
    expect(second.destinations).toEqual([]);
    expect(second.busyUntil).toEqual(later(CLAIM_MS));
    expect(claim(spec(), first.status, 'u1', later(CLAIM_MS + 1)).destinations).toEqual([0, 1]);
  });
  it('transitions spec.transitions does not name are recorded, not sent', () => {
    const { sent, status } = run(['ready', 'wait'], spec({ transitions: ['Failed'] }));
    expect(sent).toEqual([]);
    expect(recordOf(status, 'u1')?.state).toBe('wait');
  });
  it('spec.suspend records and owes, sends nothing', () => {
    const { sent, status } = run(['failure'], spec({ suspend: true }));
    expect(sent).toEqual([]);
    expect(recordOf(status, 'u1')?.pending?.map((p) => p.transition)).toEqual(['Failed']);
  });
});

describe('failures', () => {
  const failing = (retryable: boolean, attempts: number) => {
    let status = observe(spec(), {}, api, { kind: 'failure' }, t0).status;
    let settled: Settled | undefined;
    for (let i = 0; i < attempts; i++) {
      const now = later(i * 1000);
      status = claim(spec(), status, 'u1', now).status;
      settled = settle(
        status,
        'u1',
        [
          { to: 0, failure: { retryable, reason: 'HTTP 500' } },
          { to: 1, sentThrough: 1 },
        ],
        now,
      );
      status = settled.status;
    }
    if (settled === undefined) throw new Error('no attempt was made');
    return settled;
  };
  it('a retryable failure is retried: the transition stays owed, the failure is counted and named', () => {
    const settled = failing(true, 1);
    expect(settled.retry).toEqual({ reason: 'spec.to[0] (webhook): HTTP 500', attempt: 1 });
    const record = recordOf(settled.status, 'u1')!;
    expect(owed(record, record.deliveries![0]).length).toBe(1);
    expect(owed(record, record.deliveries![1]).length).toBe(0);
  });
  it(`after ${MAX_DELIVERY_ATTEMPTS} attempts the transition is given up, so later ones still go`, () => {
    const settled = failing(true, MAX_DELIVERY_ATTEMPTS);
    expect(settled.gaveUp).toEqual(['spec.to[0] (webhook): HTTP 500']);
    const record = recordOf(settled.status, 'u1')!;
    expect(record.deliveries![0]).toMatchObject({ sentSequence: 1, gaveUp: 1 });
    expect(record.pending).toBeUndefined();
  });
  it('a failure that cannot be retried (a 4xx, a refused Secret) is given up at once', () => {
    const settled = failing(false, 1);
    expect(settled.retry).toBeUndefined();
    expect(settled.gaveUp).toHaveLength(1);
  });
});

describe('bounds', () => {
  it(`at most ${MAX_PENDING_TRANSITIONS} pending transitions: the oldest is given up`, () => {
    let status: NotificationStatus = {};
    const kinds: NotifyKind[] = ['ready', 'failure', 'ready', 'failure', 'ready', 'failure', 'ready'];
    kinds.forEach((kind, i) => (status = observe(spec(), status, api, { kind }, later(i)).status));
    const record = recordOf(status, 'u1')!;
    expect(record.pending).toHaveLength(MAX_PENDING_TRANSITIONS);
    expect(record.deliveries![0]).toMatchObject({ sentSequence: 2, gaveUp: 2 });
  });
  it(`at most ${MAX_NOTIFIED_OBJECTS} objects, the most recently changed first`, () => {
    let status: NotificationStatus = {};
    for (let i = 0; i < MAX_NOTIFIED_OBJECTS + 5; i++)
      status = observe(
        spec(),
        status,
        { ...api, name: `r${i}`, uid: `u${i}` },
        { kind: 'ready' },
        later(i),
      ).status;
    expect(status.objects).toHaveLength(MAX_NOTIFIED_OBJECTS);
    expect(status.objects![0].name).toBe(`r${MAX_NOTIFIED_OBJECTS + 4}`);
  });
  it('coalescing: a state that changes and changes back between two looks is no transition', () => {
    const { status } = run(['ready']);
    // failure then ready again before the loop looks: it sees ready, as recorded.
    expect(isBehind(recordOf(status, 'u1'), { kind: 'ready' })).toBe(false);
    expect(observe(spec(), status, api, { kind: 'ready' }, later(9000)).changed).toBe(false);
  });
  it('an unrecorded object that waits is not recorded (no write)', () => {
    expect(observe(spec(), {}, api, { kind: 'wait' }, t0).changed).toBe(false);
    expect(isBehind(undefined, { kind: 'wait' })).toBe(false);
  });
});

describe('what the relay sends', () => {
  it('a record behind the state is due, whatever the event; a current one is not', () => {
    const { status } = run(['ready']);
    const record = recordOf(status, 'u1');
    expect(dueOnEvent(record, { kind: 'failure' }, { initial: true, previousKind: undefined })).toBe(true);
    expect(dueOnEvent(record, { kind: 'ready' }, { initial: false, previousKind: 'wait' })).toBe(false);
  });
  it('no record: only a change a watch event saw is due, never the first list (no storm after a restart)', () => {
    expect(dueOnEvent(undefined, { kind: 'ready' }, { initial: false, previousKind: 'wait' })).toBe(true);
    expect(dueOnEvent(undefined, { kind: 'ready' }, { initial: true, previousKind: undefined })).toBe(false);
    expect(dueOnEvent(undefined, { kind: 'ready' }, { initial: false, previousKind: 'ready' })).toBe(false);
    expect(dueOnEvent(undefined, { kind: 'wait' }, { initial: false, previousKind: 'ready' })).toBe(false);
  });
  it('a record that still owes a transition is re-sent after a restart', () => {
    const observed = observe(spec(), {}, api, { kind: 'failure' }, t0).status;
    expect(owesAny(recordOf(observed, 'u1')!)).toBe(true);
    expect(owesAny(recordOf(run(['failure']).status, 'u1')!)).toBe(false);
  });
});
