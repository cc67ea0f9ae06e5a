import { describe, expect, it } from 'vitest';
import { decideFleet, withWriteFailures } from '../../../domain/fleet/decide-fleet.ts';
import {
  at,
  cluster,
  COMMIT_A,
  COMMIT_B,
  FakeNamespace,
  gitSource,
  reconcile,
  releaseSet,
  SET_UID,
} from './fleet-fixtures.ts';

const fleet = [
  cluster('canary-1', { ring: 'canary' }),
  cluster('eu-1', { ring: 'prod', region: 'eu' }),
  cluster('eu-2', { ring: 'prod', region: 'eu' }),
  cluster('us-1', { ring: 'prod', region: 'us' }),
];

const condition = (
  status: { conditions?: { type: string; status: string; reason: string; message: string }[] } | undefined,
  type: string,
) => status?.conditions?.find((c) => c.type === type);

describe('decideFleet: a rollout step by step', () => {
  const spec = {
    rollout: {
      maxConcurrent: 1,
      minHealthyTime: '5m',
      steps: [{ name: 'canary', clusters: { matchLabels: { ring: 'canary' } } }],
    },
  };

  it('writes the canary first, waits for its health, soaks, then moves on; the rest is the implicit last step', () => {
    const ns = new FakeNamespace();
    let set = releaseSet(spec);
    let r = reconcile(set, ns, { clusters: fleet, now: at(0) });
    expect(r.decision.writes.map((w) => `${w.action}:${w.name}`)).toEqual(['apply:web-canary-1']);
    expect(r.decision.stop).toBe('waitingForBatchHealth');
    expect(r.decision.requeueAfterSeconds).toBe(30);
    expect(r.decision.status.rollout).toMatchObject({
      state: 'Progressing',
      step: 0,
      stepName: 'canary',
      stepStartedAt: '2026-01-01T12:00:00Z',
    });
    expect(r.decision.status.steps?.map((s) => `${s.name}:${s.state}:${s.clusters}`)).toEqual([
      'canary:Progressing:1',
      '(remaining):Pending:3',
    ]);
    expect(condition(r.decision.status, 'Generated')).toMatchObject({ status: 'True', reason: 'Generated' });
    expect(condition(r.decision.status, 'RolloutSucceeded')).toMatchObject({
      status: 'False',
      reason: 'WaitingForBatchHealth',
    });

    const child = ns.releases.get('web-canary-1')!;
    expect(child.spec.cluster.name).toBe('canary-1');
    expect(child.spec.source.git?.ref).toEqual({ commit: COMMIT_A });
    expect(child.metadata.labels).toMatchObject({
      'convoy.dev/release-set': 'web',
      'convoy.dev/cluster': 'canary-1',
    });
    expect((child.metadata as { ownerReferences?: unknown[] }).ownerReferences).toEqual([
      {
        apiVersion: 'convoy.dev/v1alpha1',
        kind: 'ReleaseSet',
        name: 'web',
        uid: SET_UID,
        controller: true,
        blockOwnerDeletion: true,
      },
    ]);
    set = r.set;

    // Not ready yet: nothing new.
    r = reconcile(set, ns, { clusters: fleet, now: at(10) });
    expect(r.decision.writes).toEqual([]);
    set = r.set;

    ns.makeReady('web-canary-1');
    r = reconcile(set, ns, { clusters: fleet, now: at(20) });
    expect(r.decision.stop).toBe('waitingForMinHealthyTime');
    expect(r.decision.requeueAfterSeconds).toBe(300);
    expect(r.decision.status.rollout?.healthySince).toBe('2026-01-01T12:00:20Z');
    expect(r.decision.status.steps?.[0]?.state).toBe('Soaking');
    set = r.set;

    // A restart mid-soak: the status alone says how long is left.
    r = reconcile(set, ns, { clusters: fleet, now: at(200) });
    expect(r.decision.stop).toBe('waitingForMinHealthyTime');
    expect(r.decision.requeueAfterSeconds).toBe(120);
    set = r.set;

    r = reconcile(set, ns, { clusters: fleet, now: at(320) });
    expect(r.decision.writes.map((w) => w.name)).toEqual(['web-eu-1']);
    expect(r.decision.status.rollout).toMatchObject({
      step: 1,
      stepName: '(remaining)',
      stepStartedAt: '2026-01-01T12:05:20Z',
    });
    expect(r.decision.status.steps?.[0]).toMatchObject({
      state: 'Succeeded',
      finishedAt: '2026-01-01T12:05:20Z',
    });
    expect(r.decision.events.map((e) => e.reason)).toEqual(['StepSucceeded', 'StepStarted']);
    set = r.set;

    for (const [i, name] of ['web-eu-1', 'web-eu-2', 'web-us-1'].entries()) {
      ns.makeReady(name);
      r = reconcile(set, ns, { clusters: fleet, now: at(400 + i * 10) });
      set = r.set;
    }
    expect(r.decision.stop).toBe('waitingForMinHealthyTime');
    r = reconcile(set, ns, { clusters: fleet, now: at(1000) });
    expect(r.decision.stop).toBe('succeeded');
    expect(r.decision.status.rollout?.state).toBe('Succeeded');
    expect(r.decision.status.lastSucceededRevision).toEqual(r.decision.status.revision);
    expect(r.decision.status.clusters).toEqual({ selected: 4, updated: 4, ready: 4, waiting: 0, failed: 0 });
    expect(r.decision.status.releaseConditions?.Healthy).toEqual({ True: 4, False: 0, Unknown: 0 });
    expect(condition(r.decision.status, 'RolloutSucceeded')).toMatchObject({
      status: 'True',
      reason: 'Succeeded',
    });
    expect(r.decision.requeueAfterSeconds).toBeUndefined();
  });

  it('keeps at most maxConcurrent Clusters in flight; a percentage is of the step, rounded up', () => {
    const ns = new FakeNamespace();
    const clusters = Array.from({ length: 10 }, (_, i) => cluster(`c-${String(i).padStart(2, '0')}`));
    let set = releaseSet({ rollout: { maxConcurrent: '25%' } });
    let r = reconcile(set, ns, { clusters, now: at(0) });
    expect(r.decision.writes.map((w) => w.name)).toEqual(['web-c-00', 'web-c-01', 'web-c-02']);
    set = r.set;
    ns.makeReady('web-c-00');
    r = reconcile(set, ns, { clusters, now: at(5) });
    expect(r.decision.writes.map((w) => w.name)).toEqual(['web-c-03']);
  });

  it('a new commit during a rollout does not change its revision; after it, it starts a new one', () => {
    const ns = new FakeNamespace();
    let set = releaseSet({ rollout: { maxConcurrent: 1 } });
    let r = reconcile(set, ns, { clusters: fleet.slice(0, 2), now: at(0) });
    const first = r.decision.status.revision!;
    set = r.set;
    ns.makeReady('web-canary-1');
    r = reconcile(set, ns, { clusters: fleet.slice(0, 2), source: gitSource(COMMIT_B), now: at(10) });
    expect(r.decision.status.revision).toEqual(first);
    expect(ns.releases.get('web-eu-1')?.spec.source.git?.ref).toEqual({ commit: COMMIT_A });
    set = r.set;
    ns.makeReady('web-eu-1');
    r = reconcile(set, ns, { clusters: fleet.slice(0, 2), source: gitSource(COMMIT_B), now: at(20) });
    expect(r.decision.stop).toBe('succeeded');
    set = r.set;
    r = reconcile(set, ns, { clusters: fleet.slice(0, 2), source: gitSource(COMMIT_B), now: at(30) });
    expect(r.decision.status.revision?.id).not.toBe(first.id);
    expect(r.decision.status.revision?.source.git?.commit).toBe(COMMIT_B);
    expect(r.decision.status.lastSucceededRevision?.id).toBe(first.id);
    expect(r.decision.writes.map((w) => w.name)).toEqual(['web-canary-1']);
    expect(
      ns.releases.get('web-canary-1')?.metadata.annotations?.['convoy.dev/release-set-previous-revision'],
    ).toBe(first.id);
  });
});

