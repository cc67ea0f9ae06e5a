/**
 * The target cluster as the loops see it: server-side apply, dry run, read and prune of rendered
 * objects under the field manager `convoy`.
 *
 * Requests are raw JSON over convoy's own transport (`http.ts`: TLS, credentials, keep-alive),
 * not a typed client: a typed serializer drops fields its models do not know (`spec.bogus` never
 * reaches the server, so fieldValidation=Strict cannot refuse it) and renames CRD schema keys
 * (`x-kubernetes-*`, `enum`, `$ref`). Here the object sent is exactly the rendered JSON, and the
 * object read is exactly what the server returned.
 */
import {
  ApplyRejectedError,
  type DryRunVerdict,
  type PruneResult,
  type ResolvedCluster,
  type TargetCluster,
} from '../../domain/reconcile/ports.ts';
import {
  apiGroup,
  cloneJson,
  describeObject,
  isCrd,
  isCreator,
  isNamespace,
  isPlainObject,
  jsonEqual,
  type KubeObject,
} from '../../domain/render/kube-object.ts';
import { FieldManager } from '../../domain/status/field-managers.ts';
import { describeIdentity, type ActingIdentity } from '../../domain/tenancy/identity.ts';
import { mapBounded } from '../../domain/runtime/bounded.ts';
import { locateObject, type Located } from './object-paths.ts';
import { mayPrune } from './prune-ownership.ts';
import { createDiscovery, type Discovery, type KubeRequestInit, type ServedResource } from './discovery.ts';
import { applyPatchText } from './apply-patch-text.ts';
import { expectObjectAs, expectSuccessAs, KubeRequestError } from './target-responses.ts';

export { KubeRequestError };
import { createKubeHttp, KubeTransportError, PATCH_CONTENT_TYPES } from './http.ts';
import type { KubeClientConfig } from './kubeconfig.ts';

/** Counts HTTP requests (benchmarks). */
export interface RequestCounter {
  count: number;
}

export interface TargetClusterOptions {
  /** API discovery shared with earlier runs against the same server and credentials; default: a new one. */
  discovery?: Discovery | undefined;
  requestCounter?: RequestCounter | undefined;
  /** Objects dry-run at the same time. Default 8. */
  concurrency?: number | undefined;
  /** Longest wait for one request. Default 60 s. */
  requestTimeoutMs?: number | undefined;
  /** Who the kubeconfig acts as (target-access.ts); named in the message of a refusal by RBAC. */
  actingAs?: ActingIdentity | undefined;
}

const FIELD_MANAGER = FieldManager.apply;
const BEFORE_FIRST_APPLY = 'before-first-apply';
const DEFAULT_CONCURRENCY = 8;
const DEFAULT_REQUEST_TIMEOUT_MS = 60_000;

