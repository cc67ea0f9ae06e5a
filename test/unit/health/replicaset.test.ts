import { describe, expect, it } from 'vitest';
import { assess, condition, replicaSet } from './fixtures.ts';

const DONE = {
  observedGeneration: 1,
  replicas: 3,
  readyReplicas: 3,
  availableReplicas: 3,
  fullyLabeledReplicas: 3,
};

describe('ReplicaSet rule', () => {
  it('ReplicaSet with availableReplicas = replicas is Healthy', () => {
    expect(assess(replicaSet({}, DONE)).state).toBe('Healthy');
  });

  it('ReplicaSet with observedGeneration < generation is Progressing', () => {
    expect(assess(replicaSet({}, DONE, 2)).state).toBe('Progressing');
  });

  it('ReplicaSet with availableReplicas < replicas is Progressing', () => {
    const health = assess(replicaSet({}, { ...DONE, availableReplicas: 1 }));
    expect(health).toEqual({
      state: 'Progressing',
      message: 'Waiting for rollout to finish: 1 of 3 replicas are available',
    });
  });

  it('ReplicaSet with status.replicas > spec.replicas (pods pending termination) is Progressing', () => {
    expect(assess(replicaSet({}, { ...DONE, replicas: 5 })).state).toBe('Progressing');
  });

  it('ReplicaSet with ReplicaFailure True is Degraded', () => {
    const status = {
      ...DONE,
      availableReplicas: 0,
      conditions: [
        condition('ReplicaFailure', 'True', 'FailedCreate', 'pods "web-1" is forbidden: exceeded quota'),
      ],
    };
    const health = assess(replicaSet({}, status));
    expect(health.state).toBe('Degraded');
    expect(health.message).toContain('exceeded quota');
  });

  it('ReplicaSet with ReplicaFailure False is assessed on its counts', () => {
    const status = { ...DONE, conditions: [condition('ReplicaFailure', 'False')] };
    expect(assess(replicaSet({}, status)).state).toBe('Healthy');
  });
});
