/**
 * The target cluster as the drift and health loops see it: reads, and
 * server-side-apply dry runs under the field manager `convoy` (force,
 * fieldValidation=Strict, dryRun=All — the reconcile's apply, not written)
 * whose answer is the object as the apply would leave it.
 *
 * Requests per check, on the target (API discovery is one GET per
 * apiVersion of the render, shared by all its objects):
 * - health: one GET per object + discovery. Secrets are read as
 *   PartialObjectMetadata: their data never leaves the cluster.
 * - drift: one dry-run PATCH per object + discovery, plus one GET per object
 *   the dry run may have changed. No GET is needed when the dry run was a
 *   no-op, and the server says so itself: for a no-op apply it answers with
 *   the live object unchanged, managedFields times included; an apply that
 *   changes anything stamps the `convoy` entry with the server's current
 *   time. So an entry older than the answer's Date header (minus
 *   `recentWriteWindowMs`, which covers the time the server spent between
 *   stamping and answering) proves the object is as convoy left it. An
 *   object convoy itself wrote within that window, or one without a convoy
 *   entry, is read and compared, which is always exact.
 *   Steady state: objects + apiVersions; each drifted object +1.
 * - drift, with the resourceVersion of an object's last clean check (the drift function's
 *   memory, domain/observe/drift-memory.ts): one metadata-only GET per object; an object whose
 *   resourceVersion is still that one is unchanged (no dry run); any other gets the dry run above.
 *
 * A container shares API discovery between its runs (`discovery`, a DiscoveryCache keyed by
 * connection pool, server and acting user), and the composition root may give `readers` whose
 * readCluster answers from a per-container Cluster list (cluster-resolver.ts
 * cachedClusterReader): then a warm check of an inCluster Release costs its objects' requests only.
 */
import type { Release } from '../../domain/api/objects.ts';
import type { DriftObservation } from '../../domain/observe/drift-diff.ts';
import { apiGroup, describeObject, isPlainObject, type KubeObject } from '../../domain/render/kube-object.ts';
import { FieldManager } from '../../domain/status/field-managers.ts';
import type { TenancySettings } from '../../domain/tenancy/settings.ts';
import { createManagementReaders } from './cluster-resolver.ts';
import { resolveTargetAccess, type EksAccess, type ManagementReaders } from './target-access.ts';
import { mapBounded } from '../../domain/runtime/bounded.ts';
import { isSchemaError, locateObject, type Located } from './object-paths.ts';
import {
  createDiscovery,
  type Discovery,
  type DiscoveryCache,
  type KubeRequestInit,
  type KubeResponse,
  type ServedResource,
} from './discovery.ts';
import { createKubeHttp, KubeTransportError, PATCH_CONTENT_TYPES } from './http.ts';
import type { KubeClientConfig } from './kubeconfig.ts';

/** Counts HTTP requests to the target. */
export interface RequestCounter {
  count: number;
}

export interface ObserverTargetOptions {
  requestCounter?: RequestCounter | undefined;
  /** Objects handled at the same time. Default 8. */
  concurrency?: number | undefined;
  /** Longest wait for one request. Default 60 s. */
  requestTimeoutMs?: number | undefined;
  /**
   * A `convoy` managedFields time this close to the server's Date header may
   * be the dry run's own stamp, so the object is read and compared. Default
   * 60 s: the API server's own request timeout, so a dry run's stamp always
   * falls inside it.
   */
  recentWriteWindowMs?: number | undefined;
  /** How long a resolved Cluster target (kubeconfig, discovery) is reused. Default 30 s; 0 disables. */
  cacheTtlMs?: number | undefined;
  /** Most resolved targets kept (the oldest goes first). Default 1,000. */
  cacheMaxEntries?: number | undefined;
  /** API discovery shared by the container's runs (discovery.ts createDiscoveryCache); undefined: one per target. */
  discovery?: DiscoveryCache | undefined;
  now?: (() => number) | undefined;
}

const DEFAULT_TARGET_CACHE_TTL_MS = 30_000;
const DEFAULT_TARGET_CACHE_MAX_ENTRIES = 1_000;

export type DryRunApplyResult =
  /** `created`: the object does not exist (the dry run would create it). `unchanged`: proven a no-op (see the header). */
  | {
      readonly kind: 'merged';
      readonly merged: Record<string, unknown>;
      readonly created: boolean;
      readonly unchanged: boolean;
    }
  /** The kind is not served, or the namespace does not exist. */
  | { readonly kind: 'absent' }
  /** The server refused the object; the message names it and holds no Secret data. */
  | { readonly kind: 'refused'; readonly message: string };

