import type { Release } from '../api/index.ts';

export const Annotation = {
  pin: 'convoy.dev/pin',
  syncRequestedAt: 'convoy.dev/sync-requested-at',
  forceSyncRequestedAt: 'convoy.dev/force-sync-requested-at',
  syncWave: 'convoy.dev/sync-wave',
  prune: 'convoy.dev/prune',
} as const;

export function annotationOf(release: Release, key: string): string | undefined {
  const value = release.metadata.annotations?.[key];
  return value === undefined || value === '' ? undefined : value;
}

/** A request (an RFC 3339 time) counts when it is newer than the last one handled. */
export function isNewRequest(requestedAt: string | undefined, handledAt: string | undefined): boolean {
  if (requestedAt === undefined) return false;
  if (handledAt === undefined) return true;
  const requested = Date.parse(requestedAt);
  const handled = Date.parse(handledAt);
  if (Number.isNaN(requested)) return requestedAt !== handledAt;
  return Number.isNaN(handled) || requested > handled;
}
