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

/**
 * A /sync or /sync?force=true request that no reconcile attempt has followed yet: its run
 * must resolve the source on the server, not from a shared cache. Both times are whole
 * seconds, so a request in the same second as the last attempt still counts (at worst one
 * more ls-remote).
 */
export function hasUnansweredSyncRequest(release: Release): boolean {
  const attempted = release.status?.lastAttempted?.attemptedAt;
  const handled = attempted === undefined ? Number.NaN : Date.parse(attempted);
  return [Annotation.syncRequestedAt, Annotation.forceSyncRequestedAt].some((key) => {
    const value = annotationOf(release, key);
    if (value === undefined) return false;
    const requested = Date.parse(value);
    return Number.isNaN(handled) || Number.isNaN(requested) || requested >= handled;
  });
}

/** A renderRef as status and the render store spell it. */
export const RENDER_REF = /^sha256:[0-9a-f]{64}$/;

const SHOWN_CHARACTERS = 80;

/** A bad annotation value for a message: JSON-quoted, at most 80 characters of it. */
export function quoteValue(value: string): string {
  return value.length <= SHOWN_CHARACTERS
    ? JSON.stringify(value)
    : `${JSON.stringify(value.slice(0, SHOWN_CHARACTERS))}… (${value.length} characters)`;
}

/** Why a convoy.dev/pin value cannot name a render, or undefined when it is a renderRef. */
export function pinProblem(value: string): string | undefined {
  if (RENDER_REF.test(value)) return undefined;
  const hint = /^sha256:[0-9a-fA-F]{64}$/.test(value) ? ' (the hex digits must be lower case)' : '';
  return `the ${Annotation.pin} annotation ${quoteValue(value)} is not a renderRef: it must be sha256:<64 lower-case hex digits>${hint}; pin a render listed by GET …/renders or remove the annotation`;
}