export interface ObserverTarget {
  /** The server and acting user this target's requests go to and as (for per-target memories). */
  readonly identity: string;
  dryRunApply(obj: KubeObject): Promise<DryRunApplyResult>;
  /** The live object; undefined when it does not exist or its kind is not served. `metadataOnly`: no spec, data or status. */
  read(obj: KubeObject, opts?: { metadataOnly?: boolean }): Promise<Record<string, unknown> | undefined>;
  /**
   * read() for every object, Secrets metadata-only (for health: a Secret's data is never needed),
   * and metadata-only too each object `metadataOnly` names (health: kinds whose health is their existence).
   */
  readAll(
    objects: readonly KubeObject[],
    opts?: { metadataOnly?: (obj: KubeObject) => boolean },
  ): Promise<(Record<string, unknown> | undefined)[]>;
  /** A dry run, and a read only when the dry run may have changed the object. */
  observeDrift(obj: KubeObject): Promise<DriftObservation>;
  /**
   * observeDrift() for every object; `cleanVersionOf`: the resourceVersion of an object's last
   * clean check, if remembered — such an object is read metadata-only first, and is `unchanged`
   * without a dry run when its resourceVersion is still that one.
   */
  observeDriftAll(
    objects: readonly KubeObject[],
    cleanVersionOf?: (obj: KubeObject) => string | undefined,
  ): Promise<DriftObservation[]>;
}

export interface ObserverTargetResolver {
  /** @throws ClusterResolutionError naming the Cluster and what to fix. */
  resolve(release: Release): Promise<ObserverTarget>;
}

/** The target could not be read: network, timeout, 401/403, 429 or 5xx. The message names the object. */
export class ObserverRequestError extends Error {
  override name = 'ObserverRequestError';
  readonly status: number | undefined;
  constructor(message: string, status: number | undefined, options?: ErrorOptions) {
    super(message, options);
    this.status = status;
  }
}

const DEFAULT_CONCURRENCY = 8;
const DEFAULT_REQUEST_TIMEOUT_MS = 60_000;
const DEFAULT_RECENT_WRITE_WINDOW_MS = 60_000;
const MAX_SERVER_MESSAGE = 500;
const METADATA_ONLY = 'application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1';

/** 4xx answers that say the object (not the connection) is wrong. */
const REFUSED_STATUSES: ReadonlySet<number> = new Set([400, 405, 409, 410, 413, 415, 422]);

/**
 * Resolves a Release's Cluster to its kubeconfig and acting identity the way the
 * reconcile's resolver does (target-access.ts) — without its /version probe: the first request of
 * the check proves the cluster answers.
 */
export function createObserverTargetResolver(
  opts: ObserverTargetOptions & {
    managementKubeConfig: KubeClientConfig;
    readers?: ManagementReaders | undefined;
    tenancy?: TenancySettings | undefined;
    eks?: EksAccess | undefined;
  },
): ObserverTargetResolver {
  const readers = opts.readers ?? createManagementReaders(opts.managementKubeConfig);
  // A warm container reuses a Cluster's target (its kubeconfig and discovery) for
  // a short while: a check then costs the objects' requests plus the Release read
  // and the status write. A changed Cluster is picked up after the TTL.
  const cache = new Map<string, { target: ObserverTarget; expiresAt: number }>();
  const ttlMs = opts.cacheTtlMs ?? DEFAULT_TARGET_CACHE_TTL_MS;
  const maxEntries = Math.max(1, opts.cacheMaxEntries ?? DEFAULT_TARGET_CACHE_MAX_ENTRIES);
  const now = opts.now ?? Date.now;
  const resolveUncached = async (release: Release): Promise<ObserverTarget> => {
    // The same Cluster, policy and acting identity as the reconcile (target-access.ts).
    const access = await resolveTargetAccess(release, {
      ...readers,
      managementKubeConfig: opts.managementKubeConfig,
      tenancy: opts.tenancy,
      eks: opts.eks,
    });
    return createObserverTarget(access.kubeConfig, opts);
  };
  return {
    async resolve(release) {
      // Per identity too: two Releases on one Cluster may act as different ServiceAccounts.
      const cacheKey = `${release.metadata.namespace ?? ''}/${release.spec.cluster.namespace ?? ''}/${release.spec.cluster.name}/${release.spec.serviceAccountName ?? ''}`;
      const hit = cache.get(cacheKey);
      if (hit !== undefined && hit.expiresAt > now()) return hit.target;
      cache.delete(cacheKey);
      const target = await resolveUncached(release);
      if (ttlMs > 0) {
        while (cache.size >= maxEntries) {
          const oldest = cache.keys().next();
          if (oldest.done) break;
          cache.delete(oldest.value);
        }
        cache.set(cacheKey, { target, expiresAt: now() + ttlMs });
      }
      return target;
    },
  };
}

