import { describe, expect, it } from 'vitest';
import type { ObjectDrift } from '../../../domain/observe/drift-diff.ts';
import {
  inSyncVerdict,
  observeSlice,
  planDriftCheck,
  MAX_DRIFTED_NAMED,
} from '../../../domain/observe/insync-verdict.ts';
import {
  appliedStatus,
  attempt,
  configMap,
  deployment,
  NOW,
  release,
  RENDER_A,
  RENDER_B,
} from './fixtures.ts';

const checked = (objects: { drift: ObjectDrift; name?: string }[]) => ({
  kind: 'checked' as const,
  renderRef: RENDER_A,
  objects: objects.map(({ drift, name }, i) => ({ object: deployment(name ?? `d${i}`), drift })),
});

describe('InSync (API.md, reasons of the other conditions)', () => {
  it('True / InSync: every object of the applied render matches the cluster', () => {
    const v = inSyncVerdict(
      release({}, appliedStatus()),
      checked([{ drift: { state: 'InSync' } }, { drift: { state: 'InSync' } }]),
    );
    expect(v.condition).toEqual({
      type: 'InSync',
      status: 'True',
      reason: 'InSync',
      message: `all 2 objects of render ${RENDER_A} match the cluster`,
    });
    expect(v.outcome).toEqual({ kind: 'stop' });
    expect(v.correct).toBe(false);
  });

  it('False / Drifted: objects differ or are missing; the message names them with paths or "missing"', () => {
    const v = inSyncVerdict(
      release({}, appliedStatus()),
      checked([
        { name: 'web', drift: { state: 'Drifted', paths: ['/spec/replicas'] } },
        { name: 'api', drift: { state: 'Missing' } },
        { name: 'ok', drift: { state: 'InSync' } },
      ]),
    );
    expect(v.condition.status).toBe('False');
    expect(v.condition.reason).toBe('Drifted');
    expect(v.condition.message).toBe(
      `2 of 3 objects of render ${RENDER_A} differ from the cluster: Deployment team-a/web: /spec/replicas; Deployment team-a/api: missing`,
    );
    expect(v.outcome).toEqual({ kind: 'stop' });
    expect(v.drifted).toBe(2);
  });

  it('False / Drifted names at most 10 objects', () => {
    const objects = Array.from({ length: 13 }, () => ({ drift: { state: 'Missing' as const } }));
    const message = inSyncVerdict(release({}, appliedStatus()), checked(objects)).condition.message;
    expect(message.match(/: missing/g)).toHaveLength(MAX_DRIFTED_NAMED);
    expect(message).toMatch(/; and 3 more$/);
  });

  it('Unknown / Pending: no render applied yet', () => {
    const r = release({}, { lastAttempted: attempt(RENDER_A) });
    const plan = planDriftCheck(r);
    expect(plan.kind).toBe('pending');
    const v = inSyncVerdict(r, plan.kind === 'pending' ? plan : checked([]));
    expect(v.condition).toMatchObject({ status: 'Unknown', reason: 'Pending' });
    expect(v.condition.message).toContain('no render was applied yet');
  });

  it('Unknown / Pending: a newer render is being rolled out (waiting at a wave)', () => {
    const r = release(
      {},
      {
        lastAttempted: { ...attempt(RENDER_B), phase: '' },
        lastSuccessful: attempt(RENDER_A),
        rollout: { renderRef: RENDER_B, state: 'Progressing', wave: 1 },
      },
    );
    const plan = planDriftCheck(r);
    expect(plan).toMatchObject({ kind: 'pending' });
    expect(plan.kind === 'pending' && plan.message).toContain(
      `render ${RENDER_B} is being rolled out (at wave 1)`,
    );
  });

  it('a rollout still Progressing on its last wave (already lastSuccessful) is checked', () => {
    const r = release(
      {},
      appliedStatus(RENDER_A, { rollout: { renderRef: RENDER_A, state: 'Progressing', wave: 0 } }),
    );
    expect(planDriftCheck(r)).toEqual({ kind: 'check', renderRef: RENDER_A });
  });

  it('the applied render (lastSuccessful) is the one checked', () => {
    expect(
      planDriftCheck(
        release(
          {},
          { lastAttempted: { ...attempt(RENDER_B), phase: 'Failed' }, lastSuccessful: attempt(RENDER_A) },
        ),
      ),
    ).toEqual({
      kind: 'check',
      renderRef: RENDER_A,
    });
  });

  it('Unknown / ClusterNotReady: the target cluster could not be read', () => {
    const v = inSyncVerdict(release({}, appliedStatus()), {
      kind: 'clusterNotReady',
      message: 'Cluster team-a/far does not exist',
    });
    expect(v.condition).toMatchObject({
      status: 'Unknown',
      reason: 'ClusterNotReady',
      message: 'Cluster team-a/far does not exist',
    });
    expect(v.outcome).toEqual({ kind: 'stop' });
  });

  it('Unknown / Pending: the render is not in the store', () => {
    const v = inSyncVerdict(release({}, appliedStatus()), {
      kind: 'renderUnavailable',
      renderRef: RENDER_A,
      message: 'not in the store',
    });
    expect(v.condition).toMatchObject({ status: 'Unknown', reason: 'Pending', message: 'not in the store' });
  });

  it('mode Correct + drifted → the Release goes to the reconcile queue; mode Detect does not', () => {
    const drifted = checked([{ drift: { state: 'Missing' } }]);
    expect(
      inSyncVerdict(release({ driftDetection: { mode: 'Correct' } }, appliedStatus()), drifted).correct,
    ).toBe(true);
    expect(
      inSyncVerdict(release({ driftDetection: { mode: 'Detect' } }, appliedStatus()), drifted).correct,
    ).toBe(false);
    expect(
      inSyncVerdict(
        release({ driftDetection: { mode: 'Correct' } }, appliedStatus()),
        checked([{ drift: { state: 'InSync' } }]),
      ).correct,
    ).toBe(false);
  });

  it('the convoy-observe slice holds InSync only; an unchanged verdict keeps lastTransitionTime', () => {
    const r = release({}, appliedStatus());
    const v = inSyncVerdict(r, checked([{ drift: { state: 'InSync' } }]));
    const first = observeSlice(r, v, NOW);
    expect(Object.keys(first)).toEqual(['conditions']);
    expect(first.conditions.map((c) => c.type)).toEqual(['InSync']);
    expect(first.conditions[0]?.observedGeneration).toBe(3);
    const again = observeSlice(
      release({}, { ...appliedStatus(), conditions: first.conditions }),
      v,
      new Date(NOW.getTime() + 60_000),
    );
    expect(again).toEqual(first);
  });

  it('ConfigMap objects are named like every other kind', () => {
    const v = inSyncVerdict(release({}, appliedStatus()), {
      kind: 'checked',
      renderRef: RENDER_A,
      objects: [{ object: configMap(), drift: { state: 'Drifted', paths: ['/data/k'] } }],
    });
    expect(v.condition.message).toContain('ConfigMap team-a/settings: /data/k');
  });
});