export function createTargetCluster(
  kc: KubeClientConfig,
  identity: ResolvedCluster,
  opts: TargetClusterOptions = {},
): TargetCluster {
  const request = createKubeRequest(kc, opts);
  const discovery = opts.discovery ?? createDiscovery(request);
  const concurrency = Math.max(1, opts.concurrency ?? DEFAULT_CONCURRENCY);
  const actor = opts.actingAs === undefined ? undefined : describeIdentity(opts.actingAs);
  const expectSuccess = (obj: KubeObject, action: string, response: { status: number; body: unknown }) =>
    expectSuccessAs(obj, action, response, actor);
  const expectObject = (obj: KubeObject, action: string, response: { status: number; body: unknown }) =>
    expectObjectAs(obj, action, response, actor);

  const locate = async (obj: KubeObject): Promise<Located | undefined> => {
    const resource = await discovery.resourceFor(obj.apiVersion, obj.kind);
    return resource === undefined ? undefined : pathOrReject(obj, resource);
  };

  const locateOrReject = async (obj: KubeObject): Promise<Located> => {
    const located = await locate(obj);
    if (located === undefined) {
      throw new ApplyRejectedError(
        `${describeObject(obj)}: the cluster does not serve kind ${obj.kind} in ${obj.apiVersion} ` +
          `(install its CustomResourceDefinition, or fix apiVersion/kind)`,
      );
    }
    return located;
  };

  const getLive = async (obj: KubeObject, at: Located): Promise<Record<string, unknown> | undefined> => {
    const response = await request({ method: 'GET', path: at.path });
    if (response.status === 404) return undefined;
    return expectObject(obj, 'read', response);
  };

  const serverSideApply = async (
    obj: KubeObject,
    at: Located,
    dryRun: boolean,
  ): Promise<{ object: Record<string, unknown>; date: number | undefined }> => {
    const response = await request({
      method: 'PATCH',
      path: at.path,
      query: {
        fieldManager: FIELD_MANAGER,
        force: 'true',
        fieldValidation: 'Strict',
        ...(dryRun ? { dryRun: 'All' } : {}),
      },
      contentType: PATCH_CONTENT_TYPES.apply,
      body: applyPatchText(at.body),
    });
    const object = expectObject(obj, dryRun ? 'dry run' : 'apply', response);
    return { object, date: response.date };
  };

  // What this run's applies answered, and the dry runs that proved an object unchanged (their
  // answer is then the live object): a read of the same object later in the run (wave health)
  // uses it instead of another GET. A TargetCluster lives for one reconcile run.
  const answered = new Map<string, Record<string, unknown>>();

  /**
   * The verdict, and whether the object exists now (for deferring what lives in it). One dry
   * run per object; a GET only when the answer cannot tell: a dry-run create has
   * no resourceVersion (absent, changed); a no-op apply answers the live object with convoy's
   * managedFields time untouched, while an apply that changes anything stamps it with the
   * server's time — so a stamp older than the answer's Date header minus RECENT_WRITE_WINDOW_MS
   * proves the object unchanged (the same rule as observer-target.ts). Otherwise the live
   * object is read and compared, which is always exact.
   */
  const dryRunOne = async (obj: KubeObject): Promise<{ verdict: DryRunVerdict; existed: boolean }> => {
    const at = await locateOrReject(obj);
    const { object: result, date } = await serverSideApply(obj, at, true);
    const metadata = isPlainObject(result.metadata) ? result.metadata : {};
    if (typeof metadata.resourceVersion !== 'string' || metadata.resourceVersion === '')
      return { verdict: { kind: 'changed' }, existed: false };
    const stamped = convoyApplyTime(metadata.managedFields);
    if (stamped !== undefined && date !== undefined && stamped < date - RECENT_WRITE_WINDOW_MS) {
      answered.set(at.path, result);
      return { verdict: { kind: 'unchanged' }, existed: true };
    }
    const live = await getLive(obj, at);
    if (live === undefined) return { verdict: { kind: 'changed' }, existed: false };
    const same = jsonEqual(comparable(live), comparable(result));
    if (same) answered.set(at.path, live);
    return { verdict: { kind: same ? 'unchanged' : 'changed' }, existed: true };
  };

  return {
    identity,

    async dryRun(objects, checked) {
      const verdicts = new Array<DryRunVerdict>(objects.length);
      const creators = creatorsIn(objects);
      let done = 0;
      const tell = async <T>(result: T): Promise<T> => {
        done++;
        if (checked !== undefined) await checked(done);
        return result;
      };

      // CustomResourceDefinitions and Namespaces first: whether they exist and change decides
      // which of the other objects can be checked now.
      const first = objects.flatMap((obj, i) => (isCreator(obj) ? [i] : []));
      const firstResults = await mapBounded(first, concurrency, async (i) =>
        tell(await dryRunOne(objects[i])),
      );
      const crdVerdicts = new Map<string, { verdict: DryRunVerdict; existed: boolean }>();
      const namespaceExists = new Map<string, boolean>();
      first.forEach((i, n) => {
        const obj = objects[i];
        const result = firstResults[n];
        verdicts[i] = result.verdict;
        if (isNamespace(obj)) namespaceExists.set(obj.metadata.name, result.existed);
        else crdVerdicts.set(obj.metadata.name, result);
      });

      const rest = objects.flatMap((obj, i) => (isCreator(obj) ? [] : [i]));
      const restResults = await mapBounded(rest, concurrency, async (i): Promise<DryRunVerdict> => {
        const obj = objects[i];
        const why = deferral(obj, creators, crdVerdicts, namespaceExists);
        return tell(why === undefined ? (await dryRunOne(obj)).verdict : { kind: 'deferred', why });
      });
      rest.forEach((i, n) => {
        verdicts[i] = restResults[n];
      });
      return verdicts;
    },

    async apply(obj) {
      const at = await locateOrReject(obj);
      answered.set(at.path, (await serverSideApply(obj, at, false)).object);
    },

    async read(obj) {
      const at = await locate(obj);
      if (at === undefined) return undefined;
      return answered.get(at.path) ?? getLive(obj, at);
    },

    async answered(obj) {
      const at = await locate(obj);
      return at === undefined ? undefined : answered.get(at.path);
    },

    async prune(obj): Promise<PruneResult> {
      const at = await locate(obj);
      if (at === undefined) return 'absent';
      const live = await getLive(obj, at);
      if (live === undefined) return 'absent';
      if (!mayPrune(obj, live)) return 'skipped';
      const uid = isPlainObject(live.metadata) ? live.metadata.uid : undefined;
      const response = await request({
        method: 'DELETE',
        path: at.path,
        contentType: 'application/json',
        body: JSON.stringify({
          apiVersion: 'v1',
          kind: 'DeleteOptions',
          propagationPolicy: 'Background',
          // The object read above, not one recreated since by someone else.
          ...(typeof uid === 'string' ? { preconditions: { uid } } : {}),
        }),
      });
      // A read later in this run must not see this run's earlier apply answer of a deleted object.
      answered.delete(at.path);
      if (response.status === 404) return 'absent';
      if (response.status === 409) {
        throw new KubeRequestError(
          `${describeObject(obj)} was replaced while convoy pruned it; retrying will re-check it`,
          409,
        );
      }
      expectSuccess(obj, 'delete', response);
      return 'deleted';
    },
  };
}

