import { describe, expect, it } from 'vitest';
import {
  createCoalesceBuffer,
  DEFAULT_COALESCE_RULE,
  FLEET_COALESCE_RULE,
} from '../../../domain/relay/coalesce.ts';
import {
  childVerdictKey,
  childVerdictNotices,
  clusterChangeCause,
  releaseSetChangeCause,
} from '../../../domain/relay/fleet-triggers.ts';
import type { Release } from '../../../domain/api/index.ts';
import { CLUSTER_ANNOTATION_VALUE_CHARS, slimCluster, slimRelease } from '../../../relay/watch/slim.ts';
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
const child = (
  healthy: 'True' | 'False' | 'Progressing',
  extra: { labels?: Record<string, string>; checkedAt?: string; message?: string } = {},
) =>
  release({
    name: 'web-prod',
    labels: extra.labels ?? { 'convoy.dev/release-set': 'web' },
    status: {
      observedGeneration: 1,
      lastAttempted: { attemptedAt: '2026-01-01T00:00:00Z', phase: 'Succeeded', renderRef: REF },
      lastSuccessful: { attemptedAt: '2026-01-01T00:00:00Z', phase: 'Succeeded', renderRef: REF },
      healthSummary: {
        renderRef: REF,
        checkedAt: extra.checkedAt ?? '2026-01-01T00:00:00Z',
        total: 1,
        healthy: 1,
        progressing: 0,
        degraded: 0,
        missing: 0,
        unknown: 0,
        objects: [],
      },
      conditions: [
        condition('Applied', 'True', 'Applied'),
        condition('InSync', 'True', 'InSync'),
        healthy === 'Progressing'
          ? condition('Healthy', 'Unknown', 'Progressing')
          : condition('Healthy', healthy, healthy === 'True' ? 'Healthy' : 'Degraded', {
              message: extra.message ?? '',
            }),
      ],
    },
  });

describe('fleet triggers: which ReleaseSet changes send it a message', () => {
  it('its add, recreation, generation and approve/rollback annotations count', () => {
    expect(releaseSetChangeCause(undefined, set())).toBe('ReleaseSet added');
    expect(releaseSetChangeCause(set(), set({ uid: 'set-2' }))).toBe('ReleaseSet recreated');
    expect(releaseSetChangeCause(set(), set({ generation: 2 }))).toBe('spec changed (generation 1 → 2)');
    expect(releaseSetChangeCause(set(), set({ annotations: { 'convoy.dev/approve': 'canary@r1' } }))).toBe(
      'annotation convoy.dev/approve changed',
    );
    expect(
      releaseSetChangeCause(
        set({ annotations: { 'convoy.dev/rollback': 'a' } }),
        set({ annotations: { 'convoy.dev/rollback': 'b' } }),
      ),
    ).toBe('annotation convoy.dev/rollback changed');
  });

  it('a status-only change, another annotation or a delete does not (children follow ownerReferences)', () => {
    expect(
      releaseSetChangeCause(
        set({}, { observedGeneration: 0 }),
        set({}, { observedGeneration: 1, rollout: { state: 'Progressing' } }),
      ),
    ).toBeUndefined();
    expect(releaseSetChangeCause(set(), set({ annotations: { 'example.com/owner': 'me' } }))).toBeUndefined();
    expect(releaseSetChangeCause(set(), undefined)).toBeUndefined();
  });
});

