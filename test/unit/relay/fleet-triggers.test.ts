import { describe, expect, it } from 'vitest';
import { createCoalesceBuffer, DEFAULT_COALESCE_RULE, FLEET_COALESCE_RULE } from '../../../domain/relay/coalesce.ts';
import { childVerdictKey, childVerdictNotices, clusterSelectionChangeCause, releaseSetChangeCause } from '../../../domain/relay/fleet-triggers.ts';
import { release } from './fixtures.ts';

const set = (metadata: Record<string, unknown> = {}, status?: Record<string, unknown>) => ({
  metadata: { name: 'web', namespace: 'team-a', uid: 'set-1', generation: 1, ...metadata },
  ...(status === undefined ? {} : { status }),
});

const condition = (type: string, status: string, reason: string, extra: Record<string, unknown> = {}) => ({
  type,
  status,
  reason,
  message: '',
  lastTransitionTime: '2026-01-01T00:00:00Z',
  observedGeneration: 1,
  ...extra,
});

const REF = `sha256:${'a'.repeat(64)}`;

/** A child Release of set `web`, ready or waiting on its health. */
const child = (healthy: 'True' | 'False' | 'Progressing', extra: { labels?: Record<string, string>; checkedAt?: string; message?: string } = {}) =>
  release({
    name: 'web-prod',
    labels: extra.labels ?? { 'convoy.dev/release-set': 'web' },
    status: {
      observedGeneration: 1,
      lastAttempted: { attemptedAt: '2026-01-01T00:00:00Z', phase: 'Succeeded', renderRef: REF },
      lastSuccessful: { attemptedAt: '2026-01-01T00:00:00Z', phase: 'Succeeded', renderRef: REF },
      healthSummary: { renderRef: REF, checkedAt: extra.checkedAt ?? '2026-01-01T00:00:00Z', total: 1, healthy: 1, progressing: 0, degraded: 0, missing: 0, unknown: 0, objects: [] },
      conditions: [
        condition('Applied', 'True', 'Applied'),
        condition('InSync', 'True', 'InSync'),
        healthy === 'Progressing'
          ? condition('Healthy', 'Unknown', 'Progressing')
          : condition('Healthy', healthy, healthy === 'True' ? 'Healthy' : 'Degraded', { message: extra.message ?? '' }),
      ],
    },
  });

describe('fleet triggers: which ReleaseSet changes send it a message', () => {
  it('its add, recreation, generation and approve/rollback annotations count', () => {
    expect(releaseSetChangeCause(undefined, set())).toBe('ReleaseSet added');
    expect(releaseSetChangeCause(set(), set({ uid: 'set-2' }))).toBe('ReleaseSet recreated');
    expect(releaseSetChangeCause(set(), set({ generation: 2 }))).toBe('spec changed (generation 1 → 2)');
    expect(releaseSetChangeCause(set(), set({ annotations: { 'convoy.dev/approve': 'canary@r1' } }))).toBe('annotation convoy.dev/approve changed');
    expect(releaseSetChangeCause(set({ annotations: { 'convoy.dev/rollback': 'a' } }), set({ annotations: { 'convoy.dev/rollback': 'b' } }))).toBe(
      'annotation convoy.dev/rollback changed',
    );
  });

  it('a status-only change, another annotation or a delete does not (children follow ownerReferences)', () => {
    expect(releaseSetChangeCause(set({}, { observedGeneration: 0 }), set({}, { observedGeneration: 1, rollout: { state: 'Progressing' } }))).toBeUndefined();
    expect(releaseSetChangeCause(set(), set({ annotations: { 'example.com/owner': 'me' } }))).toBeUndefined();
    expect(releaseSetChangeCause(set(), undefined)).toBeUndefined();
  });
});

describe('fleet triggers: Clusters', () => {
  const cluster = (labels?: Record<string, string>) => ({ metadata: { name: 'prod-eu', ...(labels === undefined ? {} : { labels }) } });
  it('added, deleted or relabelled counts; a spec-only or unchanged-label update does not', () => {
    expect(clusterSelectionChangeCause(undefined, cluster())).toBe('Cluster prod-eu added');
    expect(clusterSelectionChangeCause(cluster(), undefined)).toBe('Cluster prod-eu deleted');
    expect(clusterSelectionChangeCause(cluster({ env: 'prod' }), cluster({ env: 'staging' }))).toBe('Cluster prod-eu relabelled');
    expect(clusterSelectionChangeCause(cluster({ env: 'prod' }), cluster({ env: 'prod', tier: '1' }))).toBe('Cluster prod-eu relabelled');
    expect(clusterSelectionChangeCause(cluster({ env: 'prod' }), cluster({ env: 'prod' }))).toBeUndefined();
    expect(clusterSelectionChangeCause(cluster(), cluster({}))).toBeUndefined();
  });
});

