import { convoyPath } from './convoy-paths.ts';
import { createKubeClient, isKubeApiError, resourcePath } from './http.ts';
import type { KubeClientConfig } from './kubeconfig.ts';

export type ConvoyPlural = 'releases' | 'clusters' | 'gitrepositories' | 'mutations' | 'lifecycles';

/** Reads from the management cluster: convoy's objects and the ConfigMaps/Secrets they name. */
export interface ManagementReader {
  configMapData(namespace: string, name: string): Promise<Record<string, string> | undefined>;
  /** Secret data, base64-decoded. Callers must never log or echo it. */
  secretData(namespace: string, name: string): Promise<Record<string, string> | undefined>;
  getObject(
    plural: ConvoyPlural,
    namespace: string,
    name: string,
  ): Promise<Record<string, unknown> | undefined>;
  listObjects(plural: ConvoyPlural, namespace: string): Promise<Record<string, unknown>[]>;
  /** Every object of a kind in every namespace (one LIST; the per-container caches use it). */
  listAllNamespaces(plural: ConvoyPlural): Promise<Record<string, unknown>[]>;
}

export function isNotFound(error: unknown): boolean {
  return isKubeApiError(error, 404);
}

const MAX_THROTTLED_ATTEMPTS = 4;

/**
 * Retries what the apiserver answered 429 (throttled, or a watch cache that is
 * initializing), after its Retry-After — as client-go does.
 */
export async function retryThrottled<T>(request: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await request();
    } catch (error) {
      if (!isKubeApiError(error, 429) || attempt >= MAX_THROTTLED_ATTEMPTS) throw error;
      const header = Number(error.headers['retry-after']);
      const seconds = Number.isFinite(header) && header > 0 ? Math.min(header, 5) : 1;
      await new Promise((resolve) => setTimeout(resolve, seconds * 1000));
    }
  }
}

async function orUndefined<T>(read: () => Promise<T>): Promise<T | undefined> {
  try {
    return await retryThrottled(read);
  } catch (error) {
    if (isNotFound(error)) return undefined;
    throw error;
  }
}

export function createManagementReader(config: KubeClientConfig): ManagementReader {
  const client = createKubeClient(config);
  return {
    async configMapData(namespace, name) {
      const cm = await orUndefined(() =>
        client.get<{ data?: Record<string, string> }>(resourcePath('v1', 'configmaps', namespace, name)),
      );
      return cm === undefined ? undefined : { ...(cm.data ?? {}) };
    },
    async secretData(namespace, name) {
      const secret = await orUndefined(() =>
        client.get<{ data?: Record<string, string>; stringData?: Record<string, string> }>(
          resourcePath('v1', 'secrets', namespace, name),
        ),
      );
      if (secret === undefined) return undefined;
      const decoded: Record<string, string> = { ...(secret.stringData ?? {}) };
      for (const [key, value] of Object.entries(secret.data ?? {}))
        decoded[key] = Buffer.from(value, 'base64').toString('utf8');
      return decoded;
    },
    async getObject(plural, namespace, name) {
      return orUndefined(() => client.get(convoyPath(plural, namespace, name)));
    },
    async listObjects(plural, namespace) {
      const list = await retryThrottled(() => client.list(convoyPath(plural, namespace)));
      return list.items;
    },
    async listAllNamespaces(plural) {
      const list = await retryThrottled(() => client.list(convoyPath(plural)));
      return list.items;
    },
  };
}
