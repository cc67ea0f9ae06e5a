/**
 * What every ReleaseSet route of the relay API shares: its dependencies, and acting as the caller —
 * the request made with the caller's own token (user-cluster.ts) and the API server's refusals
 * answered as the API's errors.
 */
import { isKubeApiError, KubeTransportError } from '../../adapters/kube/http.ts';
import { API_GROUP } from '../../domain/api/common.ts';
import { parseReleaseSet, type ReleaseSet } from '../../domain/api/release-set.ts';
import { ApiError } from './api-common.ts';
import type { Authenticator } from './auth.ts';
import type { UserClusters } from './user-cluster.ts';
export { asUser } from './user-cluster.ts';

export interface ReleaseSetDeps {
  readonly auth: Authenticator;
  /** Absent: every ReleaseSet route answers 501 (no way to act with the caller's token). */
  readonly userClusters?: UserClusters | undefined;
  /** Namespaces that hold Releases (the Release list's cache): where a caller without a cluster-wide list right may have sets. */
  readonly releaseNamespaces: () => Promise<string[]>;
  readonly logger?: { info(msg: string, fields?: Readonly<Record<string, unknown>>): void } | undefined;
}

/** A ReleaseSet as the API server returns it: changed in place and written back whole by a write. */
export type RawSet = Record<string, unknown> & {
  metadata?: Record<string, unknown> & {
    namespace?: string;
    name?: string;
    annotations?: Record<string, string>;
  };
  spec?: Record<string, unknown>;
};

export function parsedSet(raw: unknown, key: { namespace: string; name: string }): ReleaseSet {
  const parsed = parseReleaseSet(raw);
  if (!parsed.ok)
    throw new ApiError(
      500,
      'InvalidReleaseSet',
      `ReleaseSet ${key.namespace}/${key.name} does not match the convoy API this relay knows: ${parsed.error}`,
    );
  return parsed.value;
}

/** A Kubernetes answer to the caller's own request, as the API's answer. */
export function asCaller(
  error: unknown,
  user: string,
  what: string,
  key?: { namespace: string; name: string },
): unknown {
  if (isKubeApiError(error, 403))
    return new ApiError(
      403,
      'Forbidden',
      `user "${user}" may not ${what} (the API server refused it with the caller's token)`,
    );
  if (isKubeApiError(error, 401))
    return new ApiError(401, 'Unauthorized', 'the bearer token is not valid any more; sign in again');
  if (isKubeApiError(error, 404) && key !== undefined)
    return new ApiError(
      404,
      'NotFound',
      `ReleaseSet ${key.namespace}/${key.name} does not exist: check the namespace and name (kubectl get releasesets.${API_GROUP} -n ${key.namespace})`,
    );
  if (error instanceof KubeTransportError)
    return new ApiError(
      503,
      'Unavailable',
      `the API server could not be reached: ${error.reason}; retry later`,
    );
  return error;
}