describe('fleet triggers: Clusters', () => {
  const cluster = (labels?: Record<string, string>, annotations?: Record<string, string>) => ({
    metadata: {
      name: 'prod-eu',
      ...(labels === undefined ? {} : { labels }),
      ...(annotations === undefined ? {} : { annotations }),
    },
  });
  it('added, deleted or relabelled counts; a spec-only or unchanged-label update does not', () => {
    expect(clusterChangeCause(undefined, cluster())).toBe('Cluster prod-eu added');
    expect(clusterChangeCause(cluster(), undefined)).toBe('Cluster prod-eu deleted');
    expect(clusterChangeCause(cluster({ env: 'prod' }), cluster({ env: 'staging' }))).toBe(
      'Cluster prod-eu relabelled',
    );
    expect(clusterChangeCause(cluster({ env: 'prod' }), cluster({ env: 'prod', tier: '1' }))).toBe(
      'Cluster prod-eu relabelled',
    );
    expect(clusterChangeCause(cluster({ env: 'prod' }), cluster({ env: 'prod' }))).toBeUndefined();
    expect(clusterChangeCause(cluster(), cluster({}))).toBeUndefined();
  });

  it('an annotation added, changed or removed counts (${cluster.annotations.<k>} may read it): reannotated', () => {
    expect(
      clusterChangeCause(cluster({ env: 'prod' }), cluster({ env: 'prod' }, { region: 'eu-west-1' })),
    ).toBe('Cluster prod-eu reannotated');
    expect(
      clusterChangeCause(cluster({}, { region: 'eu-west-1' }), cluster({}, { region: 'eu-central-1' })),
    ).toBe('Cluster prod-eu reannotated');
    expect(
      clusterChangeCause(
        cluster({}, { region: 'eu-west-1', team: 'a' }),
        cluster({}, { region: 'eu-west-1' }),
      ),
    ).toBe('Cluster prod-eu reannotated');
    expect(clusterChangeCause(cluster({}, { region: 'eu-west-1' }), cluster({}, { zone: 'eu-west-1' }))).toBe(
      'Cluster prod-eu reannotated',
    );
    // Labels and annotations at once: one cause (one message either way).
    expect(
      clusterChangeCause(cluster({ env: 'prod' }, { a: '1' }), cluster({ env: 'dev' }, { a: '2' })),
    ).toBe('Cluster prod-eu relabelled');
    expect(
      clusterChangeCause(cluster({}, { region: 'eu-west-1' }), cluster({}, { region: 'eu-west-1' })),
    ).toBeUndefined();
  });

  it("kubectl's last-applied-configuration, a status-only or a resourceVersion-only change sends nothing", () => {
    const LAST = 'kubectl.kubernetes.io/last-applied-configuration';
    expect(
      clusterChangeCause(
        cluster({}, { region: 'eu', [LAST]: '{"v":1}' }),
        cluster({}, { region: 'eu', [LAST]: '{"v":2}' }),
      ),
    ).toBeUndefined();
    expect(
      clusterChangeCause(cluster({}, { region: 'eu' }), cluster({}, { region: 'eu', [LAST]: '{"v":1}' })),
    ).toBeUndefined();
    expect(clusterChangeCause(cluster({}, { [LAST]: '{"v":1}' }), cluster({}, {}))).toBeUndefined();
    const raw = (resourceVersion: string, status: unknown, annotations: Record<string, string>) => ({
      apiVersion: 'convoy.dev/v1alpha1',
      kind: 'Cluster',
      metadata: {
        name: 'prod-eu',
        namespace: 'team-a',
        uid: 'c1',
        resourceVersion,
        generation: 1,
        labels: { env: 'prod' },
        annotations,
      },
      spec: { inCluster: true },
      status,
    });
    // On the relay's slim copies, as the watch hands them over.
    const before = slimCluster(raw('1', { ready: false }, { region: 'eu', [LAST]: '{"v":1}' }));
    expect(
      clusterChangeCause(before, slimCluster(raw('2', { ready: true }, { region: 'eu', [LAST]: '{"v":1}' }))),
    ).toBeUndefined();
    expect(
      clusterChangeCause(
        before,
        slimCluster(raw('3', { ready: false }, { region: 'eu', [LAST]: '{"v":2}' })),
      ),
    ).toBeUndefined();
    expect(
      clusterChangeCause(
        before,
        slimCluster(raw('4', { ready: false }, { region: 'us', [LAST]: '{"v":1}' })),
      ),
    ).toBe('Cluster prod-eu reannotated');
  });

  it('the slim Cluster drops last-applied-configuration and keeps a long value as its digest, which still tells a change', () => {
    const long = (c: string) => c.repeat(CLUSTER_ANNOTATION_VALUE_CHARS + 1);
    const slim = (annotations: Record<string, string>) =>
      slimCluster({ metadata: { name: 'prod-eu', namespace: 'team-a', annotations } }) as ReturnType<
        typeof cluster
      >;
    const kept = slim({
      region: 'eu',
      big: long('x'),
      'kubectl.kubernetes.io/last-applied-configuration': long('{'),
    });
    expect(Object.keys(kept.metadata.annotations ?? {}).sort()).toEqual(['big', 'region']);
    expect(kept.metadata.annotations?.['region']).toBe('eu');
    expect(kept.metadata.annotations?.['big']).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(clusterChangeCause(kept, slim({ region: 'eu', big: long('x') }))).toBeUndefined();
    expect(clusterChangeCause(kept, slim({ region: 'eu', big: long('y') }))).toBe(
      'Cluster prod-eu reannotated',
    );
    expect(slim({ 'kubectl.kubernetes.io/last-applied-configuration': '{}' }).metadata).toEqual({
      name: 'prod-eu',
      namespace: 'team-a',
    });
  });
});

