import { describe, expect, it } from 'vitest';
import { assess, statefulSet, STATEFULSET_DONE } from './fixtures.ts';

describe('StatefulSet rule', () => {
  it('StatefulSet with every replica ready at the update revision is Healthy', () => {
    expect(assess(statefulSet({}, STATEFULSET_DONE)).state).toBe('Healthy');
  });

  it('StatefulSet with observedGeneration < generation is Progressing', () => {
    expect(assess(statefulSet({}, STATEFULSET_DONE, 2)).state).toBe('Progressing');
  });

  it('StatefulSet without observedGeneration is Progressing', () => {
    const { observedGeneration: _, ...status } = STATEFULSET_DONE;
    expect(assess(statefulSet({}, status)).state).toBe('Progressing');
  });

  it('StatefulSet with readyReplicas < replicas is Progressing', () => {
    const health = assess(statefulSet({}, { ...STATEFULSET_DONE, readyReplicas: 1 }));
    expect(health).toEqual({
      state: 'Progressing',
      message: 'Waiting for 2 pods to be ready (1 of 3 ready)',
    });
  });

  it('StatefulSet with status.replicas > spec.replicas (scale-down pending) is Progressing', () => {
    expect(assess(statefulSet({}, { ...STATEFULSET_DONE, replicas: 4 })).state).toBe('Progressing');
  });

  it('StatefulSet with updateRevision != currentRevision is Progressing', () => {
    const health = assess(
      statefulSet({}, { ...STATEFULSET_DONE, updatedReplicas: 1, updateRevision: 'web-def' }),
    );
    expect(health.state).toBe('Progressing');
    expect(health.message).toContain('revision web-def');
  });

  it('StatefulSet with a partitioned rolling update and updatedReplicas < replicas - partition is Progressing', () => {
    const spec = { updateStrategy: { type: 'RollingUpdate', rollingUpdate: { partition: 1 } } };
    const status = { ...STATEFULSET_DONE, updatedReplicas: 1, updateRevision: 'web-def' };
    const health = assess(statefulSet(spec, status));
    expect(health).toEqual({
      state: 'Progressing',
      message: 'Waiting for partitioned roll out to finish: 1 of 2 new pods have been updated',
    });
  });

  it('StatefulSet with a partitioned rolling update and updatedReplicas = replicas - partition is Healthy', () => {
    const spec = { updateStrategy: { type: 'RollingUpdate', rollingUpdate: { partition: 1 } } };
    const status = { ...STATEFULSET_DONE, updatedReplicas: 2, updateRevision: 'web-def' };
    const health = assess(statefulSet(spec, status));
    expect(health.state).toBe('Healthy');
    expect(health.message).toContain('Partitioned roll out complete');
  });

  it('StatefulSet with OnDelete strategy and every replica ready is Healthy despite a revision mismatch', () => {
    const spec = { updateStrategy: { type: 'OnDelete' } };
    const status = { ...STATEFULSET_DONE, updatedReplicas: 0, updateRevision: 'web-def' };
    const health = assess(statefulSet(spec, status));
    expect(health.state).toBe('Healthy');
    expect(health.message).toContain('OnDelete');
  });

  it('StatefulSet with OnDelete strategy and readyReplicas < replicas is Progressing', () => {
    const spec = { updateStrategy: { type: 'OnDelete' } };
    expect(assess(statefulSet(spec, { ...STATEFULSET_DONE, readyReplicas: 2 })).state).toBe('Progressing');
  });
});
