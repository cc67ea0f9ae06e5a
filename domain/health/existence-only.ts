/**
 * Kinds whose health is their existence: nothing but a user's (or convoy's) own write changes
 * their verdict once they exist, because no controller reports on them — ConfigMaps, Secrets,
 * ServiceAccounts, RBAC, NetworkPolicies, PriorityClasses, StorageClasses, IngressClasses and
 * Services of any type but LoadBalancer. The generic rule (and the Service rule) finds every
 * existing object of these kinds Healthy, so a rollout that applied one in this rollout knows
 * its verdict from that apply: the Progressing recheck does not read it again, a saved
 * request (docs/decisions.md). A deletion since is drift, which the drift loop reports.
 *
 * A kind named by a `spec.healthAssessment.checks` entry is never existence-only: its CEL
 * verdict may depend on anything in the object.
 */
import { checkApplies, type CompiledChecks } from './cel-checks.ts';
import { apiGroup, str } from './rules/fields.ts';
import { serviceType } from './rules/service.ts';
import type { KubeObject } from './types.ts';

/** `group/kind` of the kinds with no status any controller writes (core group: ''). */
const STATUSLESS_KINDS: ReadonlySet<string> = new Set([
  '/ConfigMap',
  '/Secret',
  '/ServiceAccount',
  '/LimitRange',
  'rbac.authorization.k8s.io/Role',
  'rbac.authorization.k8s.io/RoleBinding',
  'rbac.authorization.k8s.io/ClusterRole',
  'rbac.authorization.k8s.io/ClusterRoleBinding',
  'networking.k8s.io/NetworkPolicy',
  'networking.k8s.io/IngressClass',
  'scheduling.k8s.io/PriorityClass',
  'storage.k8s.io/StorageClass',
]);

/** Whether `obj` (a rendered object) is healthy whenever it exists (see above). */
export function healthIsExistence(obj: KubeObject, checks: CompiledChecks): boolean {
  const apiVersion = str(obj, ['apiVersion']);
  const kind = str(obj, ['kind']);
  if (apiVersion === undefined || kind === undefined) return false;
  if (checks.some((check) => checkApplies(check, apiVersion, kind))) return false;
  const key = `${apiGroup(apiVersion)}/${kind}`;
  if (STATUSLESS_KINDS.has(key)) return true;
  return key === '/Service' && serviceType(obj) !== 'LoadBalancer';
}
