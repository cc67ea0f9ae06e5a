/**
 * One Git ref resolution (ls-remote) per repository, credentials and ref, shared by the
 * Releases a function container reconciles within `ttlMs`: 1,000 Releases on one
 * repository make one ls-remote per window instead of 1,000.
 *
 * - Concurrent resolutions of the same key share the request in flight.
 * - A failure is never kept: the next run asks the server again.
 * - Keys are per repository, so a slow Git server delays only the Releases of that
 *   repository (the batch handler runs a batch's records concurrently).
 * - The credentials are part of the key (credentials-key.ts: a digest, or `anonymous`), so a
 *   Release never reuses what another Release's credentials were allowed to see.
 * - A commit moved by a push is seen after at most `ttlMs`, and at once by the run a push
 *   webhook triggers: a message with the relay's cause `git push …` clears the cache first
 *   (adapters/reconcile/port-caches.ts); a run for a sync request not handled yet
 *   (`convoy.dev/sync-requested-at` / `force-sync-requested-at` newer than the last attempt)
 *   asks the server (`fresh`) and shares that newer answer.
 */
import { createHash } from 'node:crypto';
import type { CredentialsKey } from './credentials-key.ts';

export interface RefCache {
  /**
   * The commit of `key`, from the cache while its answer is fresh. `fresh`: ask the server
   * now (a sync request must see the newest commit), and keep that answer for the others.
   */
  resolve(key: RefCacheKey, lookup: () => Promise<string>, options?: { fresh?: boolean }): Promise<string>;
  /** Forgets every resolution (a push was announced: the next run asks the server). */
  clear(): void;
}

export interface RefCacheKey {
  url: string;
  ref: string;
  /** The credentials the lookup presents (never the credentials themselves). */
  credentials: CredentialsKey;
}

export const DEFAULT_REF_CACHE_TTL_MS = 15_000;

export function createRefCache(
  options: { ttlMs?: number; now?: () => number; maxEntries?: number } = {},
): RefCache {
  const ttlMs = options.ttlMs ?? DEFAULT_REF_CACHE_TTL_MS;
  const now = options.now ?? Date.now;
  const maxEntries = options.maxEntries ?? 512;
  const entries = new Map<string, { commit: Promise<string>; expiresAt: number }>();
  return {
    clear() {
      entries.clear();
    },
    async resolve(key, lookup, resolveOptions = {}) {
      const id = createHash('sha256')
        .update(JSON.stringify([key.url, key.ref, key.credentials]))
        .digest('hex');
      const hit = entries.get(id);
      if (hit !== undefined && hit.expiresAt > now() && resolveOptions.fresh !== true) return hit.commit;
      if (resolveOptions.fresh === true) entries.delete(id);
      const commit = lookup();
      if (ttlMs <= 0) return commit;
      if (entries.size >= maxEntries) {
        const oldest = entries.keys().next();
        if (!oldest.done) entries.delete(oldest.value);
      }
      // The window starts when the answer arrives, not when it was asked.
      const entry = { commit, expiresAt: Number.POSITIVE_INFINITY };
      entries.set(id, entry);
      commit.then(
        () => {
          entry.expiresAt = now() + ttlMs;
        },
        () => {
          if (entries.get(id) === entry) entries.delete(id);
        },
      );
      return commit;
    },
  };
}
