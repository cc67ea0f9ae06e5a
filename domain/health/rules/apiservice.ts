/**
 * APIService (apiregistration.k8s.io).
 *
 * Source: Argo CD's built-in check: `Available` True → Healthy; `Available`
 * False or Unknown → Progressing (the backing service may still be starting);
 * no `Available` condition → Progressing. kstatus has no APIService rule
 * (always Current). The progress deadline turns an APIService that stays
 * unavailable into Degraded.
 */
import type { KubeObject, ObjectHealth } from '../types.ts';
import { condition, describeCondition, healthy, progressing, withDetail } from './fields.ts';

export function apiServiceHealth(live: KubeObject): ObjectHealth {
  const available = condition(live, 'Available');
  if (available === undefined) return progressing('Waiting for the APIService to be processed');
  if (available.status === 'True')
    return healthy(withDetail('APIService is available', describeCondition(available)));
  return progressing(withDetail('APIService is not available yet', describeCondition(available)));
}
