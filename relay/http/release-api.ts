/**
 * The relay's access to Releases for the HTTP API: read one, and set or
 * remove one annotation with a JSON merge patch on metadata.annotations.
 * Annotations are metadata, so the patch never changes metadata.generation.
 */
import { ApiException, CustomObjectsApi, PatchStrategy, setHeaderOptions, type KubeConfig } from '@kubernetes/client-node';
import { API_GROUP, API_VERSION } from '../../domain/api/common.ts';

export interface ReleaseApi {
  /**
   * The Release as the API server returns it (unparsed).
   * @throws ReleaseNotFoundError, ReleaseApiError
   */
  get(namespace: string, name: string): Promise<Record<string, unknown>>;
  /**
   * Sets annotation `key` to `value`, or removes it when `value` is null.
   * @throws ReleaseNotFoundError, ReleaseApiError
   */
  annotate(namespace: string, name: string, key: string, value: string | null): Promise<void>;
  /** The Releases of a namespace as the API server returns them (unparsed). @throws ReleaseApiError */
  list(namespace: string): Promise<Record<string, unknown>[]>;
  /** The Releases of every namespace (the relay's own list right, cluster-wide). @throws ReleaseApiError */
  listAll(): Promise<Record<string, unknown>[]>;
  /**
   * Sets spec.suspend (a merge patch of the spec: it bumps metadata.generation, as kubectl would).
   * @throws ReleaseNotFoundError, ReleaseApiError
   */
  setSuspend(namespace: string, name: string, suspend: boolean): Promise<void>;
}

export class ReleaseNotFoundError extends Error {
  override name = 'ReleaseNotFoundError';
  readonly namespace: string;
  readonly release: string;

  constructor(namespace: string, release: string) {
    super(`Release ${namespace}/${release} does not exist: check the namespace and name (kubectl get releases.${API_GROUP} -n ${namespace})`);
    this.namespace = namespace;
    this.release = release;
  }
}

/** Any other failure of the API server call; `code` is its HTTP status (0 when there was no response). */
export class ReleaseApiError extends Error {
  override name = 'ReleaseApiError';
  readonly code: number;
  readonly operation: string;

  constructor(operation: string, namespace: string, release: string, code: number, cause: unknown) {
    super(`${operation} Release ${namespace}/${release} failed${code > 0 ? ` with HTTP ${code}` : ''}; see the relay log and its RBAC (it needs get and patch on releases.${API_GROUP})`, {
      cause,
    });
    this.code = code;
    this.operation = operation;
  }
}

function translate(operation: string, namespace: string, name: string, err: unknown): Error {
  if (err instanceof ApiException && err.code === 404) return new ReleaseNotFoundError(namespace, name);
  return new ReleaseApiError(operation, namespace, name, err instanceof ApiException ? err.code : 0, err);
}

export function createReleaseApi(kc: KubeConfig): ReleaseApi {
  const api = kc.makeApiClient(CustomObjectsApi);
  const mergePatch = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
  const base = (namespace: string, name: string) => ({ group: API_GROUP, version: API_VERSION, plural: 'releases', namespace, name });
  return {
    async get(namespace, name) {
      try {
        return (await api.getNamespacedCustomObject(base(namespace, name))) as Record<string, unknown>;
      } catch (err) {
        throw translate('get', namespace, name, err);
      }
    },
    async list(namespace) {
      try {
        const list = (await api.listNamespacedCustomObject({ group: API_GROUP, version: API_VERSION, namespace, plural: 'releases' })) as {
          items?: Record<string, unknown>[];
        };
        return list.items ?? [];
      } catch (err) {
        throw translate('list', namespace, '*', err);
      }
    },
    async listAll() {
      try {
        const list = (await api.listClusterCustomObject({ group: API_GROUP, version: API_VERSION, plural: 'releases' })) as {
          items?: Record<string, unknown>[];
        };
        return list.items ?? [];
      } catch (err) {
        throw translate('list', '*', '*', err);
      }
    },
    async setSuspend(namespace, name, suspend) {
      try {
        await api.patchNamespacedCustomObject({ ...base(namespace, name), body: { spec: { suspend } } }, mergePatch);
      } catch (err) {
        throw translate(suspend ? 'suspend' : 'resume', namespace, name, err);
      }
    },
    async annotate(namespace, name, key, value) {
      try {
        await api.patchNamespacedCustomObject({ ...base(namespace, name), body: { metadata: { annotations: { [key]: value } } } }, mergePatch);
      } catch (err) {
        throw translate('annotate', namespace, name, err);
      }
    },
  };
}