describe('decideFleet: approval and pause', () => {
  const spec = {
    rollout: {
      steps: [
        { name: 'canary', clusters: { matchLabels: { ring: 'canary' } } },
        { name: 'prod', clusters: { matchLabels: { ring: 'prod' } }, approval: 'Required' },
      ],
    },
  };

  it('waits for convoy.dev/approve=<step>@<revision> before writing anything of the step', () => {
    const ns = new FakeNamespace();
    let set = releaseSet(spec);
    let r = reconcile(set, ns, { clusters: fleet, now: at(0) });
    set = r.set;
    ns.makeReady('web-canary-1');
    r = reconcile(set, ns, { clusters: fleet, now: at(10) });
    expect(r.decision.stop).toBe('waitingForApproval');
    expect(r.decision.writes).toEqual([]);
    const revision = r.decision.status.revision!.id;
    expect(condition(r.decision.status, 'RolloutSucceeded')?.message).toContain(
      `convoy.dev/approve=prod@${revision}`,
    );
    expect(r.decision.status.rollout).toMatchObject({ state: 'WaitingForApproval', stepName: 'prod' });
    expect(r.decision.status.rollout?.stepStartedAt).toBeUndefined();
    set = r.set;

    // An approval of another revision does not count.
    r = reconcile(
      {
        ...set,
        metadata: { ...set.metadata, annotations: { 'convoy.dev/approve': 'prod@0000000000000000' } },
      },
      ns,
      { clusters: fleet, now: at(20) },
    );
    expect(r.decision.stop).toBe('waitingForApproval');
    set = r.set;
    r = reconcile(
      { ...set, metadata: { ...set.metadata, annotations: { 'convoy.dev/approve': `prod@${revision}` } } },
      ns,
      { clusters: fleet, now: at(30) },
    );
    expect(r.decision.writes.map((w) => w.name)).toEqual(['web-eu-1', 'web-eu-2', 'web-us-1']);
    expect(r.decision.status.rollout).toMatchObject({
      state: 'Progressing',
      stepName: 'prod',
      stepStartedAt: '2026-01-01T12:00:30Z',
    });
  });

  it('paused: nothing is written or deleted; unpausing restarts the step clock', () => {
    const ns = new FakeNamespace();
    let set = releaseSet({ rollout: { paused: true } });
    let r = reconcile(set, ns, { clusters: fleet, now: at(0) });
    expect(r.decision.writes).toEqual([]);
    expect(r.decision.stop).toBe('paused');
    expect(r.decision.status.rollout?.state).toBe('Paused');
    expect(condition(r.decision.status, 'RolloutSucceeded')).toMatchObject({
      status: 'False',
      reason: 'Paused',
    });
    set = { ...r.set, spec: { ...r.set.spec, rollout: { ...r.set.spec.rollout, paused: false } } };
    r = reconcile(set, ns, { clusters: fleet, now: at(100) });
    expect(r.decision.writes).toHaveLength(4);
    expect(r.decision.status.rollout?.stepStartedAt).toBe('2026-01-01T12:01:40Z');
  });
});

