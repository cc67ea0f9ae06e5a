import { describe, expect, it } from 'vitest';
import { assess, condition, containerWaiting, pod } from './fixtures.ts';

const readyCondition = condition('Ready', 'True');
const notReadyCondition = condition('Ready', 'False', 'ContainersNotReady');

describe('Pod rule', () => {
  it('Pod Succeeded is Healthy', () => {
    expect(assess(pod({ restartPolicy: 'Never' }, { phase: 'Succeeded' })).state).toBe('Healthy');
  });

  it('Pod Running and Ready (restartPolicy Always) is Healthy', () => {
    expect(assess(pod({}, { phase: 'Running', conditions: [readyCondition] }))).toEqual({
      state: 'Healthy',
      message: 'Pod is Running and Ready',
    });
  });

  it('Pod Running but not Ready (restartPolicy Always) is Progressing', () => {
    expect(
      assess(pod({ restartPolicy: 'Always' }, { phase: 'Running', conditions: [notReadyCondition] })).state,
    ).toBe('Progressing');
  });

  it('Pod Running not Ready with a container that restarted before is Progressing (kstatus, not Argo CD)', () => {
    const status = {
      phase: 'Running',
      conditions: [notReadyCondition],
      containerStatuses: [
        {
          name: 'app',
          ready: false,
          restartCount: 1,
          state: { running: {} },
          lastState: { terminated: { exitCode: 1 } },
        },
      ],
    };
    expect(assess(pod({}, status)).state).toBe('Progressing');
  });

  it('Pod Running and Ready with restartPolicy OnFailure is Progressing until it succeeds', () => {
    const health = assess(
      pod({ restartPolicy: 'OnFailure' }, { phase: 'Running', conditions: [readyCondition] }),
    );
    expect(health.state).toBe('Progressing');
    expect(health.message).toContain('waiting for it to succeed');
  });

  it('Pod Running with restartPolicy Never is Progressing until it succeeds', () => {
    expect(
      assess(pod({ restartPolicy: 'Never' }, { phase: 'Running', conditions: [readyCondition] })).state,
    ).toBe('Progressing');
  });

  it('Pod Pending is Progressing', () => {
    expect(assess(pod({}, { phase: 'Pending' })).state).toBe('Progressing');
  });

  it('Pod Pending and unschedulable is Progressing with the scheduler message', () => {
    const status = {
      phase: 'Pending',
      conditions: [
        condition('PodScheduled', 'False', 'Unschedulable', '0/3 nodes are available: 3 Insufficient cpu.'),
      ],
    };
    const health = assess(pod({}, status));
    expect(health.state).toBe('Progressing');
    expect(health.message).toContain('Insufficient cpu');
  });

  it('Pod Failed is Degraded', () => {
    const status = {
      phase: 'Failed',
      containerStatuses: [{ name: 'app', state: { terminated: { exitCode: 2, reason: 'Error' } } }],
    };
    expect(assess(pod({ restartPolicy: 'Never' }, status))).toEqual({
      state: 'Degraded',
      message: 'Pod failed: container "app" exited with code 2',
    });
  });

  it('Pod Failed with a pod message is Degraded with that message', () => {
    const status = { phase: 'Failed', message: 'Pod was rejected: Node did not have enough resources' };
    expect(assess(pod({}, status)).message).toBe(
      'Pod failed: Pod was rejected: Node did not have enough resources',
    );
  });

  it('Pod Failed with an OOMKilled container is Degraded naming OOMKilled', () => {
    const status = {
      phase: 'Failed',
      containerStatuses: [{ name: 'app', state: { terminated: { exitCode: 137, reason: 'OOMKilled' } } }],
    };
    expect(assess(pod({ restartPolicy: 'Never' }, status)).message).toContain('OOMKilled');
  });

  for (const reason of [
    'CrashLoopBackOff',
    'ErrImagePull',
    'ImagePullBackOff',
    'CreateContainerConfigError',
    'InvalidImageName',
  ]) {
    it(`Pod with a container waiting in ${reason} (restartPolicy Always) is Degraded`, () => {
      const status = {
        phase: reason === 'CrashLoopBackOff' ? 'Running' : 'Pending',
        containerStatuses: [containerWaiting('app', reason, 'details')],
      };
      const health = assess(pod({}, status));
      expect(health.state).toBe('Degraded');
      expect(health.message).toBe(`container "app" is ${reason}: details`);
    });
  }

  it('Pod with an init container waiting in CrashLoopBackOff (restartPolicy Always) is Degraded', () => {
    const status = {
      phase: 'Pending',
      initContainerStatuses: [containerWaiting('migrate', 'CrashLoopBackOff')],
    };
    expect(assess(pod({}, status))).toEqual({
      state: 'Degraded',
      message: 'container "migrate" is CrashLoopBackOff',
    });
  });

  it('Pod with a container waiting in ImagePullBackOff and restartPolicy Never is Progressing', () => {
    const status = {
      phase: 'Pending',
      containerStatuses: [containerWaiting('app', 'ImagePullBackOff', 'Back-off pulling image')],
    };
    const health = assess(pod({ restartPolicy: 'Never' }, status));
    expect(health.state).toBe('Progressing');
    expect(health.message).toContain('ImagePullBackOff');
  });

  it('Pod with a container waiting in CrashLoopBackOff and restartPolicy OnFailure is Progressing', () => {
    const status = { phase: 'Running', containerStatuses: [containerWaiting('app', 'CrashLoopBackOff')] };
    expect(assess(pod({ restartPolicy: 'OnFailure' }, status)).state).toBe('Progressing');
  });

  it('Pod with a container waiting in ContainerCreating is Progressing', () => {
    const status = { phase: 'Pending', containerStatuses: [containerWaiting('app', 'ContainerCreating')] };
    expect(assess(pod({}, status)).state).toBe('Progressing');
  });

  it('Pod without a phase is Progressing', () => {
    expect(assess(pod({}, {})).state).toBe('Progressing');
  });

  it('Pod with phase Unknown is Unknown', () => {
    expect(assess(pod({}, { phase: 'Unknown' })).state).toBe('Unknown');
  });
});
