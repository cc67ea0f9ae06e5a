import type { Release } from '../api/index.ts';
import type { ReleaseSlice } from '../status/slices.ts';
import { attempt, halt, isHalt, type Halt } from './halt.ts';
import type { ReconcilePorts } from './ports.ts';
import type { Resolved } from './resolved.ts';
import type { SyncRun } from './run.ts';
import { errorMessage } from './stops.ts';

/**
 * Step "Write to the render store": the render is stored before anything is applied, because
 * drift, health, pins and rollback read it (row "Write to the render store", retried). A pinned
 * render came from the store and is not written again; without a store nothing is written.
 */
export async function storeRender(
  run: SyncRun,
  pinned: boolean,
  resolved: Resolved,
): Promise<Halt | undefined> {
  const { release, renderRef, objects } = run;
  const store = run.ports.store;
  if (store === undefined || pinned) return undefined;
  const stored = await attempt(
    () =>
      store.put(release, {
        renderRef,
        objects,
        resolvedSource: resolved.source,
        resolvedCluster: resolved.cluster,
        resolvedMutations: resolved.mutations,
      }),
    (e) =>
      halt(
        'storeWriteFailed',
        `writing render ${renderRef} to the render store failed: ${errorMessage(e)}`,
        e,
      ),
  );
  return isHalt(stored) ? stored : undefined;
}

/**
 * Render store retention after a run that applied: it runs when this run brought a render the
 * Release had attempted none like before. Only a new render adds to the store, so an unchanged
 * reconcile (interval ticks, rollout rechecks) costs the store nothing, and neither does a
 * Release's first render (it is the only one; renders left by an earlier Release of the same
 * name go at its next new render). maxAge is thus enforced at the next new render
 * (docs/decisions.md). Returns the warnings to log: retention is housekeeping, and a failure
 * must not fail the sync.
 */
export async function retainRenders(
  release: Release,
  ports: ReconcilePorts,
  renderRef: string,
  slice: ReleaseSlice,
): Promise<string[]> {
  const previousAttempt = release.status?.lastAttempted?.renderRef;
  if (ports.store === undefined || previousAttempt === undefined || renderRef === previousAttempt) return [];
  const protectedRefs = new Set(
    [
      slice.lastSuccessful?.renderRef,
      slice.lastHealthy?.renderRef,
      slice.rollout?.renderRef,
      slice.rollout?.previousRenderRef,
      slice.pin?.renderRef,
    ].filter((r): r is string => r !== undefined),
  );
  try {
    await ports.store.prune(release, protectedRefs, slice.resolvedRetentionPolicy ?? ports.retentionDefault);
    return [];
  } catch (error) {
    return [`render store retention failed: ${errorMessage(error)}`];
  }
}