describe('decideFleet: failures', () => {
  const spec = (onFailure: 'Halt' | 'RollbackFleet', extra: Record<string, unknown> = {}) => ({
    rollout: {
      onFailure,
      maxFailures: 0,
      stepTimeout: '10m',
      steps: [{ name: 'canary', clusters: { matchLabels: { ring: 'canary' } } }],
      ...extra,
    },
  });

  it('Halt: a failure over maxFailures halts the rollout, lists the failing Cluster, writes nothing more', () => {
    const ns = new FakeNamespace();
    let set = releaseSet(spec('Halt'));
    let r = reconcile(set, ns, { clusters: fleet, now: at(0) });
    set = r.set;
    ns.makeFailing('web-canary-1', 'Deployment fleet/web: 0/3 replicas available'.padEnd(600, '!'));
    r = reconcile(set, ns, { clusters: fleet, now: at(10) });
    expect(r.decision.stop).toBe('stepFailed');
    expect(r.decision.retry).toBe(false);
    expect(r.decision.writes).toEqual([]);
    expect(r.decision.status.rollout?.state).toBe('Halted');
    expect(condition(r.decision.status, 'RolloutSucceeded')).toMatchObject({
      status: 'False',
      reason: 'StepFailed',
    });
    expect(condition(r.decision.status, 'RolloutSucceeded')?.message).toContain(
      '1 of 1 Clusters failed, more than maxFailures 0 (canary-1)',
    );
    expect(r.decision.status.failing).toEqual([
      expect.objectContaining({
        cluster: 'canary-1',
        release: 'web-canary-1',
        signal: 'Healthy',
        reason: 'Degraded',
        since: '2026-01-01T00:00:00Z',
      }),
    ]);
    expect(r.decision.status.failing?.[0]?.message.length).toBe(256);
    expect(r.decision.status.steps?.[0]?.state).toBe('Failed');
    expect(r.decision.events.map((e) => `${e.type}:${e.reason}`)).toContain('Warning:StepFailed');
    set = r.set;
    // It stays halted, even once the child recovers.
    ns.makeReady('web-canary-1');
    r = reconcile(set, ns, { clusters: fleet, now: at(20) });
    expect(r.decision.status.rollout?.state).toBe('Halted');
    expect(r.decision.status.failing).toHaveLength(1);
    expect(r.decision.writes).toEqual([]);
  });

  it('a step past its stepTimeout fails with its not-ready Clusters', () => {
    const ns = new FakeNamespace();
    let set = releaseSet(spec('Halt'));
    let r = reconcile(set, ns, { clusters: fleet, now: at(0) });
    set = r.set;
    r = reconcile(set, ns, { clusters: fleet, now: at(599) });
    expect(r.decision.requeueAfterSeconds).toBe(1);
    set = r.set;
    r = reconcile(set, ns, { clusters: fleet, now: at(600) });
    expect(r.decision.stop).toBe('stepFailed');
    expect(condition(r.decision.status, 'RolloutSucceeded')?.message).toContain(
      'passed its stepTimeout with 1 of 1 Clusters not ready (canary-1)',
    );
    expect(r.decision.status.failing?.[0]).toMatchObject({ cluster: 'canary-1', reason: 'StepTimeout' });
  });

  it('RollbackFleet: every Cluster the rollout updated goes back to lastSucceededRevision, pinned to the render it ran', () => {
    const ns = new FakeNamespace();
    let set = releaseSet(spec('RollbackFleet', { maxConcurrent: '100%' }));
    // Revision A everywhere.
    let r = reconcile(set, ns, { clusters: fleet, now: at(0) });
    set = r.set;
    ns.makeReady('web-canary-1');
    r = reconcile(set, ns, { clusters: fleet, now: at(10) });
    set = r.set;
    for (const n of ['web-eu-1', 'web-eu-2', 'web-us-1']) ns.makeReady(n);
    r = reconcile(set, ns, { clusters: fleet, now: at(20) });
    expect(r.decision.stop).toBe('succeeded');
    const a = r.decision.status.revision!;
    const renderA = ns.releases.get('web-canary-1')!.status!.lastSuccessful!.renderRef!;
    set = r.set;
    // Revision B: the canary fails.
    r = reconcile(set, ns, { clusters: fleet, source: gitSource(COMMIT_B), now: at(100) });
    expect(r.decision.writes.map((w) => w.name)).toEqual(['web-canary-1']);
    set = r.set;
    ns.makeFailing('web-canary-1');
    r = reconcile(set, ns, { clusters: fleet, source: gitSource(COMMIT_B), now: at(110) });
    expect(r.decision.stop).toBe('rolledBack');
    expect(r.decision.status.rollout?.state).toBe('RolledBack');
    expect(r.decision.writes).toEqual([
      expect.objectContaining({
        action: 'rollback',
        name: 'web-canary-1',
        renderRef: renderA,
        toRevision: a,
      }),
    ]);
    const rollback = r.decision.writes[0];
    expect(rollback.action === 'rollback' && rollback.release.metadata.annotations).toMatchObject({
      'convoy.dev/pin': renderA,
      'convoy.dev/release-set-pin': renderA,
    });
    expect(condition(r.decision.status, 'RolloutSucceeded')).toMatchObject({
      status: 'False',
      reason: 'RolledBack',
    });
    expect(condition(r.decision.status, 'RolloutSucceeded')?.message).toContain(
      `rolled back 1 Clusters to revision ${a.id}`,
    );
    expect(r.decision.status.failing?.map((f) => f.cluster)).toEqual(['canary-1']);
    expect(r.decision.status.lastSucceededRevision).toEqual(a);
    set = r.set;
    // Done once: the pin is the set's (not a user's), nothing more to write; failing stays listed.
    r = reconcile(set, ns, { clusters: fleet, source: gitSource(COMMIT_B), now: at(120) });
    expect(r.decision.writes).toEqual([]);
    expect(r.decision.status.held).toEqual([]);
    expect(r.decision.status.failing?.map((f) => f.cluster)).toEqual(['canary-1']);
  });

  it('RollbackFleet without any succeeded revision halts and says so', () => {
    const ns = new FakeNamespace();
    let set = releaseSet(spec('RollbackFleet'));
    let r = reconcile(set, ns, { clusters: fleet, now: at(0) });
    set = r.set;
    ns.makeFailing('web-canary-1');
    r = reconcile(set, ns, { clusters: fleet, now: at(10) });
    expect(r.decision.status.rollout?.state).toBe('Halted');
    expect(condition(r.decision.status, 'RolloutSucceeded')?.message).toContain('nothing to roll back to');
  });
});

