import { describe, expect, it } from 'vitest';
import { assess, condition, job } from './fixtures.ts';

describe('Job rule', () => {
  it('Job with Complete condition True is Healthy', () => {
    const status = {
      startTime: '2025-01-01T00:00:00Z',
      succeeded: 1,
      conditions: [condition('Complete', 'True')],
    };
    expect(assess(job({}, status)).state).toBe('Healthy');
  });

  it('Job with Failed condition True is Degraded', () => {
    const status = {
      startTime: '2025-01-01T00:00:00Z',
      failed: 6,
      conditions: [
        condition('Failed', 'True', 'BackoffLimitExceeded', 'Job has reached the specified backoff limit'),
      ],
    };
    expect(assess(job({}, status))).toEqual({
      state: 'Degraded',
      message: 'Job failed: BackoffLimitExceeded: Job has reached the specified backoff limit',
    });
  });

  it('Job that is running is Progressing', () => {
    const health = assess(job({}, { startTime: '2025-01-01T00:00:00Z', active: 1 }));
    expect(health).toEqual({
      state: 'Progressing',
      message: 'Job is running: 1 active, 0 succeeded, 0 failed pods',
    });
  });

  it('Job that has not started is Progressing', () => {
    expect(assess(job({}, {})).state).toBe('Progressing');
  });

  it('Job with a Complete condition that is not True is Progressing', () => {
    const status = { startTime: '2025-01-01T00:00:00Z', conditions: [condition('Complete', 'False')] };
    expect(assess(job({}, status)).state).toBe('Progressing');
  });

  it('Job that is suspended is Healthy (we have no Suspended state)', () => {
    const status = { conditions: [condition('Suspended', 'True', 'JobSuspended')] };
    expect(assess(job({ suspend: true }, status))).toEqual({ state: 'Healthy', message: 'Job is suspended' });
  });

  it('Job that was resumed (Suspended condition still True, spec.suspend false) is Progressing', () => {
    const status = { conditions: [condition('Suspended', 'True', 'JobSuspended')] };
    expect(assess(job({ suspend: false }, status)).state).toBe('Progressing');
  });
});
