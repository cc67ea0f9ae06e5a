/**
 * Short-lived answers of the TokenReview and SubjectAccessReview checks, as the API server's own
 * webhook authenticator and authorizer keep them (there: 2 min / 5 min allowed / 30 s denied).
 * The dashboard asks every 2 s; without this each refresh costs a TokenReview and one review per
 * namespace. Shorter here: a revoked token or a removed RoleBinding counts within `identityMs` /
 * `accessMs`. Tokens are keyed by their SHA-256, never kept. Failed checks (throws) are not kept.
 */
import { createHash } from 'node:crypto';
import type { Authenticator, Identity } from './auth.ts';

export interface AuthCacheOptions {
  readonly identityMs?: number;
  readonly accessMs?: number;
  /** Entries per map; the oldest go first. */
  readonly maxEntries?: number;
  readonly now?: () => number;
}

function boundedMap<V>(maxEntries: number) {
  const map = new Map<string, { at: number; value: V }>();
  return {
    get(key: string, now: number, ttl: number): V | undefined {
      const hit = map.get(key);
      if (hit === undefined || now - hit.at >= ttl) return undefined;
      return hit.value;
    },
    set(key: string, at: number, value: V) {
      map.delete(key);
      map.set(key, { at, value });
      if (map.size > maxEntries) map.delete(map.keys().next().value as string);
    },
  };
}

export function cachingAuthenticator(inner: Authenticator, options: AuthCacheOptions = {}): Authenticator {
  const { identityMs = 10_000, accessMs = 5_000, maxEntries = 10_000, now = Date.now } = options;
  const identities = boundedMap<Identity | undefined>(maxEntries);
  const decisions = boundedMap<boolean>(maxEntries);
  return {
    async authenticate(bearer) {
      const key = createHash('sha256').update(bearer).digest('base64url');
      const t = now();
      const cached = identities.get(key, t, identityMs);
      if (cached !== undefined) return cached;
      const identity = await inner.authenticate(bearer);
      // An invalid token is not kept: the next call checks it again.
      if (identity !== undefined) identities.set(key, t, identity);
      return identity;
    },
    async authorize(user, groups, request, subject) {
      const key = JSON.stringify([
        user,
        groups,
        subject?.uid ?? null,
        subject?.extra ?? null,
        request.verb,
        request.namespace,
        request.resource,
        request.name ?? null,
      ]);
      const t = now();
      const cached = decisions.get(key, t, accessMs);
      if (cached !== undefined) return cached;
      const allowed = await inner.authorize(user, groups, request, subject);
      decisions.set(key, t, allowed);
      return allowed;
    },
  };
}