describe('fleet triggers: child Releases (their combined verdict, not their status)', () => {
  it('a verdict change notifies the set the child is labelled with', () => {
    expect(childVerdictKey(child('True'))).toBe('Ready/Assessed');
    expect(childVerdictKey(child('Progressing'))).toBe('wait/Healthy');
    expect(childVerdictNotices(child('Progressing'), child('True'))).toEqual([
      { set: 'web', cause: 'child Release web-prod verdict wait/Healthy → Ready/Assessed' },
    ]);
    expect(childVerdictNotices(child('True'), child('False'))).toEqual([
      { set: 'web', cause: 'child Release web-prod verdict Ready/Assessed → failure/Healthy' },
    ]);
  });

  it('a status change that leaves the verdict as it is notifies nobody', () => {
    expect(childVerdictNotices(child('True'), child('True', { checkedAt: '2026-01-01T00:05:00Z' }))).toEqual(
      [],
    );
    expect(childVerdictNotices(child('False', { message: 'a' }), child('False', { message: 'b' }))).toEqual(
      [],
    );
  });

  it('a child added or deleted notifies its set; moving between sets notifies both; an unlabelled Release nobody', () => {
    expect(childVerdictNotices(undefined, child('True'))).toEqual([
      { set: 'web', cause: 'child Release web-prod added' },
    ]);
    expect(childVerdictNotices(child('True'), undefined)).toEqual([
      { set: 'web', cause: 'child Release web-prod deleted' },
    ]);
    expect(
      childVerdictNotices(child('True'), child('True', { labels: { 'convoy.dev/release-set': 'api' } })),
    ).toEqual([
      { set: 'web', cause: 'child Release web-prod left the set' },
      { set: 'api', cause: 'child Release web-prod joined the set' },
    ]);
    expect(childVerdictNotices(child('True', { labels: {} }), child('False', { labels: {} }))).toEqual([]);
    expect(childVerdictNotices(undefined, release())).toEqual([]);
  });
});

/**
 * A child of set `web` as the relay keeps it (its slim copy, relay/watch/slim.ts): at `generation`,
 * its conditions at `observed` (default the generation), Ready or waiting on InSync, written by
 * the set at `revision`.
 */
const slimChild = (o: {
  generation?: number;
  observed?: number;
  insync?: 'True' | 'Unknown';
  revision?: string;
  annotations?: Record<string, string>;
}): Release => {
  const generation = o.generation ?? 1;
  const observed = o.observed ?? generation;
  const at = (c: ReturnType<typeof condition>) => ({ ...c, observedGeneration: observed });
  const full = release({
    name: 'web-prod',
    generation,
    labels: { 'convoy.dev/release-set': 'web' },
    annotations: {
      'kubectl.kubernetes.io/last-applied-configuration': '{}',
      'bench.convoy.dev/greeting': 'hello',
      ...(o.revision === undefined ? {} : { 'convoy.dev/release-set-revision': o.revision }),
      ...o.annotations,
    },
    status: {
      observedGeneration: observed,
      lastAttempted: { attemptedAt: '2026-01-01T00:00:00Z', phase: 'Succeeded', renderRef: REF },
      lastSuccessful: { attemptedAt: '2026-01-01T00:00:00Z', phase: 'Succeeded', renderRef: REF },
      conditions: [
        at(condition('Applied', 'True', 'Applied')),
        at(
          o.insync === 'Unknown'
            ? condition('InSync', 'Unknown', 'Pending')
            : condition('InSync', 'True', 'InSync'),
        ),
        at(condition('Healthy', 'True', 'NotConfigured')),
      ],
    },
  });
  return slimRelease(full as unknown as Parameters<typeof slimRelease>[0]) as unknown as Release;
};