// --- transport -------------------------------------------------------------------------------

/** A KubeRequest that also returns the server's Date header (ms), undefined when absent. */
export type DatedKubeRequest = (
  init: KubeRequestInit,
) => Promise<{ status: number; body: unknown; date: number | undefined }>;

/**
 * A `convoy` managedFields time this close to the server's Date header may be the dry run's own
 * stamp: 60 s, the API server's own request timeout.
 */
const RECENT_WRITE_WINDOW_MS = 60_000;

/** The time of the `convoy` Apply entry on the main resource, in ms; undefined when there is none. */
function convoyApplyTime(managedFields: unknown): number | undefined {
  if (!Array.isArray(managedFields)) return undefined;
  for (const entry of managedFields as unknown[]) {
    if (!isPlainObject(entry) || entry.manager !== FIELD_MANAGER || entry.operation !== 'Apply') continue;
    if (entry.subresource !== undefined && entry.subresource !== '') continue;
    const ms = typeof entry.time === 'string' ? Date.parse(entry.time) : Number.NaN;
    return Number.isNaN(ms) ? undefined : ms;
  }
  return undefined;
}

/** Raw JSON requests to the kubeconfig's current cluster, with its credentials and TLS settings. */
export function createKubeRequest(kc: KubeClientConfig, opts: TargetClusterOptions = {}): DatedKubeRequest {
  const http = createKubeHttp(kc, {
    timeoutMs: opts.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS,
    requestCounter: opts.requestCounter,
  });
  return async (init: KubeRequestInit) => {
    try {
      const response = await http(init);
      const date = response.headers.date === undefined ? Number.NaN : Date.parse(response.headers.date);
      return { status: response.status, body: response.body, date: Number.isNaN(date) ? undefined : date };
    } catch (error) {
      if (error instanceof KubeTransportError) {
        throw new KubeRequestError(error.message, undefined, { cause: error, reason: error.reason });
      }
      throw error;
    }
  };
}

