/**
 * What the relay keeps of each watched object (10,000 Releases in 150 MB). The
 * informers apply these transforms to every listed and watched object before anything holds it
 * (the informer's map, which the Release index shares: watch/informers.ts), so a Release's
 * managedFields, its other annotations (kubectl's last-applied-configuration can be as large as
 * the object), its inline Helm values and the status parts the relay never reads are dropped as
 * soon as they are parsed off the wire.
 *
 * What the relay reads, and so what stays (every use in relay/ and the domain code it calls):
 * - metadata: name, namespace, uid, resourceVersion (the informer's change check), generation,
 *   creationTimestamp, deletionTimestamp, labels (Mutation selectors, release-events.ts), and of
 *   the annotations only the request annotations (pin, sync, force sync: release-events.ts,
 *   up-to-date.ts) and, of a ReleaseSet's child, convoy.dev/release-set-revision and
 *   convoy.dev/release-set-pin (what its set sees of it: fleet-triggers.ts childView);
 * - spec: all of it but `content.helm.values` (timers, up-to-date, affected-releases read
 *   intervals, suspend, mode, cluster, lifecycle, sources, values layers; parseRelease needs it);
 * - status: observedGeneration, reconciledAt, lastHandledSyncAt, lastHandledForceSyncAt,
 *   lastAttempted/lastSuccessful {attemptedAt, phase, renderRef}, rollout {renderRef, state},
 *   pin {renderRef, state}, healthSummary's renderRef, checkedAt and counts (not its objects), and
 *   each condition's type, status, reason, lastTransitionTime and observedGeneration (timers.ts,
 *   up-to-date.ts, release-gauges.ts). A condition's message is kept as '' (the schema wants a
 *   string; nothing in the relay shows it).
 * - the other kinds (Cluster, Mutation, Lifecycle, GitRepository): metadata name, namespace, uid,
 *   resourceVersion, generation, and spec (affected-releases.ts); no status. ConfigMaps and
 *   Secrets arrive as metadata only (metadata-only.ts) and keep the same metadata fields. A
 *   Cluster keeps its labels too (a ReleaseSet selects Clusters by label) and its annotations (a
 *   template may read any of them, `${cluster.annotations.<k>}`, so a change of any wakes the
 *   sets of its namespace: fleet-triggers.ts clusterChangeCause), but not kubectl's
 *   last-applied-configuration (CLUSTER_ANNOTATIONS_IGNORED: a copy of the object, never
 *   compared), and an annotation value longer than CLUSTER_ANNOTATION_VALUE_CHARS is kept as its
 *   sha256 digest: the relay only compares them, so one Cluster costs at most ~100 bytes an
 *   annotation whatever other tools write there.
 * - a ReleaseSet (watched only with a fleet queue): metadata name, namespace, uid,
 *   resourceVersion, generation, deletionTimestamp and of the annotations only the fleet request
 *   annotations (approve, rollback); of the spec only spec.template.spec.syncPolicy.interval (its
 *   timer: domain/relay/set-timers.ts); of the status observedGeneration, rollout {state, step,
 *   stepName} and the clusters counts (fleet-triggers.ts, release-set-gauges.ts).
 *
 * The HTTP API does not read this cache: its routes read Releases from the API server
 * (http/release-api.ts), so nothing it answers depends on what is dropped here. The copy of a
 * just-added Release that travels with its first reconcile message is this slim one; the
 * functions only compare its metadata with the live Release (functions/runtime/release-reads.ts).
 */
import { createHash } from 'node:crypto';
import type { KubeObjectLike } from './list-watch.ts';
import {
  CHILD_ANNOTATIONS,
  CLUSTER_ANNOTATIONS_IGNORED,
  FLEET_REQUEST_ANNOTATIONS,
} from '../../domain/relay/fleet-triggers.ts';
import { REQUEST_ANNOTATIONS } from '../../domain/relay/release-events.ts';

type Raw = Record<string, unknown>;

const isObject = (value: unknown): value is Raw =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** The fields of `from` named in `keys` that it has (no key is added as undefined). */
function pick(from: unknown, keys: readonly string[]): Raw | undefined {
  if (!isObject(from)) return undefined;
  const out: Raw = {};
  for (const key of keys) if (from[key] !== undefined) out[key] = from[key];
  return out;
}

