import { describe, expect, it } from 'vitest';
import { assess, condition, object } from './fixtures.ts';

const custom = (status: Record<string, unknown> | undefined, generation = 3) =>
  object('example.com/v1', 'Database', status === undefined ? { spec: {} } : { spec: {}, status }, {
    generation,
  });

describe('Generic rule', () => {
  it('Object with Ready True is Healthy', () => {
    expect(assess(custom({ conditions: [condition('Ready', 'True', 'Available')] })).state).toBe('Healthy');
  });

  it('Object with Ready False and a failure reason is Degraded', () => {
    const health = assess(
      custom({ conditions: [condition('Ready', 'False', 'AuthFailed', 'password rejected')] }),
    );
    expect(health).toEqual({ state: 'Degraded', message: 'Not ready: AuthFailed: password rejected' });
  });

  it('Object with Ready False and an in-progress reason is Progressing', () => {
    for (const reason of ['Progressing', 'Reconciling', 'Pending', 'Creating', 'DependencyNotReady']) {
      expect(assess(custom({ conditions: [condition('Ready', 'False', reason)] })).state, reason).toBe(
        'Progressing',
      );
    }
  });

  it('Object with Ready Unknown is Progressing', () => {
    expect(assess(custom({ conditions: [condition('Ready', 'Unknown', 'Unknown')] })).state).toBe(
      'Progressing',
    );
  });

  it('Object with Ready True written for an older generation is Progressing', () => {
    const status = { conditions: [condition('Ready', 'True', 'Available', '', { observedGeneration: 2 })] };
    expect(assess(custom(status, 3)).state).toBe('Progressing');
  });

  it('Object with status.observedGeneration < metadata.generation is Progressing', () => {
    const health = assess(custom({ observedGeneration: 2, conditions: [condition('Ready', 'True')] }, 3));
    expect(health.state).toBe('Progressing');
    expect(health.message).toContain('generation 3');
  });

  it('Object with status.observedGeneration = metadata.generation and no Ready condition is Healthy', () => {
    expect(assess(custom({ observedGeneration: 3 }, 3)).state).toBe('Healthy');
  });

  it('Object with Stalled True is Degraded', () => {
    expect(assess(custom({ conditions: [condition('Stalled', 'True', 'InvalidSpec')] })).state).toBe(
      'Degraded',
    );
  });

  it('Object with Reconciling True is Progressing', () => {
    expect(assess(custom({ conditions: [condition('Reconciling', 'True', 'Working')] })).state).toBe(
      'Progressing',
    );
  });

  it('Object without status (ConfigMap) is Healthy', () => {
    expect(assess(object('v1', 'ConfigMap', { data: { a: 'b' } })).state).toBe('Healthy');
  });

  it('Custom resource without status is Healthy', () => {
    expect(assess(custom(undefined)).state).toBe('Healthy');
  });

  it('Object with a malformed status (conditions not a list) is Healthy rather than throwing', () => {
    expect(assess(custom({ conditions: 'oops', observedGeneration: 'x' })).state).toBe('Healthy');
  });
});