describe('decideFleet: where a reconcile stops before the rollout', () => {
  it('source not resolvable: SourceNotReady is retried, Unsupported is not; nothing is written', () => {
    const set = releaseSet({});
    const notReady = decideFleet({
      set,
      clusters: { ok: true, clusters: fleet },
      source: { ok: false, reason: 'SourceNotReady', message: 'git ls-remote: timeout' },
      releases: [],
      now: at(0),
    });
    expect(notReady).toMatchObject({ stop: 'sourceNotReady', retry: true, writes: [] });
    expect(condition(notReady.status, 'Generated')).toMatchObject({
      status: 'False',
      reason: 'SourceNotReady',
      message: 'spec.template.spec.source: git ls-remote: timeout',
    });
    const unsupported = decideFleet({
      set,
      clusters: { ok: true, clusters: fleet },
      source: { ok: false, reason: 'Unsupported', message: 'ssh URLs' },
      releases: [],
      now: at(0),
    });
    expect(unsupported).toMatchObject({ stop: 'sourceUnsupported', retry: false });
  });

  it('a Cluster read that fails is ClusterNotReady, retried, and deletes nothing', () => {
    const ns = new FakeNamespace();
    const r = reconcile(releaseSet({}), ns, { clusters: fleet, now: at(0) });
    const d = decideFleet({
      set: r.set,
      clusters: { ok: false, message: 'apiserver 503' },
      source: gitSource(),
      releases: ns.list(),
      now: at(10),
    });
    expect(d).toMatchObject({ stop: 'clusterReadFailed', retry: true, writes: [] });
    expect(condition(d.status, 'Generated')).toMatchObject({ status: 'False', reason: 'ClusterNotReady' });
    expect(d.status.rollout).toEqual(r.set.status?.rollout);
  });

  it('no Cluster matches: Generated False/NoClusters, nothing deleted', () => {
    const ns = new FakeNamespace();
    const r = reconcile(releaseSet({}), ns, { clusters: fleet, now: at(0) });
    const set = {
      ...r.set,
      spec: {
        ...r.set.spec,
        clusters: { ...r.set.spec.clusters, selector: { matchLabels: { ring: 'nope' } } },
      },
    };
    const d = decideFleet({
      set,
      clusters: { ok: true, clusters: fleet },
      source: gitSource(),
      releases: ns.list(),
      now: at(10),
    });
    expect(d).toMatchObject({ stop: 'noClusters', retry: false, writes: [] });
    expect(condition(d.status, 'Generated')).toMatchObject({ status: 'False', reason: 'NoClusters' });
  });

  it('an unknown variable fails the whole set, naming the Cluster and the field', () => {
    const set = releaseSet({
      template: {
        spec: {
          targetNamespace: 'app-${cluster.labels.region}',
          source: { git: { url: 'https://git.example/apps.git', ref: { branch: 'main' } } },
        },
      },
    });
    const d = decideFleet({
      set,
      clusters: { ok: true, clusters: fleet },
      source: gitSource(),
      releases: [],
      now: at(0),
    });
    expect(d.writes).toEqual([]);
    expect(condition(d.status, 'Generated')).toMatchObject({
      status: 'False',
      reason: 'TemplateFailed',
      message:
        'Cluster canary-1: spec.template.spec.targetNamespace: Cluster canary-1 has no label "region" (${cluster.labels.region})',
    });
    expect(condition(d.status, 'RolloutSucceeded')).toMatchObject({ status: 'Unknown' });
  });

  it('a template that renders an invalid Release names the field', () => {
    const set = releaseSet({
      template: {
        spec: {
          syncPolicy: { interval: '${cluster.name}' },
          source: { git: { url: 'https://git.example/apps.git', ref: { branch: 'main' } } },
        },
      },
    });
    const d = decideFleet({
      set,
      clusters: { ok: true, clusters: fleet },
      source: gitSource(),
      releases: [],
      now: at(0),
    });
    expect(d.writes).toEqual([]);
    expect(condition(d.status, 'Generated')?.message).toMatch(
      /^Cluster canary-1: spec\.template\.spec\.syncPolicy\.interval: must be a non-negative duration/,
    );
  });

  it('two sets claiming one child name: the newcomer stops with NameConflict and writes nothing', () => {
    const ns = new FakeNamespace();
    // Set "web-eu" owns web-eu-1 (its Cluster "1"); set "web" would name its eu-1 child the same.
    const other = releaseSet({}, { name: 'web-eu' });
    const otherSet = { ...other, metadata: { ...other.metadata, uid: 'uid-other' } };
    reconcile(otherSet, ns, { clusters: [cluster('1')], now: at(0) });
    const d = decideFleet({
      set: releaseSet({}),
      clusters: { ok: true, clusters: fleet },
      source: gitSource(),
      releases: ns.list(),
      now: at(0),
    });
    expect(d.writes).toEqual([]);
    expect(condition(d.status, 'Generated')).toMatchObject({ reason: 'NameConflict' });
    expect(condition(d.status, 'Generated')?.message).toContain(
      'Release web-eu-1, but that name is taken by a Release owned by ReleaseSet web-eu',
    );
  });

  it('a step that selects no Cluster is InvalidSpec naming the step', () => {
    const set = releaseSet({
      rollout: { steps: [{ name: 'asia', clusters: { matchLabels: { region: 'asia' } } }] },
    });
    const d = decideFleet({
      set,
      clusters: { ok: true, clusters: fleet },
      source: gitSource(),
      releases: [],
      now: at(0),
    });
    expect(condition(d.status, 'Generated')).toMatchObject({ reason: 'InvalidSpec' });
    expect(condition(d.status, 'Generated')?.message).toMatch(
      /^spec\.rollout\.steps\[0\]\.clusters: step asia selects no Cluster/,
    );
  });

  it('an invalid selector is InvalidSpec naming the field', () => {
    const set = releaseSet({ clusters: { selector: { matchLabels: { 'bad key!': 'x' } } } });
    const d = decideFleet({
      set,
      clusters: { ok: true, clusters: fleet },
      source: gitSource(),
      releases: [],
      now: at(0),
    });
    expect(condition(d.status, 'Generated')?.message).toMatch(
      /^spec\.clusters\.selector\.matchLabels: "bad key!" is not a label key/,
    );
  });

  it('a set being deleted is left to the garbage collector: its children follow their owner references', () => {
    const set = releaseSet({});
    const deleting = { ...set, metadata: { ...set.metadata, deletionTimestamp: '2026-01-01T00:00:00Z' } };
    const d = decideFleet({
      set: deleting,
      clusters: { ok: true, clusters: fleet },
      source: gitSource(),
      releases: [],
      now: at(0),
    });
    expect(d.writes).toEqual([]);
  });
});

