import { targetNamespaceOf } from '../api/objects.ts';
import type { Release } from '../api/index.ts';
import { finishRender } from '../render/pipeline.ts';
import type { KubeObject } from '../render/kube-object.ts';
import { attempt, halt, isHalt, type Halt } from './halt.ts';
import type { ReconcilePorts, ResolvedCluster, ResolvedMutation, ResolvedSource, TargetCluster } from './ports.ts';
import { errorMessage, isTerminal, isUnverified } from './stops.ts';
import { Annotation, annotationOf, pinProblem } from './annotations.ts';
import { DEFAULT_RENDER_LIMITS, renderOverLimit } from './render-limits.ts';

/** What the reconcile found before it stopped (status.lastAttempted's resolved* fields). */
export interface Resolved {
  source?: ResolvedSource;
  cluster?: ResolvedCluster;
  mutations?: ResolvedMutation[];
  renderRef?: string;
}

export interface PreparedRender {
  target: TargetCluster;
  objects: KubeObject[];
  renderRef: string;
  /** The render came from the store because of a pin; it is not written again. */
  pinned: boolean;
}

export type PinState = 'Active' | 'NotFound' | 'NoStore';

/**
 * Steps 1–5 of the reconcile: fetch the source, find the cluster, read Helm
 * values, render and mutate — or, with a pin, find the cluster and load the
 * pinned render. Fills `resolved` as it goes, so a stop reports what was found.
 */
export async function prepareRender(
  release: Release,
  ports: ReconcilePorts,
  resolved: Resolved,
  pin: { state?: PinState },
): Promise<PreparedRender | Halt> {
  const pinnedRef = annotationOf(release, Annotation.pin);
  if (pinnedRef !== undefined) return loadPinned(release, ports, resolved, pinnedRef, pin);

  const tree = await attempt(
    () => ports.source.resolve(release),
    (e) => halt(isUnverified(e) ? 'sourceUnverified' : isTerminal(e) ? 'sourceUnsupported' : 'sourceFailed', errorMessage(e), e),
  );
  if (isHalt(tree)) return tree;
  resolved.source = tree.resolved;

  const target = await resolveTarget(release, ports, resolved);
  if (isHalt(target)) return target;

  const valuesLayers =
    release.spec.content.type === 'Helm'
      ? await attempt(
          () => ports.values.read(release),
          (e) => halt('valuesNotReady', errorMessage(e), e),
        )
      : [];
  if (isHalt(valuesLayers)) return valuesLayers;

  const rendered = await attempt(
    () => ports.renderer.render({ release, tree, valuesLayers }),
    (e) => halt(isTerminal(e) ? 'renderUnsupported' : 'renderFailed', errorMessage(e), e),
  );
  if (isHalt(rendered)) return rendered;
  // Before mutations copy the objects, and before anything is stored or applied.
  const overLimit = renderOverLimit(rendered.length, ports.renderLimits ?? DEFAULT_RENDER_LIMITS);
  if (overLimit !== undefined) return overLimit;

  const finished = await attempt(
    async () => {
      const mutations = await ports.mutations.forRelease(release);
      return finishRender({
        objects: rendered,
        targetNamespace: targetNamespaceOf(release),
        mutations,
        releaseMark: `${release.metadata.namespace ?? 'default'}/${release.metadata.name}`,
      });
    },
    (e) => halt(isTerminal(e) ? 'renderUnsupported' : 'renderFailed', errorMessage(e), e),
  );
  if (isHalt(finished)) return finished;
  resolved.mutations = finished.resolvedMutations.map((m) => ({ name: m.name, generation: m.generation }));
  resolved.renderRef = finished.renderRef;
  return { target, objects: finished.objects, renderRef: finished.renderRef, pinned: false };
}

async function resolveTarget(release: Release, ports: ReconcilePorts, resolved: Resolved): Promise<TargetCluster | Halt> {
  const target = await attempt(
    () => ports.cluster.resolve(release),
    (e) => halt('clusterNotReady', errorMessage(e), e),
  );
  if (!isHalt(target)) resolved.cluster = target.identity;
  return target;
}

async function loadPinned(
  release: Release,
  ports: ReconcilePorts,
  resolved: Resolved,
  pinnedRef: string,
  pin: { state?: PinState },
): Promise<PreparedRender | Halt> {
  const problem = pinProblem(pinnedRef);
  if (problem !== undefined) {
    // Never copied into status.lastAttempted.renderRef: the CRD would refuse the whole status.
    pin.state = 'NotFound';
    return halt('pinInvalid', problem);
  }
  const target = await resolveTarget(release, ports, resolved);
  if (isHalt(target)) return target;
  resolved.renderRef = pinnedRef;
  const store = ports.store;
  if (store === undefined) {
    pin.state = 'NoStore';
    return halt('pinNotAvailable', `the Release is pinned to ${pinnedRef}, but no render store is configured`);
  }
  const stored = await attempt(
    () => store.get(release, pinnedRef),
    (e) => halt('pinUnreadable', `pinned render ${pinnedRef}: ${errorMessage(e)}`, e),
  );
  if (isHalt(stored)) return stored;
  if (stored === undefined) {
    pin.state = 'NotFound';
    return halt(
      'pinNotAvailable',
      `the Release is pinned to ${pinnedRef}, which the render store does not hold; pin a render listed by GET …/renders or remove the ${Annotation.pin} annotation`,
    );
  }
  pin.state = 'Active';
  // A render stored under a higher limit is not applied either (the row "Load the pinned render: read or parse error").
  const overLimit = renderOverLimit(stored.objects.length, ports.renderLimits ?? DEFAULT_RENDER_LIMITS, `the pinned render ${pinnedRef}`);
  if (overLimit !== undefined) return { ...overLimit, halt: 'pinUnreadable' };
  if (stored.resolvedSource) resolved.source = stored.resolvedSource;
  if (stored.resolvedMutations) resolved.mutations = [...stored.resolvedMutations];
  return { target, objects: [...stored.objects], renderRef: pinnedRef, pinned: true };
}
