/**
 * What happens to a render between the tool's output and the store: target namespace, then
 * Mutations, then checks (no duplicate identities, valid sync waves), then the content address.
 * Mutations see the objects with their final namespaces, so a patch target's `namespace` matches
 * what lands on the cluster.
 */
import { canonicalRender } from './canonical.ts';
import { assertNoDuplicates } from './identity.ts';
import type { KubeObject } from './kube-object.ts';
import { applyMutations } from './mutations.ts';
import type { MutationInput, ResolvedMutation } from './mutations.ts';
import { planWaves } from './order.ts';
import type { Wave } from './order.ts';
import type { NamespaceScopeResolver } from './scope.ts';
import { applyTargetNamespace } from './target-namespace.ts';
import { RELEASE_ANNOTATION } from './annotations.ts';

export interface FinishRenderInput {
  objects: readonly KubeObject[];
  targetNamespace: string;
  mutations?: readonly MutationInput[];
  isNamespaced?: NamespaceScopeResolver;
  /** `<namespace>/<name>` of the Release: set as the convoy.dev/release annotation on every object. */
  releaseMark?: string;
}

export interface FinishedRender {
  /** In identity order, as stored and hashed. */
  objects: KubeObject[];
  /** Canonical JSON of `objects`: the bytes the render store keeps (gzipped). */
  json: string;
  /** The same objects grouped into sync waves, in apply order. */
  waves: Wave[];
  renderRef: string;
  resolvedMutations: ResolvedMutation[];
}

/** Throws `RenderError` / `UnsupportedRenderError`; never changes its inputs. */
export function finishRender(input: FinishRenderInput): FinishedRender {
  const placed = applyTargetNamespace(input.objects, input.targetNamespace, input.isNamespaced);
  const mutated = applyMutations(placed, input.mutations ?? []);
  const objects =
    input.releaseMark === undefined
      ? mutated.objects
      : mutated.objects.map((o) => markRelease(o, input.releaseMark!));
  const resolved = mutated.resolved;
  assertNoDuplicates(objects, { defaultNamespace: input.targetNamespace, isNamespaced: input.isNamespaced });
  const waves = planWaves(objects);
  const canonical = canonicalRender(objects);
  return {
    objects: canonical.objects,
    json: canonical.json,
    waves,
    renderRef: canonical.renderRef,
    resolvedMutations: resolved,
  };
}

function markRelease(obj: KubeObject, mark: string): KubeObject {
  return {
    ...obj,
    metadata: {
      ...obj.metadata,
      annotations: { ...(obj.metadata.annotations ?? {}), [RELEASE_ANNOTATION]: mark },
    },
  };
}
