/**
 * Pod (core).
 *
 * Source: Argo CD's built-in check, with kstatus where noted.
 * - restartPolicy Always (the default): a container (or init container)
 *   waiting with a failure reason — CrashLoopBackOff, ErrImagePull,
 *   ImagePullBackOff, CreateContainerConfigError, InvalidImageName, and
 *   Argo CD's patterns `Err*`, `*Error`, `*BackOff` — is Degraded whatever
 *   the phase. Argo CD looks at app containers only and misses
 *   InvalidImageName; we look at init containers too and list it.
 * - restartPolicy OnFailure/Never: such waiting reasons stay Progressing
 *   (Argo CD: these pods run to completion and an image pull may still
 *   succeed; the progress deadline bounds the wait).
 * - Running + Always: Ready True → Healthy. Not ready → Progressing. Here
 *   Argo CD and kstatus differ: Argo CD says Degraded as soon as any container
 *   has a `lastState.terminated` (one restart, ever), kstatus says InProgress
 *   (Failed only on CrashLoopBackOff, which the waiting rule above already
 *   catches). We follow kstatus: one old restart plus a readiness blip must
 *   not fail a wave; the progress deadline turns a pod that stays unready
 *   into Degraded.
 * - Running + OnFailure/Never: Progressing until Succeeded (Argo CD; kstatus
 *   says Current once Ready — but a run-to-completion pod is done only when
 *   it has succeeded).
 * - Succeeded → Healthy (both). Failed → Degraded (Argo CD; kstatus reports a
 *   Failed pod as Current, which would hide a failed run).
 * - Pending → Progressing, also when unschedulable (Argo CD; kstatus calls an
 *   unschedulable pod Failed after 15 s — we leave that to the deadline).
 * - Phase absent → Progressing (kstatus: not observed yet); phase Unknown
 *   (node lost) or anything else → Unknown (Argo CD).
 */
import type { KubeObject, ObjectHealth } from '../types.ts';
import {
  condition,
  degraded,
  describeCondition,
  healthy,
  optionalNum,
  progressing,
  records,
  str,
  unknown,
  withDetail,
} from './fields.ts';

const FAILURE_WAITING_REASONS: ReadonlySet<string> = new Set([
  'CrashLoopBackOff',
  'ErrImagePull',
  'ImagePullBackOff',
  'CreateContainerConfigError',
  'CreateContainerError',
  'InvalidImageName',
  'RunContainerError',
  'ErrImageNeverPull',
]);

function isFailureWaitingReason(reason: string): boolean {
  return (
    FAILURE_WAITING_REASONS.has(reason) ||
    reason.startsWith('Err') ||
    reason.endsWith('Error') ||
    reason.endsWith('BackOff')
  );
}

interface WaitingContainer {
  name: string;
  reason: string;
  message: string;
}

function containerStatuses(live: KubeObject): KubeObject[] {
  return [
    ...records(live, ['status', 'initContainerStatuses']),
    ...records(live, ['status', 'containerStatuses']),
  ];
}

function failingWaits(live: KubeObject): WaitingContainer[] {
  return containerStatuses(live).flatMap((cs) => {
    const reason = str(cs, ['state', 'waiting', 'reason']);
    if (reason === undefined || !isFailureWaitingReason(reason)) return [];
    return [
      { name: str(cs, ['name']) ?? '?', reason, message: str(cs, ['state', 'waiting', 'message']) ?? '' },
    ];
  });
}

function describeWaits(waits: readonly WaitingContainer[]): string {
  return waits.map((w) => withDetail(`container "${w.name}" is ${w.reason}`, w.message)).join('; ');
}

/** Why a failed pod failed: the pod message, else the first container that terminated badly. */
function failureMessage(live: KubeObject): string {
  const podMessage = str(live, ['status', 'message']);
  if (podMessage !== undefined && podMessage !== '') return `Pod failed: ${podMessage}`;
  for (const cs of containerStatuses(live)) {
    const name = str(cs, ['name']) ?? '?';
    const terminatedMessage = str(cs, ['state', 'terminated', 'message']);
    if (terminatedMessage !== undefined && terminatedMessage !== '') {
      return `Pod failed: container "${name}": ${terminatedMessage}`;
    }
    const reason = str(cs, ['state', 'terminated', 'reason']);
    if (reason === 'OOMKilled') return `Pod failed: container "${name}" was OOMKilled`;
    const code = optionalNum(cs, ['state', 'terminated', 'exitCode']);
    if (code !== undefined && code !== 0) {
      return `Pod failed: container "${name}" exited with code ${code}`;
    }
  }
  return 'Pod failed';
}

export function podHealth(live: KubeObject): ObjectHealth {
  const restartPolicy = str(live, ['spec', 'restartPolicy']) ?? 'Always';
  const phase = str(live, ['status', 'phase']);
  const waits = failingWaits(live);
  if (restartPolicy === 'Always' && waits.length > 0) {
    return degraded(describeWaits(waits));
  }
  switch (phase) {
    case 'Succeeded':
      return healthy('Pod has completed successfully');
    case 'Failed':
      return degraded(failureMessage(live));
    case 'Pending': {
      if (waits.length > 0) return progressing(`Pod is Pending: ${describeWaits(waits)}`);
      const scheduled = condition(live, 'PodScheduled');
      if (scheduled?.status === 'False') {
        return progressing(withDetail('Pod is not scheduled yet', describeCondition(scheduled)));
      }
      return progressing(withDetail('Pod is Pending', str(live, ['status', 'message'])));
    }
    case 'Running': {
      if (restartPolicy !== 'Always') {
        if (waits.length > 0) return progressing(`Pod is Running: ${describeWaits(waits)}`);
        return progressing(`Pod with restartPolicy ${restartPolicy} is running; waiting for it to succeed`);
      }
      if (condition(live, 'Ready')?.status === 'True') return healthy('Pod is Running and Ready');
      return progressing(withDetail('Pod is Running but not Ready', str(live, ['status', 'message'])));
    }
    case undefined:
    case '':
      return progressing('Pod phase is not reported yet');
    default:
      return unknown(withDetail(`Pod phase is ${phase}`, str(live, ['status', 'message'])));
  }
}
