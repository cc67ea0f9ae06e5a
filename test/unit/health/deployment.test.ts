import { describe, expect, it } from 'vitest';
import { assess, condition, deployment, DEPLOYMENT_DONE, object } from './fixtures.ts';

describe('Deployment rule', () => {
  it('Deployment with every replica updated and available is Healthy', () => {
    expect(assess(deployment({}, DEPLOYMENT_DONE))).toEqual({
      state: 'Healthy',
      message: '3 of 3 replicas available',
    });
  });

  it('Deployment with observedGeneration < generation is Progressing', () => {
    const health = assess(deployment({}, { ...DEPLOYMENT_DONE, observedGeneration: 1 }, 2));
    expect(health.state).toBe('Progressing');
    expect(health.message).toContain('generation 2 not observed');
  });

  it('Deployment without status is Progressing', () => {
    expect(assess(deployment({}, {})).state).toBe('Progressing');
  });

  it('Deployment with updatedReplicas < replicas is Progressing', () => {
    const health = assess(deployment({}, { ...DEPLOYMENT_DONE, updatedReplicas: 1 }));
    expect(health).toEqual({
      state: 'Progressing',
      message: 'Waiting for rollout to finish: 1 of 3 new replicas have been updated',
    });
  });

  it('Deployment with old replicas pending termination (status.replicas > updatedReplicas) is Progressing', () => {
    const health = assess(deployment({}, { ...DEPLOYMENT_DONE, replicas: 4 }));
    expect(health.state).toBe('Progressing');
    expect(health.message).toContain('1 old replicas are pending termination');
  });

  it('Deployment with availableReplicas < updatedReplicas is Progressing', () => {
    const health = assess(deployment({}, { ...DEPLOYMENT_DONE, availableReplicas: 2 }));
    expect(health.state).toBe('Progressing');
    expect(health.message).toContain('2 of 3 updated replicas are available');
  });

  it('Deployment with Progressing condition reason ProgressDeadlineExceeded is Degraded', () => {
    const status = {
      ...DEPLOYMENT_DONE,
      updatedReplicas: 1,
      conditions: [
        condition(
          'Progressing',
          'False',
          'ProgressDeadlineExceeded',
          'ReplicaSet "web-1" has timed out progressing.',
        ),
      ],
    };
    const health = assess(deployment({}, status));
    expect(health.state).toBe('Degraded');
    expect(health.message).toBe(
      'Deployment exceeded its progress deadline: ReplicaSet "web-1" has timed out progressing.',
    );
  });

  it('Deployment that is paused is Healthy (we have no Suspended state)', () => {
    const health = assess(deployment({ paused: true }, { ...DEPLOYMENT_DONE, updatedReplicas: 1 }));
    expect(health.state).toBe('Healthy');
    expect(health.message).toContain('paused');
  });

  it('Deployment that is paused but whose generation is not observed yet is Progressing', () => {
    expect(assess(deployment({ paused: true }, DEPLOYMENT_DONE, 2)).state).toBe('Progressing');
  });

  it('Deployment without spec.replicas counts 1 replica', () => {
    const live = object(
      'apps/v1',
      'Deployment',
      { spec: {}, status: { observedGeneration: 1, replicas: 1, updatedReplicas: 1, availableReplicas: 1 } },
      { generation: 1 },
    );
    expect(assess(live).state).toBe('Healthy');
  });

  it('Deployment scaled to zero is Healthy', () => {
    expect(assess(deployment({ replicas: 0 }, { observedGeneration: 1 })).state).toBe('Healthy');
  });

  it('Deployment of the extensions group uses the same rule', () => {
    const live = {
      ...deployment({}, { ...DEPLOYMENT_DONE, updatedReplicas: 0 }),
      apiVersion: 'extensions/v1beta1',
    };
    expect(assess(live).state).toBe('Progressing');
  });
});
