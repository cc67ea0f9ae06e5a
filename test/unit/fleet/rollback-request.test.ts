// The manual fleet rollback: convoy.dev/rollback=<status.revision.id> on the set.
import { describe, expect, it } from 'vitest';
import type { ReleaseSet } from '../../../domain/api/release-set.ts';
import { FleetStops } from '../../../domain/fleet/stops.ts';
import { at, cluster, COMMIT_B, FakeNamespace, gitSource, reconcile, releaseSet } from './fleet-fixtures.ts';

const fleet = [
  cluster('canary-1', { ring: 'canary' }),
  cluster('eu-1', { ring: 'prod' }),
  cluster('us-1', { ring: 'prod' }),
];
const spec = {
  rollout: {
    maxConcurrent: '100%',
    steps: [{ name: 'canary', clusters: { matchLabels: { ring: 'canary' } } }],
  },
};

const condition = (set: ReleaseSet, type: string) => set.status?.conditions?.find((c) => c.type === type);
const annotate = (set: ReleaseSet, annotations: Record<string, string>): ReleaseSet => ({
  ...set,
  metadata: { ...set.metadata, annotations },
});

/** Revision A rolled out everywhere (lastSucceededRevision), then revision B's canary updated and not ready yet. */
function midRolloutOfB() {
  const ns = new FakeNamespace();
  let r = reconcile(releaseSet(spec), ns, { clusters: fleet, now: at(0) });
  ns.makeReady('web-canary-1');
  r = reconcile(r.set, ns, { clusters: fleet, now: at(10) });
  for (const n of ['web-eu-1', 'web-us-1']) ns.makeReady(n);
  r = reconcile(r.set, ns, { clusters: fleet, now: at(20) });
  expect(r.decision.stop).toBe('succeeded');
  const a = r.decision.status.revision!;
  const renderA = ns.releases.get('web-canary-1')!.status!.lastSuccessful!.renderRef!;
  r = reconcile(r.set, ns, { clusters: fleet, source: gitSource(COMMIT_B), now: at(100) });
  expect(r.decision.writes.map((w) => w.name)).toEqual(['web-canary-1']);
  const b = r.decision.status.revision!;
  return { ns, set: r.set, a, b, renderA };
}

