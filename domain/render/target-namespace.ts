/**
 * Puts namespaced objects that name no namespace into the Release's target namespace.
 *
 * Objects that already name a namespace keep it (like `kubectl apply -n`, unlike kustomize's
 * `namespace:` which overrides). A cluster-scoped object loses a `metadata.namespace` it carries
 * (some charts set one): the API server ignores it anyway, and keeping it would give the object
 * a different identity in the render than on the cluster.
 */
import { cloneJson } from './kube-object.ts';
import type { KubeObject } from './kube-object.ts';
import { crdScopes, isNamespacedObject, namespaceScope } from './scope.ts';
import type { NamespaceScopeResolver } from './scope.ts';

/**
 * New objects with the target namespace applied; the inputs are not changed. Scopes come from
 * `isNamespaced` (e.g. API discovery), then the CRDs in the render, then the built-in list.
 */
export function applyTargetNamespace(
  objects: readonly KubeObject[],
  targetNamespace: string,
  isNamespaced?: NamespaceScopeResolver,
): KubeObject[] {
  const scope = namespaceScope(isNamespaced, crdScopes(objects));
  return objects.map((obj) => {
    const copy = cloneJson(obj);
    if (!isNamespacedObject(obj, scope)) delete copy.metadata.namespace;
    else if (!copy.metadata.namespace) copy.metadata.namespace = targetNamespace;
    return copy;
  });
}