interface ObserverResponse extends KubeResponse {
  /** The server's Date header, in ms; undefined when absent. */
  date: number | undefined;
}

type ObserverRequest = (init: KubeRequestInit & { accept?: string }) => Promise<ObserverResponse>;

/** Raw JSON requests with the kubeconfig's credentials and TLS, keeping the Date header. */
function createObserverRequest(kc: KubeClientConfig, opts: ObserverTargetOptions): ObserverRequest {
  const http = createKubeHttp(kc, {
    timeoutMs: opts.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS,
    userAgent: 'convoy-observer',
    requestCounter: opts.requestCounter,
  });
  return async (init) => {
    try {
      const response = await http(init);
      const dateHeader = response.headers.date;
      const date = dateHeader === undefined ? undefined : Date.parse(dateHeader);
      return {
        status: response.status,
        body: response.body,
        date: date === undefined || Number.isNaN(date) ? undefined : date,
      };
    } catch (error) {
      if (error instanceof KubeTransportError)
        throw new ObserverRequestError(error.message, undefined, { cause: error });
      throw error;
    }
  };
}

export function createObserverTarget(kc: KubeClientConfig, opts: ObserverTargetOptions = {}): ObserverTarget {
  const request = createObserverRequest(kc, opts);
  const discovery: Discovery =
    opts.discovery === undefined
      ? createDiscovery(request)
      : opts.discovery.discoveryFor(kc, () => createDiscovery(request));
  const concurrency = Math.max(1, opts.concurrency ?? DEFAULT_CONCURRENCY);
  const windowMs = opts.recentWriteWindowMs ?? DEFAULT_RECENT_WRITE_WINDOW_MS;

  const locate = async (obj: KubeObject): Promise<Located | undefined> => {
    let resource: ServedResource | undefined;
    try {
      resource = await discovery.resourceFor(obj.apiVersion, obj.kind);
    } catch (error) {
      if (error instanceof ObserverRequestError) throw error;
      throw new ObserverRequestError(
        `${describeObject(obj)}: ${error instanceof Error ? error.message : String(error)}`,
        undefined,
        {
          cause: error,
        },
      );
    }
    return resource === undefined ? undefined : locateObject(obj, resource);
  };

  const read: ObserverTarget['read'] = async (obj, readOpts = {}) => {
    const at = await locate(obj);
    if (at === undefined) return undefined;
    const response = await request({
      method: 'GET',
      path: at.path,
      ...(readOpts.metadataOnly ? { accept: METADATA_ONLY } : {}),
    });
    if (response.status === 404) return undefined;
    const body = expectObject(obj, 'read', response);
    // PartialObjectMetadata carries meta.k8s.io's apiVersion and kind; give the object its own back.
    return readOpts.metadataOnly
      ? { apiVersion: obj.apiVersion, kind: obj.kind, metadata: body.metadata }
      : body;
  };

  const dryRunApply: ObserverTarget['dryRunApply'] = async (obj) => {
    const at = await locate(obj);
    if (at === undefined) return { kind: 'absent' };
    const response = await request({
      method: 'PATCH',
      path: at.path,
      query: { fieldManager: FieldManager.apply, force: 'true', fieldValidation: 'Strict', dryRun: 'All' },
      contentType: PATCH_CONTENT_TYPES.apply,
      body: JSON.stringify(at.body),
    });
    // Not served after all (discovery was stale), or the namespace does not exist.
    if (response.status === 404) return { kind: 'absent' };
    if (REFUSED_STATUSES.has(response.status) || isSchemaError(response)) {
      return {
        kind: 'refused',
        message: `the server refused the dry run (HTTP ${response.status})${serverMessage(obj, response.body)}`,
      };
    }
    const merged = expectObject(obj, 'dry run', response);
    const metadata = isPlainObject(merged.metadata) ? merged.metadata : {};
    // A dry-run create is never stored, so it has no resourceVersion.
    const created = typeof metadata.resourceVersion !== 'string' || metadata.resourceVersion === '';
    const stamped = convoyApplyTime(metadata.managedFields);
    const unchanged =
      !created && stamped !== undefined && response.date !== undefined && stamped < response.date - windowMs;
    return { kind: 'merged', merged, created, unchanged };
  };

  const observeDrift: ObserverTarget['observeDrift'] = async (obj) => {
    const dry = await dryRunApply(obj);
    if (dry.kind !== 'merged') return dry;
    if (dry.created) return { kind: 'absent' };
    if (dry.unchanged) return { kind: 'unchanged', resourceVersion: resourceVersionOf(dry.merged) };
    const live = await read(obj);
    return live === undefined
      ? { kind: 'absent' }
      : { kind: 'compared', merged: dry.merged, live, resourceVersion: resourceVersionOf(live) };
  };

  /** A metadata-only read first: the remembered resourceVersion proves the object unchanged (drift-memory.ts). */
  const observeDriftSince = async (
    obj: KubeObject,
    cleanVersion: string | undefined,
  ): Promise<DriftObservation> => {
    if (cleanVersion === undefined) return observeDrift(obj);
    const meta = await read(obj, { metadataOnly: true });
    if (meta === undefined) return { kind: 'absent' };
    const resourceVersion = resourceVersionOf(meta);
    if (resourceVersion !== undefined && resourceVersion === cleanVersion)
      return { kind: 'unchanged', resourceVersion };
    return observeDrift(obj);
  };

  return {
    identity: `${kc.server} ${kc.impersonate ?? ''}`,
    dryRunApply,
    read,
    readAll: (objects, readOpts = {}) =>
      mapBounded(objects, concurrency, (obj) =>
        read(obj, { metadataOnly: isSecret(obj) || readOpts.metadataOnly?.(obj) === true }),
      ),
    observeDrift,
    observeDriftAll: (objects, cleanVersionOf) =>
      mapBounded(objects, concurrency, (obj) => observeDriftSince(obj, cleanVersionOf?.(obj))),
  };
}

