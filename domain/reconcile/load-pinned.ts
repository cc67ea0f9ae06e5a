import type { Release } from '../api/index.ts';
import { Annotation, pinProblem } from './annotations.ts';
import { findCluster } from './find-cluster.ts';
import { attempt, halt, isHalt, type Halt } from './halt.ts';
import type { ReconcilePorts } from './ports.ts';
import { DEFAULT_RENDER_LIMITS, renderOverLimit } from './render-limits.ts';
import type { PinState, PreparedRender, Resolved } from './resolved.ts';
import { errorMessage } from './stops.ts';

/**
 * Step "Load the pinned render" (a `convoy.dev/pin` annotation): find the cluster, then the
 * pinned render in the render store instead of fetching and rendering. Stops at "not available"
 * (pinNotAvailable: no store, or the store lacks it; pinInvalid: the annotation is no renderRef)
 * and at "read or parse error" (pinUnreadable, also for a stored render over the object limit).
 * Sets `pin.state` for status.pin.
 */
export async function loadPinnedRender(
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
  const target = await findCluster(release, ports, resolved);
  if (isHalt(target)) return target;
  resolved.renderRef = pinnedRef;
  const store = ports.store;
  if (store === undefined) {
    pin.state = 'NoStore';
    return halt(
      'pinNotAvailable',
      `the Release is pinned to ${pinnedRef}, but no render store is configured`,
    );
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
  const overLimit = renderOverLimit(
    stored.objects.length,
    ports.renderLimits ?? DEFAULT_RENDER_LIMITS,
    `the pinned render ${pinnedRef}`,
  );
  if (overLimit !== undefined) return { ...overLimit, halt: 'pinUnreadable' };
  if (stored.resolvedSource) resolved.source = stored.resolvedSource;
  if (stored.resolvedMutations) resolved.mutations = [...stored.resolvedMutations];
  return { target, objects: [...stored.objects], renderRef: pinnedRef, pinned: true };
}
