import { describe, expect, it } from 'vitest';
import { assess, daemonSet, DAEMONSET_DONE } from './fixtures.ts';

describe('DaemonSet rule', () => {
  it('DaemonSet with every desired pod updated and available is Healthy', () => {
    expect(assess(daemonSet({}, DAEMONSET_DONE))).toEqual({
      state: 'Healthy',
      message: '3 of 3 pods available',
    });
  });

  it('DaemonSet with observedGeneration < generation is Progressing', () => {
    expect(assess(daemonSet({}, DAEMONSET_DONE, 2)).state).toBe('Progressing');
  });

  it('DaemonSet without status.desiredNumberScheduled is Progressing', () => {
    const health = assess(daemonSet({}, { observedGeneration: 1 }));
    expect(health.state).toBe('Progressing');
    expect(health.message).toContain('desiredNumberScheduled');
  });

  it('DaemonSet with updatedNumberScheduled < desiredNumberScheduled is Progressing', () => {
    const health = assess(daemonSet({}, { ...DAEMONSET_DONE, updatedNumberScheduled: 1 }));
    expect(health.message).toBe('Waiting for rollout to finish: 1 of 3 new pods have been updated');
    expect(health.state).toBe('Progressing');
  });

  it('DaemonSet with numberAvailable < desiredNumberScheduled is Progressing', () => {
    expect(assess(daemonSet({}, { ...DAEMONSET_DONE, numberAvailable: 2 })).state).toBe('Progressing');
  });

  it('DaemonSet with OnDelete strategy and pods not updated but available is Healthy', () => {
    const health = assess(
      daemonSet({ updateStrategy: { type: 'OnDelete' } }, { ...DAEMONSET_DONE, updatedNumberScheduled: 0 }),
    );
    expect(health.state).toBe('Healthy');
    expect(health.message).toContain('OnDelete');
  });

  it('DaemonSet with OnDelete strategy and numberAvailable < desiredNumberScheduled is Progressing', () => {
    const live = daemonSet(
      { updateStrategy: { type: 'OnDelete' } },
      { ...DAEMONSET_DONE, numberAvailable: 1 },
    );
    expect(assess(live).state).toBe('Progressing');
  });
});