/** Sets `key` on `to` when `value` is defined. */
function put(to: Raw, key: string, value: unknown): void {
  if (value !== undefined) to[key] = value;
}

const IDENTITY_METADATA = ['name', 'namespace', 'uid', 'resourceVersion', 'generation'] as const;
const RELEASE_METADATA = [...IDENTITY_METADATA, 'creationTimestamp', 'deletionTimestamp', 'labels'] as const;

function slimMetadata(metadata: unknown, keys: readonly string[], annotations: readonly string[]): Raw {
  const out = pick(metadata, keys) ?? {};
  const kept = pick(isObject(metadata) ? metadata['annotations'] : undefined, annotations);
  if (kept !== undefined && Object.keys(kept).length > 0) out['annotations'] = kept;
  return out;
}

const ATTEMPT = ['attemptedAt', 'phase', 'renderRef'] as const;
const CONDITION = ['type', 'status', 'reason', 'lastTransitionTime', 'observedGeneration'] as const;
const HEALTH_SUMMARY = [
  'renderRef',
  'checkedAt',
  'total',
  'healthy',
  'progressing',
  'degraded',
  'missing',
  'unknown',
] as const;

function slimStatus(status: unknown): Raw | undefined {
  if (!isObject(status)) return undefined;
  const out =
    pick(status, ['observedGeneration', 'reconciledAt', 'lastHandledSyncAt', 'lastHandledForceSyncAt']) ?? {};
  put(out, 'lastAttempted', pick(status['lastAttempted'], ATTEMPT));
  put(out, 'lastSuccessful', pick(status['lastSuccessful'], ATTEMPT));
  put(out, 'rollout', pick(status['rollout'], ['renderRef', 'state']));
  put(out, 'pin', pick(status['pin'], ['renderRef', 'state']));
  const health = pick(status['healthSummary'], HEALTH_SUMMARY);
  if (health !== undefined) put(out, 'healthSummary', { ...health, objects: [] });
  const conditions = status['conditions'];
  if (Array.isArray(conditions))
    out['conditions'] = (conditions as unknown[]).map((c) =>
      isObject(c) ? { ...pick(c, CONDITION), message: '' } : c,
    );
  return out;
}

function slimSpec(spec: unknown): unknown {
  if (!isObject(spec)) return spec;
  const content = spec['content'];
  if (!isObject(content) || !isObject(content['helm']) || content['helm']['values'] === undefined)
    return spec;
  const { values: _values, ...helm } = content['helm'];
  return { ...spec, content: { ...content, helm } };
}

/**
 * `value` with every string equal to one seen before in it replaced by that first one (in
 * place): JSON.parse makes a string per occurrence, and a Release repeats its renderRef four
 * times and its timestamps up to nine.
 */
function shareStrings(value: unknown, seen = new Map<string, string>()): void {
  const entries: [string | number, unknown][] = Array.isArray(value)
    ? value.map((item, i) => [i, item])
    : isObject(value)
      ? Object.entries(value)
      : [];
  for (const [key, item] of entries) {
    if (typeof item === 'string') {
      const first = seen.get(item);
      if (first === undefined) seen.set(item, item);
      else (value as Record<string | number, unknown>)[key] = first;
    } else if (typeof item === 'object' && item !== null) {
      shareStrings(item, seen);
    }
  }
}

/** The annotations kept on a Release: its request annotations and those a ReleaseSet reads of its children. */
const RELEASE_ANNOTATIONS = [...REQUEST_ANNOTATIONS, ...CHILD_ANNOTATIONS] as const;

/** A Release as the relay keeps it (see the header); it still parses as a Release. */
export function slimRelease<T extends KubeObjectLike>(raw: T): T {
  const object = raw as unknown as Raw;
  const out: Raw = {
    apiVersion: object['apiVersion'],
    kind: object['kind'],
    metadata: slimMetadata(object['metadata'], RELEASE_METADATA, RELEASE_ANNOTATIONS),
  };
  put(out, 'spec', slimSpec(object['spec']));
  put(out, 'status', slimStatus(object['status']));
  shareStrings(out);
  return out as unknown as T;
}

