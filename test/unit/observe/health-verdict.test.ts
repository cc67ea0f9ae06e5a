import { describe, expect, it } from 'vitest';
import {
  HEALTH_RECHECK_MS,
  healthRenderRef,
  healthSlice,
  healthVerdict,
  progressingSince,
  type HealthObservation,
} from '../../../domain/observe/health-verdict.ts';
import type { KubeObject } from '../../../domain/render/kube-object.ts';
import {
  appliedStatus,
  attempt,
  configMap,
  deployment,
  liveDeploymentDone,
  liveDeploymentNew,
  NOW,
  release,
  RENDER_A,
  RENDER_B,
} from './fixtures.ts';

const CONFIGURED = { healthAssessment: { progressDeadline: '10m' } };
const assessed = (
  objects: { object: KubeObject; live: object | undefined }[],
  renderRef = RENDER_A,
): HealthObservation => ({
  kind: 'assessed',
  renderRef,
  objects,
});
const minutesAgo = (m: number) => new Date(NOW.getTime() - m * 60_000).toISOString().replace('.000Z', 'Z');

describe('Healthy (status-and-conditions.txt; API.md reasons)', () => {
  it('True / NotConfigured: no spec.healthAssessment; the summary still reports the applied render', () => {
    const r = release({}, appliedStatus());
    const v = healthVerdict(r, assessed([{ object: deployment(), live: liveDeploymentNew() }]), NOW);
    expect(v.condition).toMatchObject({ type: 'Healthy', status: 'True', reason: 'NotConfigured' });
    expect(v.healthSummary).toMatchObject({ renderRef: RENDER_A, total: 1, progressing: 1 });
    expect(v.outcome).toEqual({ kind: 'stop' });
  });

  it('True / NotConfigured without an applied render: no summary', () => {
    const r = release({}, { lastAttempted: attempt(RENDER_A) });
    expect(healthRenderRef(r)).toBeUndefined();
    const v = healthVerdict(r, { kind: 'notAssessed' }, NOW);
    expect(v.condition.reason).toBe('NotConfigured');
    expect(v.healthSummary).toBeUndefined();
  });

  it('True / Healthy: every object of the current render is healthy', () => {
    const v = healthVerdict(
      release(CONFIGURED, appliedStatus()),
      assessed([
        { object: deployment(), live: liveDeploymentDone() },
        { object: configMap(), live: configMap() },
      ]),
      NOW,
    );
    expect(v.condition).toEqual({
      type: 'Healthy',
      status: 'True',
      reason: 'Healthy',
      message: `all 2 objects of render ${RENDER_A} are healthy`,
    });
    expect(v.healthSummary).toMatchObject({
      renderRef: RENDER_A,
      checkedAt: '2026-11-29T10:00:00Z',
      total: 2,
      healthy: 2,
      objects: [],
    });
    expect(v.outcome).toEqual({ kind: 'stop' });
  });

  it('False / Progressing: objects are still converging, within progressDeadline; rechecked within 10 s', () => {
    const r = release(
      CONFIGURED,
      appliedStatus(RENDER_A, {
        rollout: { renderRef: RENDER_A, state: 'Progressing', startedAt: minutesAgo(2) },
      }),
    );
    const v = healthVerdict(
      r,
      assessed([
        { object: deployment(), live: liveDeploymentNew() },
        { object: configMap(), live: configMap() },
      ]),
      NOW,
    );
    expect(v.condition.status).toBe('False');
    expect(v.condition.reason).toBe('Progressing');
    expect(v.condition.message).toBe(
      `1 progressing of 2 objects of render ${RENDER_A}: Deployment team-a/web is Progressing: Waiting for rollout to finish: generation 1 not observed yet (observedGeneration 0)`,
    );
    expect(v.outcome).toMatchObject({ kind: 'requeueAfter' });
    expect(v.outcome.kind === 'requeueAfter' && v.outcome.delayMs).toBeLessThanOrEqual(10_000);
    expect(HEALTH_RECHECK_MS).toBe(10_000);
  });

  it('False / Degraded: Progressing past progressDeadline, counted from the rollout of the current render; the message does not move', () => {
    const status = appliedStatus(RENDER_A, {
      rollout: { renderRef: RENDER_A, state: 'Progressing', startedAt: minutesAgo(11) },
    });
    const observation = assessed([{ object: deployment(), live: liveDeploymentNew() }]);
    const v = healthVerdict(release(CONFIGURED, status), observation, NOW);
    expect(v.condition).toMatchObject({ status: 'False', reason: 'Degraded' });
    expect(v.condition.message).toContain(
      `Progressing since ${minutesAgo(11)}, past the progress deadline of 10m0s`,
    );
    expect(v.outcome).toEqual({ kind: 'stop' });
    const later = healthVerdict(
      release(CONFIGURED, status),
      observation,
      new Date(NOW.getTime() + 5 * 60_000),
    );
    expect(later.condition).toEqual(v.condition);
  });

  it('progressingSince: rollout.startedAt when the rollout is of the current render, else lastSuccessful.attemptedAt', () => {
    const other = release(
      CONFIGURED,
      appliedStatus(RENDER_A, {
        rollout: { renderRef: RENDER_B, state: 'Succeeded', startedAt: minutesAgo(1) },
      }),
    );
    expect(progressingSince(other, RENDER_A)?.toISOString()).toBe('2026-11-29T09:00:00.000Z');
    const same = release(
      CONFIGURED,
      appliedStatus(RENDER_A, {
        rollout: { renderRef: RENDER_A, state: 'Succeeded', startedAt: minutesAgo(1) },
      }),
    );
    expect(progressingSince(same, RENDER_A)?.getTime()).toBe(NOW.getTime() - 60_000);
  });

  it('False / Missing: an object of the render does not exist', () => {
    const v = healthVerdict(
      release(CONFIGURED, appliedStatus()),
      assessed([
        { object: deployment(), live: undefined },
        { object: configMap(), live: configMap() },
      ]),
      NOW,
    );
    expect(v.condition).toMatchObject({ status: 'False', reason: 'Missing' });
    expect(v.condition.message).toContain('Deployment team-a/web is Missing');
    expect(v.healthSummary).toMatchObject({ missing: 1, healthy: 1 });
  });

  it('Unknown / Unknown: the worst object is Unknown (the rules could not decide)', () => {
    const pod = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', namespace: 'team-a' } };
    const v = healthVerdict(
      release(CONFIGURED, appliedStatus()),
      assessed([{ object: pod, live: { ...pod, status: { phase: 'Unknown' } } }]),
      NOW,
    );
    expect(v.condition).toMatchObject({ status: 'Unknown', reason: 'Unknown' });
    expect(v.outcome).toEqual({ kind: 'stop' });
  });

  it('Unknown / Pending: the current render is not applied yet', () => {
    const r = release(CONFIGURED, {
      lastAttempted: { ...attempt(RENDER_B), phase: '' },
      lastSuccessful: attempt(RENDER_A),
    });
    expect(healthRenderRef(r)).toBeUndefined();
    const v = healthVerdict(r, { kind: 'notAssessed' }, NOW);
    expect(v.condition).toMatchObject({ status: 'Unknown', reason: 'Pending' });
    expect(v.condition.message).toBe(
      `render ${RENDER_B} (status.lastAttempted.renderRef) is not applied yet (the applied render is ${RENDER_A}); health is assessed once it is applied`,
    );
    expect(v.healthSummary).toBeUndefined();
  });

  it('Unknown / Pending: nothing was applied yet', () => {
    const v = healthVerdict(
      release(CONFIGURED, { lastAttempted: { ...attempt(RENDER_A), phase: '' } }),
      { kind: 'notAssessed' },
      NOW,
    );
    expect(v.condition.message).toContain('no render was applied yet');
  });

  it('a reconcile that stopped before rendering keeps the applied render current', () => {
    const r = release(CONFIGURED, {
      lastAttempted: { attemptedAt: '2026-11-29T09:30:00Z', phase: 'Failed' },
      lastSuccessful: attempt(RENDER_A),
    });
    expect(healthRenderRef(r)).toBe(RENDER_A);
  });

  it('Unknown / ClusterNotReady: keeps the previous summary of the current render, drops one of another render', () => {
    const summary = {
      renderRef: RENDER_A,
      checkedAt: '2026-11-29T09:59:00Z',
      total: 1,
      healthy: 1,
      progressing: 0,
      degraded: 0,
      missing: 0,
      unknown: 0,
      objects: [],
    };
    const observation: HealthObservation = {
      kind: 'clusterNotReady',
      renderRef: RENDER_A,
      message: 'Cluster team-a/local does not exist',
    };
    const kept = healthVerdict(
      release(CONFIGURED, appliedStatus(RENDER_A, { healthSummary: summary })),
      observation,
      NOW,
    );
    expect(kept.condition).toMatchObject({
      status: 'Unknown',
      reason: 'ClusterNotReady',
      message: 'Cluster team-a/local does not exist',
    });
    expect(kept.healthSummary).toEqual(summary);
    const dropped = healthVerdict(
      release(CONFIGURED, appliedStatus(RENDER_A, { healthSummary: { ...summary, renderRef: RENDER_B } })),
      observation,
      NOW,
    );
    expect(dropped.healthSummary).toBeUndefined();
  });

  it('Unknown / Pending: the applied render is not in the render store', () => {
    const v = healthVerdict(
      release(CONFIGURED, appliedStatus()),
      {
        kind: 'renderUnavailable',
        renderRef: RENDER_A,
        message: `render ${RENDER_A} is not in the render store`,
      },
      NOW,
    );
    expect(v.condition).toMatchObject({
      status: 'Unknown',
      reason: 'Pending',
      message: `render ${RENDER_A} is not in the render store`,
    });
  });

  it('False / Degraded: a check that does not compile is named spec.healthAssessment.checks[i]', () => {
    const r = release(
      { healthAssessment: { checks: [{ apiVersion: 'v1', kind: 'ConfigMap', healthy: 'object.data.(' }] } },
      appliedStatus(),
    );
    const v = healthVerdict(r, assessed([{ object: configMap(), live: configMap() }]), NOW);
    expect(v.condition).toMatchObject({ status: 'False', reason: 'Degraded' });
    expect(v.condition.message).toMatch(/^spec\.healthAssessment\.checks\[0\] \(v1 ConfigMap\): healthy: /);
    expect(v.healthSummary).toMatchObject({ total: 1, healthy: 1 });
    expect(v.outcome).toEqual({ kind: 'stop' });
  });

  it('a compiled check overrides the built-in rule', () => {
    const recent = appliedStatus(RENDER_A, {
      rollout: { renderRef: RENDER_A, state: 'Succeeded', startedAt: minutesAgo(1) },
    });
    const r = release(
      {
        healthAssessment: {
          checks: [{ apiVersion: 'v1', kind: 'ConfigMap', healthy: "object.data.k == 'ready'" }],
        },
      },
      recent,
    );
    const v = healthVerdict(r, assessed([{ object: configMap(), live: configMap() }]), NOW);
    expect(v.condition).toMatchObject({ status: 'False', reason: 'Progressing' });
    expect(v.condition.message).toContain('checks[0] (v1 ConfigMap): the healthy expression is false');
  });

  it('healthSummary lists at most 20 objects that are not healthy', () => {
    const objects = Array.from({ length: 25 }, (_, i) => ({
      object: deployment(`d${String(i).padStart(2, '0')}`),
      live: undefined,
    }));
    const v = healthVerdict(release(CONFIGURED, appliedStatus()), assessed(objects), NOW);
    expect(v.healthSummary?.objects).toHaveLength(20);
    expect(v.healthSummary?.missing).toBe(25);
    expect(v.condition.message).toMatch(/and 20 more \(see status\.healthSummary\)$/);
  });

  it('Secret data never appears in the condition or the summary', () => {
    const secret = {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 's', namespace: 'team-a' },
      data: { password: Buffer.from('hunter2').toString('base64') },
    };
    const v = healthVerdict(
      release(CONFIGURED, appliedStatus()),
      assessed([
        { object: secret, live: secret },
        { object: deployment(), live: undefined },
      ]),
      NOW,
    );
    expect(JSON.stringify(v)).not.toMatch(/hunter2|aHVudGVyMg/);
  });

  it('the convoy-health slice holds healthSummary and Healthy only; an unchanged verdict keeps lastTransitionTime', () => {
    const observation = assessed([{ object: deployment(), live: liveDeploymentDone() }]);
    const r = release(CONFIGURED, appliedStatus());
    const first = healthSlice(r, healthVerdict(r, observation, NOW), NOW);
    expect(Object.keys(first).sort()).toEqual(['conditions', 'healthSummary']);
    expect(first.conditions.map((c) => c.type)).toEqual(['Healthy']);
    const later = new Date(NOW.getTime() + 60_000);
    const r2 = release(CONFIGURED, { ...appliedStatus(), conditions: first.conditions });
    const second = healthSlice(r2, healthVerdict(r2, observation, later), later);
    expect(second.conditions).toEqual(first.conditions);
    expect(second.healthSummary?.checkedAt).toBe('2026-11-29T10:01:00Z');
  });
});
