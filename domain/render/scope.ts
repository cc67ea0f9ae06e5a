/**
 * Whether a kind is namespaced. Built-in cluster-scoped kinds are listed by group and kind (a
 * custom resource may reuse a built-in kind name in its own group); custom resources take their
 * scope from a CustomResourceDefinition in the same render, or from the caller's resolver (API
 * discovery on the target cluster). Unknown kinds are taken as namespaced, as `kubectl` does
 * without discovery.
 */
import { apiGroup, isPlainObject } from './kube-object.ts';
import type { KubeObject } from './kube-object.ts';

/** Answers for kinds it knows (`true`: namespaced) and `undefined` for the others. */
export type NamespaceScopeResolver = (group: string, kind: string) => boolean | undefined;

const CLUSTER_SCOPED: ReadonlySet<string> = new Set([
  '/Namespace',
  '/Node',
  '/PersistentVolume',
  '/ComponentStatus',
  'apiextensions.k8s.io/CustomResourceDefinition',
  'apiregistration.k8s.io/APIService',
  'rbac.authorization.k8s.io/ClusterRole',
  'rbac.authorization.k8s.io/ClusterRoleBinding',
  'storage.k8s.io/StorageClass',
  'storage.k8s.io/CSIDriver',
  'storage.k8s.io/CSINode',
  'storage.k8s.io/VolumeAttachment',
  'storage.k8s.io/VolumeAttributesClass',
  'scheduling.k8s.io/PriorityClass',
  'admissionregistration.k8s.io/MutatingWebhookConfiguration',
  'admissionregistration.k8s.io/ValidatingWebhookConfiguration',
  'admissionregistration.k8s.io/ValidatingAdmissionPolicy',
  'admissionregistration.k8s.io/ValidatingAdmissionPolicyBinding',
  'admissionregistration.k8s.io/MutatingAdmissionPolicy',
  'admissionregistration.k8s.io/MutatingAdmissionPolicyBinding',
  'networking.k8s.io/IngressClass',
  'networking.k8s.io/IPAddress',
  'networking.k8s.io/ServiceCIDR',
  'node.k8s.io/RuntimeClass',
  'flowcontrol.apiserver.k8s.io/FlowSchema',
  'flowcontrol.apiserver.k8s.io/PriorityLevelConfiguration',
  'certificates.k8s.io/CertificateSigningRequest',
  'certificates.k8s.io/ClusterTrustBundle',
  'resource.k8s.io/DeviceClass',
  'resource.k8s.io/ResourceSlice',
  'policy/PodSecurityPolicy',
  'storagemigration.k8s.io/StorageVersionMigration',
  'internal.apiserver.k8s.io/StorageVersion',
]);

/** Scopes declared by the CustomResourceDefinitions among `objects`. */
export function crdScopes(objects: readonly KubeObject[]): NamespaceScopeResolver {
  const scopes = new Map<string, boolean>();
  for (const obj of objects) {
    if (obj.kind !== 'CustomResourceDefinition' || apiGroup(obj.apiVersion) !== 'apiextensions.k8s.io')
      continue;
    const spec = obj.spec;
    if (!isPlainObject(spec) || typeof spec.group !== 'string' || !isPlainObject(spec.names)) continue;
    const kind = spec.names.kind;
    if (typeof kind !== 'string') continue;
    if (spec.scope === 'Cluster' || spec.scope === 'Namespaced') {
      scopes.set(`${spec.group}/${kind}`, spec.scope === 'Namespaced');
    }
  }
  return (group, kind) => scopes.get(`${group}/${kind}`);
}

/**
 * A resolver that asks `resolvers` in turn and falls back to the built-in list (and to
 * "namespaced" for kinds nobody knows).
 */
export function namespaceScope(
  ...resolvers: (NamespaceScopeResolver | undefined)[]
): (group: string, kind: string) => boolean {
  return (group, kind) => {
    for (const resolve of resolvers) {
      const answer = resolve?.(group, kind);
      if (answer !== undefined) return answer;
    }
    return !CLUSTER_SCOPED.has(`${group}/${kind}`);
  };
}

export function isNamespacedObject(
  obj: KubeObject,
  isNamespaced: (group: string, kind: string) => boolean,
): boolean {
  return isNamespaced(apiGroup(obj.apiVersion), obj.kind);
}
