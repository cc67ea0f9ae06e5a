import { targetNamespaceOf } from '../api/objects.ts';
import type { Release } from '../api/index.ts';
import type { KubeObject } from '../render/kube-object.ts';
import { finishRender, type FinishedRender } from '../render/pipeline.ts';
import { attempt, halt, isHalt, type Halt } from './halt.ts';
import type { ReconcilePorts, SourceTree } from './ports.ts';
import { DEFAULT_RENDER_LIMITS, renderOverLimit } from './render-limits.ts';
import type { Resolved } from './resolved.ts';
import { errorMessage, isTerminal } from './stops.ts';

/** A render or mutation error: Unsupported when retrying cannot fix it, else DeployFailed (retried). */
function renderStop(error: unknown): Halt {
  return halt(isTerminal(error) ? 'renderUnsupported' : 'renderFailed', errorMessage(error), error);
}

/**
 * Step "Render": the content's objects as the renderer (Helm, Kustomize, manifests) makes them.
 * Stops at "Render or mutate: error" / "… not supported", and at "… error" for a render of more
 * objects than the installation takes — before mutations copy the objects, and before anything
 * is stored or applied (render-limits.ts).
 */
export async function renderManifests(
  release: Release,
  ports: ReconcilePorts,
  tree: SourceTree,
  valuesLayers: readonly Record<string, unknown>[],
): Promise<KubeObject[] | Halt> {
  const rendered = await attempt(() => ports.renderer.render({ release, tree, valuesLayers }), renderStop);
  if (isHalt(rendered)) return rendered;
  return renderOverLimit(rendered.length, ports.renderLimits ?? DEFAULT_RENDER_LIMITS) ?? rendered;
}

/**
 * Step "Mutate": the Release's mutations applied to the render, the target namespace set and
 * each object marked as the Release's; its renderRef names the result. Stops at "Render or
 * mutate: error" / "… not supported".
 */
export async function mutateRender(
  release: Release,
  ports: ReconcilePorts,
  rendered: KubeObject[],
  resolved: Resolved,
): Promise<FinishedRender | Halt> {
  const finished = await attempt(async () => {
    const mutations = await ports.mutations.forRelease(release);
    return finishRender({
      objects: rendered,
      targetNamespace: targetNamespaceOf(release),
      mutations,
      releaseMark: `${release.metadata.namespace ?? 'default'}/${release.metadata.name}`,
    });
  }, renderStop);
  if (isHalt(finished)) return finished;
  resolved.mutations = finished.resolvedMutations.map((m) => ({ name: m.name, generation: m.generation }));
  resolved.renderRef = finished.renderRef;
  return finished;
}
