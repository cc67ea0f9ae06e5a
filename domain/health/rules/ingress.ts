/**
 * Ingress (networking.k8s.io, extensions).
 *
 * Source: Argo CD's built-in check: Healthy once `status.loadBalancer.ingress`
 * has an entry, else Progressing. kstatus has no Ingress rule (always
 * Current). We follow Argo CD: an address is the only sign an ingress
 * controller has taken the Ingress. Known limit: controllers that never
 * publish an address (some nginx/Traefik setups) leave the Ingress
 * Progressing until the progress deadline; override with a CEL check
 * `{apiVersion: networking.k8s.io/v1, kind: Ingress, healthy: "true"}`.
 */
import type { KubeObject, ObjectHealth } from '../types.ts';
import { healthy, progressing } from './fields.ts';
import { loadBalancerAddresses } from './service.ts';

export function ingressHealth(live: KubeObject): ObjectHealth {
  const addresses = loadBalancerAddresses(live);
  if (addresses === undefined) {
    return progressing(
      'Waiting for an ingress controller to assign an address (status.loadBalancer.ingress is empty)',
    );
  }
  return healthy(`Ingress address assigned: ${addresses.join(', ')}`);
}
