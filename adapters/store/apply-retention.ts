import type { RenderStore } from '../../domain/store/render-store.ts';
import { selectExpired } from '../../domain/store/retention.ts';
import type { RetentionPolicy } from '../../domain/store/retention.ts';

export interface RetentionResult {
  /** The renderRefs deleted, oldest first. */
  readonly deleted: string[];
}

/**
 * Deletes the renders of one Release that `policy` no longer keeps, never
 * one in `protectedRefs` (see domain/store/retention.ts for the rule).
 *
 * Deletes oldest first, one at a time, and stops at the first failure by
 * throwing it (a RenderStoreUnavailableError): retention is recomputed from
 * the store on the next run, so a partial run loses nothing.
 */
export async function applyRetention(
  store: RenderStore,
  namespace: string,
  release: string,
  policy: RetentionPolicy,
  protectedRefs: ReadonlySet<string>,
  now: Date,
): Promise<RetentionResult> {
  const renders = await store.list(namespace, release);
  const expired = selectExpired(renders, policy, protectedRefs, now);
  const deleted: string[] = [];
  for (const renderRef of expired) {
    await store.delete(namespace, release, renderRef);
    deleted.push(renderRef);
  }
  return { deleted };
}
