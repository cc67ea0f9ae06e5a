/**
 * CustomResourceDefinition (apiextensions.k8s.io).
 *
 * Source: Argo CD's built-in check, with kstatus for the install window.
 * - No conditions yet → Progressing (both).
 * - `Terminating` True → Progressing (Argo CD).
 * - `NamesAccepted` False → Degraded (both): the names clash with another CRD.
 * - `NonStructuralSchema` True → Degraded (Argo CD; kstatus ignores it).
 * - `Established` True → Healthy (both).
 * - Not established: Argo CD says Degraded at once; kstatus says InProgress
 *   while `Established` is absent or False with reason `Installing`, and
 *   Failed for any other False. We follow kstatus: a CRD created a moment ago
 *   is Installing, not broken.
 */
import type { KubeObject, ObjectHealth } from '../types.ts';
import {
  condition,
  conditions,
  degraded,
  describeCondition,
  healthy,
  progressing,
  withDetail,
} from './fields.ts';

export function crdHealth(live: KubeObject): ObjectHealth {
  if (conditions(live).length === 0) {
    return progressing('Waiting for the API server to report the CRD conditions');
  }
  const terminating = condition(live, 'Terminating');
  if (terminating?.status === 'True') {
    return progressing(withDetail('CRD is being terminated', describeCondition(terminating)));
  }
  const namesAccepted = condition(live, 'NamesAccepted');
  if (namesAccepted?.status === 'False') {
    return degraded(withDetail('CRD names have not been accepted', describeCondition(namesAccepted)));
  }
  const nonStructural = condition(live, 'NonStructuralSchema');
  if (nonStructural?.status === 'True') {
    return degraded(withDetail('CRD schema is not structural', describeCondition(nonStructural)));
  }
  const established = condition(live, 'Established');
  if (established?.status === 'True') return healthy('CRD is established');
  if (established?.status === 'False' && established.reason !== 'Installing') {
    return degraded(withDetail('CRD is not established', describeCondition(established)));
  }
  return progressing('CRD is being installed (not established yet)');
}