describe('decideFleet: children', () => {
  it('a child deleted by hand is recreated in its step; one edited by hand is restored', () => {
    const ns = new FakeNamespace();
    let r = reconcile(releaseSet({}), ns, { clusters: fleet, now: at(0) });
    for (const n of ns.releases.keys()) ns.makeReady(n);
    r = reconcile(r.set, ns, { clusters: fleet, now: at(10) });
    expect(r.decision.stop).toBe('succeeded');
    ns.releases.delete('web-eu-2');
    const eu1 = ns.releases.get('web-eu-1')!;
    ns.releases.set('web-eu-1', {
      ...eu1,
      spec: {
        ...eu1.spec,
        source: { git: { url: 'https://git.example/other.git', ref: { branch: 'dev' }, path: '.' } },
      },
    });
    r = reconcile(r.set, ns, { clusters: fleet, now: at(20) });
    expect(r.decision.writes.map((w) => w.action === 'apply' && `${w.why}:${w.name}`).sort()).toEqual([
      'create:web-eu-2',
      'restore:web-eu-1',
    ]);
  });

  it("a user's pin holds the child: counted as waiting with its reason, never updated, not blocking its step", () => {
    const ns = new FakeNamespace();
    let r = reconcile(releaseSet({}), ns, { clusters: fleet.slice(0, 2), now: at(0) });
    for (const n of ns.releases.keys()) ns.makeReady(n);
    const eu1 = ns.releases.get('web-eu-1')!;
    ns.releases.set('web-eu-1', {
      ...eu1,
      metadata: {
        ...eu1.metadata,
        annotations: { ...eu1.metadata.annotations, 'convoy.dev/pin': `sha256:${'c'.repeat(64)}` },
      },
    });
    r = reconcile(r.set, ns, { clusters: fleet.slice(0, 2), now: at(10) });
    r = reconcile(r.set, ns, { clusters: fleet.slice(0, 2), source: gitSource(COMMIT_B), now: at(20) });
    expect(r.decision.writes.map((w) => w.name)).toEqual(['web-canary-1']);
    expect(r.decision.status.held).toEqual([
      { cluster: 'eu-1', release: 'web-eu-1', reason: 'PinnedByUser' },
    ]);
    ns.makeReady('web-canary-1');
    r = reconcile(r.set, ns, { clusters: fleet.slice(0, 2), source: gitSource(COMMIT_B), now: at(30) });
    expect(r.decision.stop).toBe('succeeded');
    expect(r.decision.status.clusters).toMatchObject({ selected: 2, ready: 1, waiting: 1 });
    expect(ns.releases.get('web-eu-1')?.spec.source.git?.ref).toEqual({ commit: COMMIT_A });
  });

  it('a Cluster that stops matching: its child is deleted (onRemoval Delete) or orphaned (Orphan)', () => {
    for (const onRemoval of ['Delete', 'Orphan'] as const) {
      const ns = new FakeNamespace();
      const r = reconcile(releaseSet({ clusters: { selector: {}, onRemoval } }), ns, {
        clusters: fleet,
        now: at(0),
      });
      const d = decideFleet({
        set: r.set,
        clusters: { ok: true, clusters: fleet.slice(0, 3) },
        source: gitSource(),
        releases: ns.list(),
        now: at(10),
      });
      expect(d.writes.filter((w) => w.action === 'delete' || w.action === 'orphan')).toEqual([
        { action: onRemoval === 'Delete' ? 'delete' : 'orphan', name: 'web-us-1', cluster: 'us-1' },
      ]);
    }
  });

  it('withWriteFailures turns the stop into DeployFailed, retried', () => {
    const d = decideFleet({
      set: releaseSet({}),
      clusters: { ok: true, clusters: fleet },
      source: gitSource(),
      releases: [],
      now: at(0),
    });
    const failed = withWriteFailures(
      d,
      [{ name: 'web-eu-1', message: 'the server is currently unable to handle the request' }],
      1,
      at(0),
    );
    expect(failed).toMatchObject({ stop: 'writeFailed', retry: true });
    expect(condition(failed.status, 'RolloutSucceeded')).toMatchObject({
      status: 'False',
      reason: 'DeployFailed',
    });
    expect(condition(failed.status, 'RolloutSucceeded')?.message).toContain(
      'writing 1 of 4 child Releases failed (retried): web-eu-1: the server',
    );
  });

  it("withWriteFailures keeps the whole of an apiserver's 403 with the longest names: which verb on which resource was refused, and where", () => {
    const d = decideFleet({
      set: releaseSet({}),
      clusters: { ok: true, clusters: fleet },
      source: gitSource(),
      releases: [],
      now: at(0),
    });
    const [ns, child] = ['n'.repeat(63), 'c'.repeat(63)];
    const user = `arn:aws:sts::123456789012:assumed-role/${'r'.repeat(64)}/${'s'.repeat(64)}`;
    const why = `releases.convoy.dev "${child}" is forbidden: User "${user}" cannot patch resource "releases" in API group "convoy.dev" in the namespace "${ns}"`;
    const error = `PATCH /apis/convoy.dev/v1alpha1/namespaces/${ns}/releases/${child}: HTTP 403 Forbidden: ${why}`;
    const message = condition(
      withWriteFailures(d, [{ name: child, message: error }], 1, at(0)).status,
      'RolloutSucceeded',
    )?.message;
    expect(message).toBe(`writing 1 of 4 child Releases failed (retried): ${child}: ${error}`);
    // A longer error is still cut, so five of them keep the condition small.
    const long =
      condition(
        withWriteFailures(d, [{ name: child, message: 'x'.repeat(5_000) }], 1, at(0)).status,
        'RolloutSucceeded',
      )?.message ?? '';
    expect(long.length).toBeLessThan(1_000);
    expect(long.endsWith('…')).toBe(true);
  });
});

