import { describe, expect, it } from 'vitest';
import {
  recordedAfter,
  transitionOf,
  type NotifyKind,
  type RecordedState,
} from '../../../domain/notify/state.ts';

const at = (kind: NotifyKind, failing = false): RecordedState => ({ kind, failing });

describe('transitions (docs/notifications.md table)', () => {
  it('no record: ready is Ready, failure Failed, suspended Suspended, a wait tells nothing', () => {
    expect(transitionOf(undefined, 'ready')).toBe('Ready');
    expect(transitionOf(undefined, 'failure')).toBe('Failed');
    expect(transitionOf(undefined, 'suspended')).toBe('Suspended');
    expect(transitionOf(undefined, 'wait')).toBeUndefined();
  });
  it('ready: a wait is NotReady, a failure Failed, the same state nothing', () => {
    expect(transitionOf(at('ready'), 'wait')).toBe('NotReady');
    expect(transitionOf(at('ready'), 'failure')).toBe('Failed');
    expect(transitionOf(at('ready'), 'ready')).toBeUndefined();
  });
  it('failure → ready is Recovered; failure → wait tells nothing and keeps failing', () => {
    expect(transitionOf(at('failure', true), 'ready')).toBe('Recovered');
    expect(transitionOf(at('failure', true), 'wait')).toBeUndefined();
    expect(recordedAfter(at('failure', true), 'wait')).toEqual(at('wait', true));
  });
  it('failure → wait → ready is Recovered (a fix through a new render); wait after ready → ready is Ready', () => {
    const waiting = recordedAfter(recordedAfter(undefined, 'failure'), 'wait');
    expect(transitionOf(waiting, 'ready')).toBe('Recovered');
    const afterReady = recordedAfter(recordedAfter(undefined, 'ready'), 'wait');
    expect(transitionOf(afterReady, 'ready')).toBe('Ready');
  });
  it('leaving suspended is Resumed, whatever comes next; a failure stays a failure (no repeat)', () => {
    for (const next of ['ready', 'wait', 'failure'] as const)
      expect(transitionOf(at('suspended'), next)).toBe('Resumed');
    expect(transitionOf(at('failure', true), 'failure')).toBeUndefined();
  });
  it('ready clears failing', () => {
    expect(recordedAfter(at('wait', true), 'ready')).toEqual(at('ready', false));
  });
});
