/**
 * The identity of a rendered object: `group/kind/namespace/name` (the core group is empty, a
 * cluster-scoped object has an empty namespace). The API version is not part of it: the same
 * object served at two versions is still one object.
 */
import { RenderError } from './errors.ts';
import { apiGroup, describeObject } from './kube-object.ts';
import type { KubeObject } from './kube-object.ts';
import { crdScopes, namespaceScope } from './scope.ts';
import type { NamespaceScopeResolver } from './scope.ts';

export function objectKey(
  obj: KubeObject,
  defaultNamespace: string,
  isNamespaced?: NamespaceScopeResolver,
): string {
  const group = apiGroup(obj.apiVersion);
  const namespaced = namespaceScope(isNamespaced)(group, obj.kind);
  const namespace = namespaced ? obj.metadata.namespace || defaultNamespace : '';
  return `${group}/${obj.kind}/${namespace}/${obj.metadata.name}`;
}

export interface DuplicateCheckOptions {
  /** Namespace of namespaced objects that have none (the Release's target namespace). Default ''. */
  defaultNamespace?: string;
  /** Scope of kinds the built-in list and the render's own CRDs do not know. */
  isNamespaced?: NamespaceScopeResolver;
  /** How a message names the object at `index`, e.g. its file and document. */
  describe?: (index: number) => string;
}

/**
 * Throws `RenderError` when two objects have the same identity, naming both occurrences:
 * applying both would make the last one silently win.
 */
export function assertNoDuplicates(
  objects: readonly KubeObject[],
  options: DuplicateCheckOptions = {},
): void {
  const scope = namespaceScope(options.isNamespaced, crdScopes(objects));
  const describe = options.describe ?? ((index: number) => `object ${index + 1} of the render`);
  const seen = new Map<string, number>();
  objects.forEach((obj, index) => {
    const key = objectKey(obj, options.defaultNamespace ?? '', scope);
    const first = seen.get(key);
    if (first === undefined) {
      seen.set(key, index);
      return;
    }
    const what = describeObject(obj);
    throw new RenderError(
      `${what} appears twice in the render (${describe(first)} and ${describe(index)}); ` +
        'remove one of them, or give them different names or namespaces',
      { object: what },
    );
  });
}
