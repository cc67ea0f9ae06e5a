/**
 * The relay's access to Releases for the HTTP API: reads with the relay's own identity, writes
 * (sync and pin annotations, spec.suspend) with the CALLER's bearer token. The relay's
 * ServiceAccount therefore has no patch or update on Releases: a compromised relay cannot change
 * another tenant's serviceAccountName or source, and the API server's RBAC, admission and audit
 * log see the user who asked.
 *
 * A write reads the Release (relay identity), changes the one field and replaces the object (PUT,
 * verb `update` — what the API's SubjectAccessReview asks the caller for) with its
 * resourceVersion; a conflict with a concurrent writer is retried on a fresh read.
 */
import { releasePath } from '../../adapters/kube/convoy-paths.ts';
import { createKubeClient, isKubeApiError, type KubeClient } from '../../adapters/kube/http.ts';
import { kubeClientConfig, type KubeClientConfig } from '../../adapters/kube/kubeconfig.ts';
import { API_GROUP } from '../../domain/api/common.ts';

export interface ReleaseApi {
  /**
   * The Release as the API server returns it (unparsed).
   * @throws ReleaseNotFoundError, ReleaseApiError
   */
  get(namespace: string, name: string): Promise<Record<string, unknown>>;
  /** The Releases of a namespace as the API server returns them (unparsed). @throws ReleaseApiError */
  list(namespace: string): Promise<Record<string, unknown>[]>;
  /** The Releases of every namespace (the relay's own list right, cluster-wide). @throws ReleaseApiError */
  listAll(): Promise<Record<string, unknown>[]>;
  /** The writes, made with the caller's bearer token (never logged, never the relay's). */
  writesAs(token: string): ReleaseWrites;
}

export interface ReleaseWrites {
  /**
   * Sets annotation `key` to `value`, or removes it when `value` is null (metadata: generation unchanged).
   * @throws ReleaseNotFoundError, ReleaseApiError (403 when the caller may not update it)
   */
  annotate(namespace: string, name: string, key: string, value: string | null): Promise<void>;
  /**
   * Sets spec.suspend (it bumps metadata.generation, as kubectl would).
   * @throws ReleaseNotFoundError, ReleaseApiError
   */
  setSuspend(namespace: string, name: string, suspend: boolean): Promise<void>;
}

export class ReleaseNotFoundError extends Error {
  override name = 'ReleaseNotFoundError';
  readonly namespace: string;
  readonly release: string;

  constructor(namespace: string, release: string) {
    super(
      `Release ${namespace}/${release} does not exist: check the namespace and name (kubectl get releases.${API_GROUP} -n ${namespace})`,
    );
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
    super(
      code === 403
        ? `${operation} Release ${namespace}/${release}: the API server refused it for the caller's token (HTTP 403); the caller needs "update" on releases.${API_GROUP}`
        : `${operation} Release ${namespace}/${release} failed${code > 0 ? ` with HTTP ${code}` : ''}; see the relay log and its RBAC (it needs get on releases.${API_GROUP})`,
      {
        cause,
      },
    );
    this.code = code;
    this.operation = operation;
  }
}

const FIELD_MANAGER = 'convoy-relay-api';
const CONFLICT_ATTEMPTS = 3;

interface StoredRelease {
  metadata?: { annotations?: Record<string, string>; [field: string]: unknown };
  spec?: Record<string, unknown>;
  [field: string]: unknown;
}

/**
 * A client of the relay's cluster (address, CA, TLS server name) with the caller's token and
 * none of the relay's credentials: a connection of its own (the relay's may carry its client
 * certificate), closed after the write.
 */
function callerClient(relay: KubeClientConfig, token: string): { client: KubeClient; close: () => void } {
  const config = kubeClientConfig({
    server: relay.server,
    ca: relay.ca,
    insecureSkipTlsVerify: relay.insecureSkipTlsVerify,
    tlsServerName: relay.tlsServerName,
    token,
  });
  return {
    client: createKubeClient(config, { userAgent: 'convoy-relay-api', timeoutMs: 30_000 }),
    close: () => config.agent.destroy(),
  };
}

function translate(operation: string, namespace: string, name: string, err: unknown): Error {
  if (isKubeApiError(err, 404)) return new ReleaseNotFoundError(namespace, name);
  return new ReleaseApiError(operation, namespace, name, isKubeApiError(err) ? err.status : 0, err);
}

export function createReleaseApi(kube: KubeClientConfig): ReleaseApi {
  const api = createKubeClient(kube, { userAgent: 'convoy-relay', timeoutMs: 30_000 });
  return {
    async get(namespace, name) {
      try {
        return await api.get(releasePath(namespace, name));
      } catch (err) {
        throw translate('get', namespace, name, err);
      }
    },
    async list(namespace) {
      try {
        return (await api.list(releasePath(namespace))).items;
      } catch (err) {
        throw translate('list', namespace, '*', err);
      }
    },
    async listAll() {
      try {
        return (await api.list(releasePath())).items;
      } catch (err) {
        throw translate('list', '*', '*', err);
      }
    },
    writesAs(token) {
      /** Read (relay), change, replace (caller); a 409 from a concurrent write is retried on a fresh read. */
      const update = async (
        operation: string,
        namespace: string,
        name: string,
        change: (release: StoredRelease) => void,
      ): Promise<void> => {
        const caller = callerClient(kube, token);
        try {
          for (let attempt = 1; ; attempt++) {
            try {
              const release = await api.get<StoredRelease>(releasePath(namespace, name));
              change(release);
              await caller.client.replace(releasePath(namespace, name), release, {
                fieldManager: FIELD_MANAGER,
              });
              return;
            } catch (err) {
              if (isKubeApiError(err, 409) && attempt < CONFLICT_ATTEMPTS) continue;
              throw translate(operation, namespace, name, err);
            }
          }
        } finally {
          caller.close();
        }
      };
      return {
        annotate: (namespace, name, key, value) =>
          update('annotate', namespace, name, (release) => {
            const annotations = { ...(release.metadata?.annotations ?? {}) };
            if (value === null) delete annotations[key];
            else annotations[key] = value;
            release.metadata = { ...release.metadata, annotations };
          }),
        setSuspend: (namespace, name, suspend) =>
          update(suspend ? 'suspend' : 'resume', namespace, name, (release) => {
            release.spec = { ...release.spec, suspend };
          }),
      };
    },
  };
}
