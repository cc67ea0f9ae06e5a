/**
 * Any other kind (custom resources, ConfigMaps, Namespaces, …).
 *
 * Argo CD has no generic rule (a kind without a check has no health, which
 * counts as healthy); kstatus checks the generation, then its standard
 * `Reconciling`/`Stalled` conditions, and ignores `Ready`. We combine them,
 * in this order:
 * 1. `status.observedGeneration < metadata.generation` → Progressing
 *    (kstatus; skipped when either field is absent). It comes before `Ready`
 *    because a `Ready` written for an older generation is stale.
 * 2. `Stalled` True → Degraded; `Reconciling` True → Progressing (kstatus).
 * 3. A `Ready` condition (the convention of Flux, Crossplane, cert-manager,
 *    Cluster API, …):
 *    - its own `observedGeneration` below `metadata.generation` → Progressing;
 *    - True → Healthy; Unknown → Progressing;
 *    - False with an in-progress reason (IN_PROGRESS_REASONS: Progressing,
 *      Reconciling, Pending, Creating, Issuing, DependencyNotReady, …) →
 *      Progressing; False with any other reason → Degraded.
 *    A controller that says "not ready, still working" under another reason
 *    is Degraded at once; a CEL check overrides that.
 * 4. Otherwise Healthy — including objects with no status at all
 *    (ConfigMap, ServiceAccount, RBAC).
 */
import type { KubeObject, ObjectHealth } from '../types.ts';
import {
  condition,
  conditions,
  degraded,
  describeCondition,
  healthy,
  optionalNum,
  progressing,
  withDetail,
} from './fields.ts';

/** `Ready` False reasons that mean "still converging" rather than "failed". */
export const IN_PROGRESS_REASONS: ReadonlySet<string> = new Set([
  'Progressing',
  'Reconciling',
  'InProgress',
  'Pending',
  'Creating',
  'Provisioning',
  'Installing',
  'Upgrading',
  'Updating',
  'Initializing',
  'Issuing',
  'Waiting',
  'DependencyNotReady',
  'ReconciliationInProgress',
]);

export function genericHealth(live: KubeObject): ObjectHealth {
  const generation = optionalNum(live, ['metadata', 'generation']);
  const observedGeneration = optionalNum(live, ['status', 'observedGeneration']);
  if (generation !== undefined && observedGeneration !== undefined && observedGeneration < generation) {
    return progressing(
      `Waiting for the controller to observe generation ${generation} (observedGeneration ${observedGeneration})`,
    );
  }
  for (const c of conditions(live)) {
    if (c.type === 'Stalled' && c.status === 'True')
      return degraded(withDetail('Stalled', describeCondition(c)));
  }
  for (const c of conditions(live)) {
    if (c.type === 'Reconciling' && c.status === 'True') {
      return progressing(withDetail('Reconciling', describeCondition(c)));
    }
  }
  const ready = condition(live, 'Ready');
  if (ready !== undefined) {
    if (
      generation !== undefined &&
      ready.observedGeneration !== undefined &&
      ready.observedGeneration < generation
    ) {
      return progressing(
        `Waiting for the Ready condition to reflect generation ${generation} (it reflects ${ready.observedGeneration})`,
      );
    }
    if (ready.status === 'True') return healthy(withDetail('Ready', describeCondition(ready)));
    if (ready.status === 'False' && !IN_PROGRESS_REASONS.has(ready.reason)) {
      return degraded(withDetail('Not ready', describeCondition(ready)));
    }
    return progressing(withDetail('Not ready yet', describeCondition(ready)));
  }
  return healthy('No health rule for this kind and no Ready condition: counted as healthy');
}
