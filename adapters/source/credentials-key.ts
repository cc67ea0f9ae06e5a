/**
 * Which credentials a Git answer was obtained with, as part of a cache key: a checkout,
 * a ref resolution or anything else fetched with credentials is served only to a fetch that
 * presents the same credentials. Without this, a Release naming a private repository at a full
 * commit SHA, with no credentials (or with credentials the server would refuse), got another
 * Release's authenticated checkout from the cache without asking the server.
 *
 * The key is `anonymous` or a SHA-256 digest of the credentials, never the credentials themselves:
 * it names a directory on disk (git-cache.ts) and an in-memory entry (ref-cache.ts).
 */
import { createHash } from 'node:crypto';
import type { GitAuth } from './git-input.ts';

export type CredentialsKey = 'anonymous' | `sha256:${string}`;

/** Domain separation: this digest is of Git credentials, and of nothing else convoy hashes. */
const PURPOSE = 'convoy.dev/git-credentials/v1';

export function credentialsKey(auth: GitAuth | undefined): CredentialsKey {
  if (auth === undefined) return 'anonymous';
  // JSON of an array: no value can be confused with another split differently (`a:b` + `c` vs `a` + `b:c`).
  const canonical =
    'bearerToken' in auth
      ? [PURPOSE, 'bearer', auth.bearerToken]
      : [PURPOSE, 'basic', auth.username, auth.password];
  return `sha256:${createHash('sha256').update(JSON.stringify(canonical)).digest('hex')}`;
}