describe('decideFleet: a Cluster annotation read by the template changes (same revision)', () => {
  const git = { url: 'https://git.example/apps.git', ref: { branch: 'main' } };
  const annotated = (region: Record<string, string>) => [
    cluster('canary-1', { ring: 'canary' }, { region: region['canary-1'] ?? 'ca' }),
    cluster('eu-1', { ring: 'prod' }, { region: region['eu-1'] ?? 'eu' }),
    cluster('us-1', { ring: 'prod' }, { region: region['us-1'] ?? 'us' }),
  ];
  const spec = (rollout: Record<string, unknown> = {}) => ({
    template: { spec: { targetNamespace: 'app-${cluster.annotations.region}', source: { git } } },
    rollout: {
      maxConcurrent: 1,
      minHealthyTime: '1m',
      steps: [{ name: 'canary', clusters: { matchLabels: { ring: 'canary' } } }],
      ...rollout,
    },
  });
  const applies = (writes: readonly { action: string; name: string; why?: string }[]) =>
    writes.map((w) => `${w.action}:${w.why ?? ''}:${w.name}`);

  /** Rolls `spec` out to every Cluster of `clusters` and returns the set with the Succeeded status. */
  function rolledOut(ns: FakeNamespace, clusters: ReturnType<typeof annotated>) {
    let r = reconcile(releaseSet(spec()), ns, { clusters, now: at(0) });
    for (let t = 10; r.decision.stop !== 'succeeded' && t < 2000; t += 70) {
      for (const name of ns.releases.keys()) ns.makeReady(name);
      r = reconcile(r.set, ns, { clusters, now: at(t) });
    }
    expect(r.decision.stop).toBe('succeeded');
    return r;
  }

  it("after the rollout succeeded: only that Cluster's child is re-applied (restore) at once, with the new value; the revision and the rollout stay", () => {
    const ns = new FakeNamespace();
    const done = rolledOut(ns, annotated({}));
    expect(ns.releases.get('web-eu-1')?.spec.targetNamespace).toBe('app-eu');
    const r = reconcile(done.set, ns, { clusters: annotated({ 'eu-1': 'eu-central' }), now: at(3000) });
    expect(applies(r.decision.writes)).toEqual(['apply:restore:web-eu-1']);
    expect(ns.releases.get('web-eu-1')?.spec.targetNamespace).toBe('app-eu-central');
    expect(ns.releases.get('web-eu-1')?.metadata.annotations?.['convoy.dev/release-set-revision']).toBe(
      done.decision.status.revision?.id,
    );
    expect(r.decision.status.revision).toEqual(done.decision.status.revision);
    expect(r.decision.status.rollout).toEqual(done.decision.status.rollout);
    expect(r.decision.events.map((e) => e.reason)).not.toContain('RolloutStarted');
    // Written once: the next run finds it applied.
    expect(
      reconcile(r.set, ns, { clusters: annotated({ 'eu-1': 'eu-central' }), now: at(3010) }).decision.writes,
    ).toEqual([]);
  });

  it('mid-rollout: a Cluster of a step already written follows at once (its soak restarts), one of a later step gets the new value when its step comes', () => {
    const ns = new FakeNamespace();
    let r = reconcile(releaseSet(spec()), ns, { clusters: annotated({}), now: at(0) });
    ns.makeReady('web-canary-1');
    r = reconcile(r.set, ns, { clusters: annotated({}), now: at(10) });
    expect(r.decision.stop).toBe('waitingForMinHealthyTime');
    const changed = annotated({ 'canary-1': 'ca-2', 'eu-1': 'eu-2' });
    r = reconcile(r.set, ns, { clusters: changed, now: at(20) });
    expect(applies(r.decision.writes)).toEqual(['apply:restore:web-canary-1']);
    expect(ns.releases.get('web-canary-1')?.spec.targetNamespace).toBe('app-ca-2');
    expect(ns.releases.has('web-eu-1')).toBe(false);
    // The re-applied canary is not ready at its new generation: the step waits for it again.
    r = reconcile(r.set, ns, { clusters: changed, now: at(30) });
    expect(r.decision.stop).toBe('waitingForBatchHealth');
    ns.makeReady('web-canary-1');
    r = reconcile(r.set, ns, { clusters: changed, now: at(40) });
    expect(r.decision.status.rollout?.healthySince).toBe('2026-01-01T12:00:40Z');
    r = reconcile(r.set, ns, { clusters: changed, now: at(100) });
    expect(applies(r.decision.writes)).toEqual(['apply:create:web-eu-1']);
    expect(ns.releases.get('web-eu-1')?.spec.targetNamespace).toBe('app-eu-2');
  });

  it('paused or halted: nothing is written, as for every other change; a user-pinned child is held', () => {
    const ns = new FakeNamespace();
    const done = rolledOut(ns, annotated({}));
    const paused = {
      ...done.set,
      spec: { ...done.set.spec, rollout: { ...done.set.spec.rollout, paused: true } },
    };
    expect(
      reconcile(paused, ns, { clusters: annotated({ 'eu-1': 'x' }), now: at(3000) }).decision.writes,
    ).toEqual([]);

    const eu1 = ns.releases.get('web-eu-1')!;
    ns.releases.set('web-eu-1', {
      ...eu1,
      metadata: {
        ...eu1.metadata,
        annotations: { ...eu1.metadata.annotations, 'convoy.dev/pin': `sha256:${'c'.repeat(64)}` },
      },
    });
    expect(
      reconcile(done.set, ns, { clusters: annotated({ 'eu-1': 'x' }), now: at(3010) }).decision.writes,
    ).toEqual([]);

    const halted = new FakeNamespace();
    let r = reconcile(releaseSet(spec({ onFailure: 'Halt' })), halted, {
      clusters: annotated({}),
      now: at(0),
    });
    halted.makeFailing('web-canary-1');
    r = reconcile(r.set, halted, { clusters: annotated({}), now: at(10) });
    expect(r.decision.status.rollout?.state).toBe('Halted');
    expect(
      reconcile(r.set, halted, { clusters: annotated({ 'canary-1': 'x' }), now: at(20) }).decision.writes,
    ).toEqual([]);
  });
});
