/**
 * Service (core).
 *
 * Source: Argo CD's built-in check.
 * - type LoadBalancer: Healthy once `status.loadBalancer.ingress` has an
 *   entry, else Progressing. kstatus only waits for `spec.clusterIP`, which
 *   the API server assigns at once, so it never waits for the load balancer;
 *   we follow Argo CD, because traffic does not reach the Service before the
 *   address exists.
 * - Every other type → Healthy (both).
 */
import type { KubeObject, ObjectHealth } from '../types.ts';
import { healthy, progressing, records, str } from './fields.ts';

/** The addresses in `status.loadBalancer.ingress` (shared with the Ingress rule). */
export function loadBalancerAddresses(live: KubeObject): string[] | undefined {
  const entries = records(live, ['status', 'loadBalancer', 'ingress']);
  if (entries.length === 0) return undefined;
  return entries.map((e) => str(e, ['ip']) ?? str(e, ['hostname']) ?? '(no address)');
}

/** `spec.type`, ClusterIP when unset (the API server's default). */
export function serviceType(obj: KubeObject): string {
  return str(obj, ['spec', 'type']) ?? 'ClusterIP';
}

export function serviceHealth(live: KubeObject): ObjectHealth {
  const type = serviceType(live);
  if (type !== 'LoadBalancer') return healthy(`Service of type ${type}`);
  const addresses = loadBalancerAddresses(live);
  if (addresses === undefined) {
    return progressing(
      'Waiting for the load balancer to be provisioned (status.loadBalancer.ingress is empty)',
    );
  }
  return healthy(`Load balancer provisioned: ${addresses.join(', ')}`);
}