describe("fleet triggers: what the set sees of a child, on the relay's slim copies", () => {
  it('the slim copy keeps the revision and set-pin annotations the set reads, and drops the others', () => {
    const kept = slimChild({ revision: 'rev-a', annotations: { 'convoy.dev/release-set-pin': REF } }).metadata
      .annotations;
    expect(kept).toEqual({ 'convoy.dev/release-set-revision': 'rev-a', 'convoy.dev/release-set-pin': REF });
  });

  it('a template change that leaves the child spec as it is (the bench rollout 2): the child moves to the new revision, Ready throughout, and its set hears of it', () => {
    expect(childVerdictKey(slimChild({ revision: 'rev-a' }))).toBe('Ready/NotConfigured');
    expect(childVerdictNotices(slimChild({ revision: 'rev-a' }), slimChild({ revision: 'rev-b' }))).toEqual([
      { set: 'web', cause: 'child Release web-prod at revision rev-b (Ready/NotConfigured)' },
    ]);
  });

  it('a child whose generation changes and goes back to Ready notifies its set at each step', () => {
    const ready1 = slimChild({ generation: 1, revision: 'rev-a' });
    // The set writes the new spec: generation 2, every condition still at 1.
    const written = slimChild({ generation: 2, observed: 1, revision: 'rev-b' });
    // The reconcile applied it; InSync is Pending at 2 until the drift check.
    const applied = slimChild({ generation: 2, insync: 'Unknown', revision: 'rev-b' });
    const ready2 = slimChild({ generation: 2, revision: 'rev-b' });
    expect(childVerdictNotices(ready1, written)).toEqual([
      { set: 'web', cause: 'child Release web-prod verdict Ready/NotConfigured → wait/ObservedGeneration' },
    ]);
    expect(childVerdictNotices(written, applied)).toEqual([
      { set: 'web', cause: 'child Release web-prod verdict wait/ObservedGeneration → wait/InSync' },
    ]);
    expect(childVerdictNotices(applied, ready2)).toEqual([
      { set: 'web', cause: 'child Release web-prod verdict wait/InSync → Ready/NotConfigured' },
    ]);
    // The same Ready again (a later health or drift tick): nothing.
    expect(childVerdictNotices(ready2, slimChild({ generation: 2, revision: 'rev-b' }))).toEqual([]);
  });

  it("a user's pin holds the child: pinning and unpinning notify its set; the set's own rollback pin and other annotations do not", () => {
    const unpinned = slimChild({ revision: 'rev-a' });
    const pinned = slimChild({ revision: 'rev-a', annotations: { 'convoy.dev/pin': REF } });
    expect(childVerdictNotices(unpinned, pinned)).toEqual([
      { set: 'web', cause: 'child Release web-prod pinned by its user' },
    ]);
    expect(childVerdictNotices(pinned, unpinned)).toEqual([
      { set: 'web', cause: 'child Release web-prod unpinned by its user' },
    ]);
    const setPinned = slimChild({
      revision: 'rev-a',
      annotations: { 'convoy.dev/pin': REF, 'convoy.dev/release-set-pin': REF },
    });
    expect(childVerdictNotices(unpinned, setPinned)).toEqual([]);
    expect(
      childVerdictNotices(
        unpinned,
        slimChild({ revision: 'rev-a', annotations: { 'example.com/owner': 'b' } }),
      ),
    ).toEqual([]);
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
    for (let i = 1; i < sends.length; i++)
      expect(sends[i] - sends[i - 1]).toBeGreaterThanOrEqual(FLEET_COALESCE_RULE.minSpacingMs);
  });

  it('the fleet rule applies to the fleet loop only; the Release loops keep theirs', () => {
    const buffer = createCoalesceBuffer(DEFAULT_COALESCE_RULE, { fleet: FLEET_COALESCE_RULE });
    buffer.add('fleet', key, 'set', 0);
    buffer.add('reconcile', key, 'release', 0);
    expect(buffer.takeDue(DEFAULT_COALESCE_RULE.windowMs).map((s) => s.loop)).toEqual(['reconcile']);
    expect(buffer.takeDue(FLEET_COALESCE_RULE.windowMs)).toMatchObject([
      { loop: 'fleet', cause: 'set', count: 1 },
    ]);
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