/** The time of the `convoy` Apply entry on the main resource, in ms; undefined when there is none. */
function convoyApplyTime(managedFields: unknown): number | undefined {
  if (!Array.isArray(managedFields)) return undefined;
  for (const entry of managedFields as unknown[]) {
    if (!isPlainObject(entry) || entry.manager !== FieldManager.apply || entry.operation !== 'Apply')
      continue;
    if (entry.subresource !== undefined && entry.subresource !== '') continue;
    const ms = typeof entry.time === 'string' ? Date.parse(entry.time) : Number.NaN;
    return Number.isNaN(ms) ? undefined : ms;
  }
  return undefined;
}

function resourceVersionOf(obj: Record<string, unknown>): string | undefined {
  const metadata = isPlainObject(obj.metadata) ? obj.metadata : {};
  return typeof metadata.resourceVersion === 'string' && metadata.resourceVersion !== ''
    ? metadata.resourceVersion
    : undefined;
}

const isSecret = (obj: KubeObject): boolean => obj.kind === 'Secret' && apiGroup(obj.apiVersion) === '';

function expectObject(obj: KubeObject, action: string, response: KubeResponse): Record<string, unknown> {
  if (response.status >= 200 && response.status <= 299 && isPlainObject(response.body)) return response.body;
  const detail =
    response.status >= 200 && response.status <= 299
      ? ' without a JSON object'
      : ` with HTTP ${response.status}${serverMessage(obj, response.body)}`;
  throw new ObserverRequestError(
    `${describeObject(obj)}: the ${action} was answered${detail}`,
    response.status,
  );
}

/** `: <the server's message>`, shortened; nothing for a Secret, whose values a message may quote. */
function serverMessage(obj: KubeObject, body: unknown): string {
  if (isSecret(obj)) return '';
  const message =
    isPlainObject(body) && typeof body.message === 'string'
      ? body.message
      : typeof body === 'string'
        ? body.trim()
        : '';
  if (message === '') return '';
  return `: ${message.length > MAX_SERVER_MESSAGE ? `${message.slice(0, MAX_SERVER_MESSAGE)}…` : message}`;
}
