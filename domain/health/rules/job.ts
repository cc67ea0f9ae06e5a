/**
 * Job (batch).
 *
 * Source: Argo CD's built-in check, reading condition status (Argo CD only
 * looks at the condition type).
 * - `Failed` True → Degraded; `Complete` True → Healthy (both agree).
 * - Running: Argo CD says Progressing, kstatus says Current once started. We
 *   follow Argo CD: a wave that holds a Job waits for it to finish.
 * - Suspended (`spec.suspend: true`): Argo CD reports `Suspended`, a state we
 *   do not have; kstatus reports Current. We report Healthy, as for a paused
 *   Deployment: suspension is declared, and waiting for it would only end in
 *   the progress deadline. We read `spec.suspend` (the desired state), not
 *   the `Suspended` condition, which lags behind a resume. A queue that
 *   unsuspends Jobs (Kueue) wants a CEL check instead.
 */
import type { KubeObject, ObjectHealth } from '../types.ts';
import {
  condition,
  degraded,
  describeCondition,
  field,
  healthy,
  num,
  progressing,
  str,
  withDetail,
} from './fields.ts';

export function jobHealth(live: KubeObject): ObjectHealth {
  const failed = condition(live, 'Failed');
  if (failed?.status === 'True') {
    return degraded(withDetail('Job failed', describeCondition(failed)));
  }
  const complete = condition(live, 'Complete');
  if (complete?.status === 'True') {
    return healthy(withDetail('Job completed', complete.message));
  }
  if (field(live, ['spec', 'suspend']) === true) {
    return healthy('Job is suspended');
  }
  if (str(live, ['status', 'startTime']) === undefined) {
    return progressing('Job has not started yet');
  }
  const active = num(live, ['status', 'active'], 0);
  const succeeded = num(live, ['status', 'succeeded'], 0);
  const failedPods = num(live, ['status', 'failed'], 0);
  return progressing(`Job is running: ${active} active, ${succeeded} succeeded, ${failedPods} failed pods`);
}