// --- objects and paths -----------------------------------------------------------------------

function pathOrReject(obj: KubeObject, resource: ServedResource): Located {
  const located = locateObject(obj, resource);
  if (located === undefined) {
    throw new ApplyRejectedError(
      `${describeObject(obj)}: kind ${obj.kind} is namespaced, but the object has no metadata.namespace`,
    );
  }
  return located;
}

interface Creators {
  /** `group/Kind` → the name of the CustomResourceDefinition in the render that defines it. */
  crdByKind: ReadonlyMap<string, string>;
  namespaces: ReadonlySet<string>;
}

function creatorsIn(objects: readonly KubeObject[]): Creators {
  const crdByKind = new Map<string, string>();
  const namespaces = new Set<string>();
  for (const obj of objects) {
    if (isNamespace(obj)) namespaces.add(obj.metadata.name);
    if (!isCrd(obj)) continue;
    const spec = obj.spec;
    if (!isPlainObject(spec) || typeof spec.group !== 'string' || !isPlainObject(spec.names)) continue;
    if (typeof spec.names.kind === 'string')
      crdByKind.set(`${spec.group}/${spec.names.kind}`, obj.metadata.name);
  }
  return { crdByKind, namespaces };
}

/**
 * Why `obj` cannot be dry-run yet, or undefined. An instance of a CRD of this render is checked
 * only when that CRD is live and unchanged: a new CRD is not served, and a changed one may
 * change the schema the instance is validated against.
 */
function deferral(
  obj: KubeObject,
  creators: Creators,
  crdVerdicts: ReadonlyMap<string, { verdict: DryRunVerdict; existed: boolean }>,
  namespaceExists: ReadonlyMap<string, boolean>,
): string | undefined {
  const crdName = creators.crdByKind.get(`${apiGroup(obj.apiVersion)}/${obj.kind}`);
  if (crdName !== undefined) {
    const crd = crdVerdicts.get(crdName);
    if (crd === undefined || !crd.existed) {
      return `its kind ${obj.kind} is defined by CustomResourceDefinition ${crdName} of this render, which the cluster does not serve yet`;
    }
    if (crd.verdict.kind !== 'unchanged') {
      return `its kind ${obj.kind} is defined by CustomResourceDefinition ${crdName}, which this render changes`;
    }
  }
  const ns = obj.metadata.namespace;
  if (ns !== undefined && creators.namespaces.has(ns) && namespaceExists.get(ns) !== true) {
    return `its namespace ${ns} is created by this render`;
  }
  return undefined;
}

/** The live object as compared by a dry run: without what the server changes on every write. */
function comparable(obj: Record<string, unknown>): Record<string, unknown> {
  const copy = cloneJson(obj);
  delete copy.status;
  const metadata = copy.metadata;
  if (isPlainObject(metadata)) {
    delete metadata.resourceVersion;
    delete metadata.generation;
    if (Array.isArray(metadata.managedFields)) {
      // Who owns which fields stays compared, so that taking over a field counts as a change.
      // `before-first-apply` is bookkeeping, not a change: an apply that sets no field (a bare
      // Namespace) records no managedFields, and every later apply to such an object, dry run
      // included, attributes its existing fields to that pseudo-manager.
      const entries = (metadata.managedFields as unknown[]).filter(
        (entry) => !(isPlainObject(entry) && entry.manager === BEFORE_FIRST_APPLY),
      );
      for (const entry of entries) if (isPlainObject(entry)) delete entry.time;
      if (entries.length > 0) metadata.managedFields = entries;
      else delete metadata.managedFields;
    }
  }
  return copy;
}
