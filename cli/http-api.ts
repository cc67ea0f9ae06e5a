/**
 * The relay's HTTP API, for what only it knows: the stored renders (history,
 * pins of older renders). Used when --api or CONVOY_API_URL names it; the
 * bearer token is CONVOY_TOKEN or the kubeconfig user's token, so the relay
 * checks the same identity (TokenReview + SubjectAccessReview).
 */
import type { StoredRenderMeta } from '../domain/store/render-store.ts';
import type { ReleaseKey } from '../views/cluster.ts';
import type { Cluster } from '../views/cluster.ts';
import { CliFailure } from './output.ts';

export interface ApiTarget {
  url: string;
  token: string;
}

export function apiTarget(
  flag: string | undefined,
  env: NodeJS.ProcessEnv,
  cluster: Cluster,
): ApiTarget | undefined {
  const url = flag ?? env.CONVOY_API_URL;
  if (url === undefined || url === '') return undefined;
  const token = env.CONVOY_TOKEN || cluster.config.bearerToken();
  if (token === undefined || token === '') {
    throw new CliFailure(
      `the convoy HTTP API at ${url} needs a bearer token: set CONVOY_TOKEN or use a kubeconfig user with a token`,
    );
  }
  return { url: url.replace(/\/+$/, ''), token };
}

export async function apiGet<T>(api: ApiTarget, path: string): Promise<T> {
  let response: Response;
  try {
    response = await fetch(`${api.url}${path}`, {
      headers: { Authorization: `Bearer ${api.token}` },
      signal: AbortSignal.timeout(30_000),
    });
  } catch (error) {
    throw new CliFailure(
      `cannot reach the convoy HTTP API at ${api.url}: ${error instanceof Error ? (error.cause instanceof Error ? error.cause.message : error.message) : String(error)}`,
    );
  }
  const body = (await response.json().catch(() => undefined)) as { message?: string } | undefined;
  if (!response.ok)
    throw new CliFailure(
      `convoy HTTP API: ${body?.message ?? response.statusText} (HTTP ${response.status})`,
    );
  return body as T;
}

export async function storedRenders(api: ApiTarget, key: ReleaseKey): Promise<StoredRenderMeta[]> {
  const path = `/v1/namespaces/${encodeURIComponent(key.namespace)}/releases/${encodeURIComponent(key.name)}/renders`;
  return (await apiGet<{ renders: StoredRenderMeta[] }>(api, path)).renders;
}
