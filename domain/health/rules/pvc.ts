/**
 * PersistentVolumeClaim (core).
 *
 * Source: Argo CD's built-in check.
 * - Bound → Healthy; Pending → Progressing (both).
 * - Lost → Degraded: Argo CD; kstatus says InProgress for every phase but
 *   Bound. A Lost claim's volume is gone and will not come back by itself.
 * - Phase absent → Progressing (not observed yet; Argo CD says Unknown);
 *   any other phase → Unknown (Argo CD).
 * Known limit: a claim of a `WaitForFirstConsumer` storage class stays
 *   Pending until a pod uses it; nothing in the claim says so. Put its
 *   consumer in the same wave, or override with a CEL check such as
 *   `object.status.phase in ['Bound', 'Pending']`.
 */
import type { KubeObject, ObjectHealth } from '../types.ts';
import { degraded, healthy, progressing, str, unknown } from './fields.ts';

export function pvcHealth(live: KubeObject): ObjectHealth {
  const phase = str(live, ['status', 'phase']);
  switch (phase) {
    case 'Bound':
      return healthy('PersistentVolumeClaim is Bound');
    case 'Pending':
      return progressing('PersistentVolumeClaim is Pending: waiting for a volume to be bound');
    case 'Lost':
      return degraded('PersistentVolumeClaim is Lost: its volume no longer exists');
    case undefined:
    case '':
      return progressing('PersistentVolumeClaim phase is not reported yet');
    default:
      return unknown(`PersistentVolumeClaim phase is ${phase}`);
  }
}
