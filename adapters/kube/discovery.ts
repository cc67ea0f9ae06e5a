/**
 * API discovery for one cluster: which REST resource serves a kind, and whether it is namespaced.
 *
 * One GET of `/api/v1` or `/apis/<group>/<version>` per apiVersion, kept for the life of the
 * Discovery (one target cluster for one loop run); a kind missing from a cached list is looked
 * up once more, because a CustomResourceDefinition applied in an earlier wave may serve it now.
 */

/** One raw JSON request to an API server; `body` is the parsed JSON (or the text when not JSON). */
export interface KubeRequestInit {
  method: 'GET' | 'PATCH' | 'DELETE';
  path: string;
  query?: Record<string, string>;
  body?: string;
  contentType?: string;
}

export interface KubeResponse {
  status: number;
  body: unknown;
}

export type KubeRequest = (init: KubeRequestInit) => Promise<KubeResponse>;

export interface ServedResource {
  /** The plural resource name in the URL path, e.g. `deployments`. */
  name: string;
  namespaced: boolean;
}

export interface Discovery {
  /** The resource serving `kind` in `apiVersion`, or undefined when the cluster does not serve it. */
  resourceFor(apiVersion: string, kind: string): Promise<ServedResource | undefined>;
}

/** A discovery request the server answered with an error other than 404 (transient: retry). */
export class DiscoveryError extends Error {
  override name = 'DiscoveryError';
}

type KindTable = ReadonlyMap<string, ServedResource>;

export function apiVersionPath(apiVersion: string): string {
  return apiVersion.includes('/') ? `/apis/${apiVersion}` : `/api/${apiVersion}`;
}

export function createDiscovery(request: KubeRequest): Discovery {
  // Promises, so that objects dry-run in parallel share one request per apiVersion.
  const tables = new Map<string, Promise<KindTable | undefined>>();

  const fetchTable = (apiVersion: string): Promise<KindTable | undefined> => {
    const pending = loadKindTable(request, apiVersion);
    tables.set(apiVersion, pending);
    // A failed lookup is not remembered: the next call asks again.
    pending.catch(() => {
      if (tables.get(apiVersion) === pending) tables.delete(apiVersion);
    });
    return pending;
  };

  return {
    async resourceFor(apiVersion, kind) {
      const cached = tables.get(apiVersion);
      if (cached === undefined) return (await fetchTable(apiVersion))?.get(kind);
      const found = (await cached)?.get(kind);
      if (found !== undefined) return found;
      // Not in the remembered list: ask again, unless another caller already did.
      const current = tables.get(apiVersion);
      const fresh = current !== undefined && current !== cached ? current : fetchTable(apiVersion);
      return (await fresh)?.get(kind);
    },
  };
}

async function loadKindTable(request: KubeRequest, apiVersion: string): Promise<KindTable | undefined> {
  const path = apiVersionPath(apiVersion);
  const response = await request({ method: 'GET', path });
  if (response.status === 404) return undefined;
  if (response.status < 200 || response.status > 299) {
    throw new DiscoveryError(
      `API discovery of ${apiVersion} (GET ${path}) failed with HTTP ${response.status}`,
    );
  }
  const table = new Map<string, ServedResource>();
  const resources = (response.body as { resources?: unknown } | null)?.resources;
  if (!Array.isArray(resources)) return table;
  for (const item of resources as { name?: unknown; kind?: unknown; namespaced?: unknown }[]) {
    // Subresources (`deployments/status`) share the kind of their parent.
    if (typeof item.name !== 'string' || item.name.includes('/') || typeof item.kind !== 'string') continue;
    table.set(item.kind, { name: item.name, namespaced: item.namespaced === true });
  }
  return table;
}

/** What identifies one connection to a server: its pool (credentials and TLS as loaded), the server, the acting user. */
export interface DiscoveryKey {
  agent: object;
  server: string;
  impersonate?: string | undefined;
}

/**
 * API discovery shared by a container's runs: one Discovery per connection pool,
 * server and acting user, reused for `ttlMs` (a kind missing from a cached list is still looked
 * up again, see createDiscovery). Keyed by the pool first (a WeakMap: a kubeconfig loaded from a
 * Secret for one run takes its entries with it), then by server and user, at most `maxEntries`
 * per pool (the oldest goes first). Discovery answers are the same for every caller allowed to
 * ask; every request that reads or writes an object still goes out as its own identity.
 */
export interface DiscoveryCache {
  /** The shared Discovery for `key`, made by `create` when there is none or it expired. */
  discoveryFor(key: DiscoveryKey, create: () => Discovery): Discovery;
}

export const DISCOVERY_CACHE_TTL_MS = 30_000;

export function createDiscoveryCache(
  options: { ttlMs?: number; maxEntries?: number; now?: () => number } = {},
): DiscoveryCache {
  const ttlMs = options.ttlMs ?? DISCOVERY_CACHE_TTL_MS;
  const maxEntries = Math.max(1, options.maxEntries ?? 256);
  const now = options.now ?? Date.now;
  const pools = new WeakMap<object, Map<string, { discovery: Discovery; expiresAt: number }>>();
  return {
    discoveryFor(key, create) {
      if (ttlMs <= 0) return create();
      const byUser = pools.get(key.agent) ?? new Map<string, { discovery: Discovery; expiresAt: number }>();
      pools.set(key.agent, byUser);
      const id = `${key.server} ${key.impersonate ?? ''}`;
      const at = now();
      const hit = byUser.get(id);
      if (hit !== undefined && hit.expiresAt > at) return hit.discovery;
      byUser.delete(id);
      if (byUser.size >= maxEntries) {
        const oldest = byUser.keys().next();
        if (!oldest.done) byUser.delete(oldest.value);
      }
      const discovery = create();
      byUser.set(id, { discovery, expiresAt: at + ttlMs });
      return discovery;
    },
  };
}