describe('fleet triggers: child Releases (their combined verdict, not their status)', () => {
  it('a verdict change notifies the set the child is labelled with', () => {
    expect(childVerdictKey(child('True'))).toBe('Ready/Assessed');
    expect(childVerdictKey(child('Progressing'))).toBe('wait/Healthy');
    expect(childVerdictNotices(child('Progressing'), child('True'))).toEqual([{ set: 'web', cause: 'child Release web-prod verdict wait/Healthy → Ready/Assessed' }]);
    expect(childVerdictNotices(child('True'), child('False'))).toEqual([{ set: 'web', cause: 'child Release web-prod verdict Ready/Assessed → failure/Healthy' }]);
  });

  it('a status change that leaves the verdict as it is notifies nobody', () => {
    expect(childVerdictNotices(child('True'), child('True', { checkedAt: '2026-01-01T00:05:00Z' }))).toEqual([]);
    expect(childVerdictNotices(child('False', { message: 'a' }), child('False', { message: 'b' }))).toEqual([]);
  });

  it('a child added or deleted notifies its set; moving between sets notifies both; an unlabelled Release nobody', () => {
    expect(childVerdictNotices(undefined, child('True'))).toEqual([{ set: 'web', cause: 'child Release web-prod added' }]);
    expect(childVerdictNotices(child('True'), undefined)).toEqual([{ set: 'web', cause: 'child Release web-prod deleted' }]);
    expect(childVerdictNotices(child('True'), child('True', { labels: { 'convoy.dev/release-set': 'api' } }))).toEqual([
      { set: 'web', cause: 'child Release web-prod left the set' },
      { set: 'api', cause: 'child Release web-prod joined the set' },
    ]);
    expect(childVerdictNotices(child('True', { labels: {} }), child('False', { labels: {} }))).toEqual([]);
    expect(childVerdictNotices(undefined, release())).toEqual([]);
  });
});

describe('fleet coalescing: one set, many events', () => {
  const key = { namespace: 'team-a', name: 'web', uid: 'set-1' };

  /** Feeds `events` events spread evenly over `spanMs`, ticking the buffer every 10 ms; returns the send times. */
  const run = (events: number, spanMs: number): number[] => {
    const buffer = createCoalesceBuffer(DEFAULT_COALESCE_RULE, { fleet: FLEET_COALESCE_RULE });
    const sent: number[] = [];
    let next = 0;
    for (let t = 0; t <= spanMs + 3_000; t += 10) {
      while (next < events && (next * spanMs) / events <= t) {
        buffer.add('fleet', key, `child ${next}`, t);
        next += 1;
      }
      for (const send of buffer.takeDue(t)) sent.push(send.dueAt);
    }
    expect(buffer.size()).toBe(0);
    return sent;
  };

  it('a burst of 500 child verdict changes within a second is one or two messages', () => {
    expect(run(500, 900).length).toBeLessThanOrEqual(2);
  });

  it('500 changes spread over 5 s are at most floor(5) + 2 messages: one a second while they last, one after', () => {
    const sends = run(500, 5_000);
    expect(sends.length).toBeLessThanOrEqual(7);
    for (let i = 1; i < sends.length; i++) expect(sends[i] - sends[i - 1]).toBeGreaterThanOrEqual(FLEET_COALESCE_RULE.minSpacingMs);
  });

  it('the fleet rule applies to the fleet loop only; the Release loops keep theirs', () => {
    const buffer = createCoalesceBuffer(DEFAULT_COALESCE_RULE, { fleet: FLEET_COALESCE_RULE });
    buffer.add('fleet', key, 'set', 0);
    buffer.add('reconcile', key, 'release', 0);
    expect(buffer.takeDue(DEFAULT_COALESCE_RULE.windowMs).map((s) => s.loop)).toEqual(['reconcile']);
    expect(buffer.takeDue(FLEET_COALESCE_RULE.windowMs)).toMatchObject([{ loop: 'fleet', cause: 'set', count: 1 }]);
  });

  it('every event is followed by a send no earlier than it', () => {
    const buffer = createCoalesceBuffer(DEFAULT_COALESCE_RULE, { fleet: FLEET_COALESCE_RULE });
    let lastEvent = -1;
    let lastSend = -1;
    for (let t = 0; t < 4_000; t += 7) {
      if (t % 3 === 0) {
        buffer.add('fleet', key, 'e', t);
        lastEvent = t;
      }
      for (const send of buffer.takeDue(t)) lastSend = send.dueAt;
    }
    for (const send of buffer.takeAll(10_000)) lastSend = send.dueAt;
    expect(lastSend).toBeGreaterThanOrEqual(lastEvent);
  });
});