/** A Cluster, Mutation, Lifecycle or GitRepository (spec kept), or a ConfigMap or Secret as metadata, as the relay keeps it. */
export function slimDependency<T extends KubeObjectLike>(raw: T): T {
  const object = raw as unknown as Raw;
  const out: Raw = {
    apiVersion: object['apiVersion'],
    kind: object['kind'],
    metadata: slimMetadata(object['metadata'], IDENTITY_METADATA, []),
  };
  put(out, 'spec', object['spec']);
  return out as unknown as T;
}

/** A Cluster annotation value longer than this is kept as `sha256:<hex>` of it (the relay only compares them). */
export const CLUSTER_ANNOTATION_VALUE_CHARS = 100;

/** A Cluster's annotations as the relay compares them: none ignored, long values as digests. */
function comparedAnnotations(annotations: Raw): Raw {
  const out: Raw = {};
  for (const [key, value] of Object.entries(annotations)) {
    if (CLUSTER_ANNOTATIONS_IGNORED.includes(key)) continue;
    out[key] =
      typeof value === 'string' && value.length > CLUSTER_ANNOTATION_VALUE_CHARS
        ? `sha256:${createHash('sha256').update(value).digest('hex')}`
        : value;
  }
  return out;
}

/** A Cluster as the relay keeps it: slimDependency's fields, its labels and its annotations as compared (see the header). */
export function slimCluster<T extends KubeObjectLike>(raw: T): T {
  const out = slimDependency(raw) as unknown as Raw;
  const metadata = (raw as unknown as Raw)['metadata'];
  const labels = isObject(metadata) && isObject(metadata['labels']) ? metadata['labels'] : undefined;
  if (labels !== undefined && Object.keys(labels).length > 0) (out['metadata'] as Raw)['labels'] = labels;
  const annotations =
    isObject(metadata) && isObject(metadata['annotations'])
      ? comparedAnnotations(metadata['annotations'])
      : undefined;
  if (annotations !== undefined && Object.keys(annotations).length > 0)
    (out['metadata'] as Raw)['annotations'] = annotations;
  return out as unknown as T;
}

const RELEASE_SET_METADATA = [...IDENTITY_METADATA, 'deletionTimestamp'] as const;

/** A ReleaseSet as the relay keeps it (see the header): what its triggers and gauges read. */
export function slimReleaseSet<T extends KubeObjectLike>(raw: T): T {
  const object = raw as unknown as Raw;
  const out: Raw = {
    apiVersion: object['apiVersion'],
    kind: object['kind'],
    metadata: slimMetadata(object['metadata'], RELEASE_SET_METADATA, FLEET_REQUEST_ANNOTATIONS),
  };
  const spec = object['spec'];
  const template = isObject(spec) && isObject(spec['template']) ? spec['template'] : undefined;
  const templateSpec = isObject(template?.['spec']) ? template['spec'] : undefined;
  const interval = isObject(templateSpec?.['syncPolicy'])
    ? templateSpec['syncPolicy']['interval']
    : undefined;
  if (interval !== undefined) out['spec'] = { template: { spec: { syncPolicy: { interval } } } };
  const status = object['status'];
  if (isObject(status)) {
    const kept = pick(status, ['observedGeneration']) ?? {};
    put(kept, 'rollout', pick(status['rollout'], ['state', 'step', 'stepName']));
    put(kept, 'clusters', pick(status['clusters'], ['selected', 'updated', 'ready', 'waiting', 'failed']));
    out['status'] = kept;
  }
  return out as unknown as T;
}

/**
 * `transform` made idempotent for one informer: an object it returned is returned as is, so the
 * list function (which slims each page as it arrives) and the informer can both apply it
 * without a second copy.
 */
export function once<T extends object>(transform: (object: T) => T): (object: T) => T {
  const slimmed = new WeakSet<T>();
  return (object) => {
    if (slimmed.has(object)) return object;
    const slim = transform(object);
    slimmed.add(slim);
    return slim;
  };
}