describe('convoy.dev/rollback: a manual fleet rollback', () => {
  it('rolls every updated Cluster back to lastSucceededRevision at once: RolledBack/RollbackRequested, once per revision', () => {
    const { ns, set, a, b, renderA } = midRolloutOfB();
    let r = reconcile(annotate(set, { 'convoy.dev/rollback': b.id }), ns, {
      clusters: fleet,
      source: gitSource(COMMIT_B),
      now: at(110),
    });
    expect(r.decision.stop).toBe('rollbackRequested');
    expect(FleetStops.rollbackRequested).toMatchObject({
      status: 'False',
      reason: 'RollbackRequested',
      retry: false,
      recheck: 'none',
    });
    expect(r.decision.status.rollout).toMatchObject({ state: 'RolledBack', stepName: 'canary' });
    expect(r.decision.writes).toEqual([
      expect.objectContaining({
        action: 'rollback',
        name: 'web-canary-1',
        renderRef: renderA,
        toRevision: a,
      }),
    ]);
    expect(condition(r.set, 'RolloutSucceeded')).toMatchObject({
      status: 'False',
      reason: 'RollbackRequested',
    });
    expect(condition(r.set, 'RolloutSucceeded')?.message).toBe(
      `rollback requested (convoy.dev/rollback=${b.id}): rolled back 1 Clusters to revision ${a.id} (lastSucceededRevision)`,
    );
    expect(r.decision.events.map((e) => `${e.type}:${e.reason}`)).toEqual(['Warning:RollbackRequested']);
    expect(r.decision.status.lastSucceededRevision).toEqual(a);
    // Once: the next reconciles write nothing more (the pin is on) and keep the reason and message.
    r = reconcile(r.set, ns, { clusters: fleet, source: gitSource(COMMIT_B), now: at(120) });
    expect(r.decision.stop).toBe('rollbackRequested');
    expect(r.decision.writes).toEqual([]);
    expect(r.decision.events).toEqual([]);
    expect(condition(r.set, 'RolloutSucceeded')?.message).toContain('rollback requested');
    // The eu/us Clusters never left revision A: nothing else was written.
    expect(ns.releases.get('web-eu-1')!.metadata.annotations?.['convoy.dev/release-set-revision']).toBe(a.id);
  });

  it('while paused the request is recorded (RolledBack) and its writes wait for the unpause', () => {
    const { ns, set, b } = midRolloutOfB();
    const paused = {
      ...annotate(set, { 'convoy.dev/rollback': b.id }),
      spec: { ...set.spec, rollout: { ...set.spec.rollout, paused: true } },
    };
    let r = reconcile(paused, ns, { clusters: fleet, source: gitSource(COMMIT_B), now: at(110) });
    expect(r.decision.status.rollout?.state).toBe('RolledBack');
    expect(r.decision.writes).toEqual([]);
    r = reconcile({ ...r.set, spec: set.spec }, ns, {
      clusters: fleet,
      source: gitSource(COMMIT_B),
      now: at(120),
    });
    expect(r.decision.writes.map((w) => `${w.action}:${w.name}`)).toEqual(['rollback:web-canary-1']);
  });

  it('a Halted rollout can be rolled back by request', () => {
    const ns = new FakeNamespace();
    let r = reconcile(releaseSet(spec), ns, { clusters: fleet, now: at(0) });
    ns.makeReady('web-canary-1');
    r = reconcile(r.set, ns, { clusters: fleet, now: at(10) });
    for (const n of ['web-eu-1', 'web-us-1']) ns.makeReady(n);
    r = reconcile(r.set, ns, { clusters: fleet, now: at(20) });
    r = reconcile(r.set, ns, { clusters: fleet, source: gitSource(COMMIT_B), now: at(100) });
    ns.makeFailing('web-canary-1');
    r = reconcile(r.set, ns, { clusters: fleet, source: gitSource(COMMIT_B), now: at(110) });
    expect(r.decision.status.rollout?.state).toBe('Halted');
    r = reconcile(annotate(r.set, { 'convoy.dev/rollback': r.set.status!.revision!.id }), ns, {
      clusters: fleet,
      source: gitSource(COMMIT_B),
      now: at(120),
    });
    expect(r.decision.status.rollout?.state).toBe('RolledBack');
    expect(r.decision.writes.map((w) => `${w.action}:${w.name}`)).toEqual(['rollback:web-canary-1']);
    expect(r.decision.status.failing?.map((f) => f.cluster)).toEqual(['canary-1']);
  });

  it('a stale revision id is ignored with a note; the rollout goes on', () => {
    const { ns, set, a, b } = midRolloutOfB();
    const r = reconcile(annotate(set, { 'convoy.dev/rollback': a.id }), ns, {
      clusters: fleet,
      source: gitSource(COMMIT_B),
      now: at(110),
    });
    expect(r.decision.stop).toBe('waitingForBatchHealth');
    expect(r.decision.status.rollout?.state).toBe('Progressing');
    expect(r.decision.writes.every((w) => w.action === 'apply')).toBe(true);
    expect(condition(r.set, 'RolloutSucceeded')?.message).toContain(
      `; convoy.dev/rollback=${a.id} names another revision than the current ${b.id}: ignored (a rollback request holds for the revision it names)`,
    );
  });

  it('without lastSucceededRevision: a clear message, nothing written for it', () => {
    const ns = new FakeNamespace();
    let r = reconcile(releaseSet(spec), ns, { clusters: fleet, now: at(0) });
    const id = r.set.status!.revision!.id;
    r = reconcile(annotate(r.set, { 'convoy.dev/rollback': id }), ns, { clusters: fleet, now: at(10) });
    expect(r.decision.stop).toBe('waitingForBatchHealth');
    expect(r.decision.writes.some((w) => w.action === 'rollback')).toBe(false);
    expect(r.set.status?.lastSucceededRevision).toBeUndefined();
    expect(condition(r.set, 'RolloutSucceeded')?.message).toContain(
      `convoy.dev/rollback=${id} cannot be done: no revision of this set has succeeded yet (status.lastSucceededRevision is empty), so there is nothing to roll back to; nothing was written for it`,
    );
  });

  it('a revision that itself succeeded last has nothing older to go back to', () => {
    const ns = new FakeNamespace();
    let r = reconcile(releaseSet({}), ns, { clusters: fleet, now: at(0) });
    for (const n of ['web-canary-1', 'web-eu-1', 'web-us-1']) ns.makeReady(n);
    r = reconcile(r.set, ns, { clusters: fleet, now: at(10) });
    expect(r.decision.stop).toBe('succeeded');
    r = reconcile(annotate(r.set, { 'convoy.dev/rollback': r.set.status!.revision!.id }), ns, {
      clusters: fleet,
      now: at(20),
    });
    expect(r.decision.stop).toBe('succeeded');
    expect(r.decision.writes).toEqual([]);
    expect(condition(r.set, 'RolloutSucceeded')?.message).toContain(
      'is itself the last that succeeded, so there is nothing older to roll back to',
    );
  });
});
