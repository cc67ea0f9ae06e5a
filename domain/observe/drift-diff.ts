/**
 * Drift of one object of the applied render: where the cluster differs from
 * what convoy would make of it.
 *
 * The comparison is between two answers of the target's API server, never
 * between the rendered YAML and the live object: `merged` is the object as a
 * server-side-apply dry run of the rendered object (manager `convoy`, force)
 * would leave it, `live` is the object as it is. Both went through the same
 * defaulting, normalization (`0.5` → `500m`) and admission, so a difference
 * is a field the apply would really change.
 *
 * Ignored on both sides: what the server writes on its own (status,
 * managedFields, resourceVersion, generation, uid, creationTimestamp, …),
 * annotations and labels servers and client tools add, and the
 * `spec.driftDetection.ignore` JSON pointers of rules that match the object.
 *
 * The result names JSON pointers only — never values: a Secret's data must
 * never reach a condition message or a log line.
 */
import type { Release } from '../api/objects.ts';
import { apiGroup, cloneJson, isPlainObject, jsonEqual, type KubeObject } from '../render/kube-object.ts';

/** One entry of `spec.driftDetection.ignore`. */
export type IgnoreRule = NonNullable<Release['spec']['driftDetection']['ignore']>[number];

/** What the target said about one rendered object. */
export type DriftObservation =
  /** The object does not exist, its kind is not served, or its namespace does not exist. */
  | { readonly kind: 'absent' }
  /**
   * The live object already is what the apply would make: the dry run changed nothing, or its
   * resourceVersion is the one of its last clean check (drift-memory.ts). `resourceVersion`: the
   * live object's, when the answer carried it.
   */
  | { readonly kind: 'unchanged'; readonly resourceVersion?: string | undefined }
  /** The dry run may have changed something: compare what it returned with the live object. */
  | {
      readonly kind: 'compared';
      readonly merged: Record<string, unknown>;
      readonly live: Record<string, unknown>;
      readonly resourceVersion?: string | undefined;
    }
  /** The server refused the dry run (e.g. an immutable field now differs); `message` holds no Secret data. */
  | { readonly kind: 'refused'; readonly message: string };

export type ObjectDrift =
  | { readonly state: 'InSync' }
  /** `paths`: JSON pointers (RFC 6901) of the fields that differ, sorted; never values. */
  | { readonly state: 'Drifted'; readonly paths: readonly string[] }
  | { readonly state: 'Missing' }
  /** The render's object can no longer be applied over the live one. */
  | { readonly state: 'Unappliable'; readonly message: string };

/** Metadata the API server owns. */
const SERVER_METADATA = [
  'managedFields',
  'resourceVersion',
  'generation',
  'uid',
  'creationTimestamp',
  'selfLink',
  'deletionTimestamp',
  'deletionGracePeriodSeconds',
] as const;

/** Annotations written by controllers, the API server or kubectl, never by a render. */
export const SERVER_SET_ANNOTATIONS: ReadonlySet<string> = new Set([
  'deprecated.daemonset.template.generation',
  'deployment.kubernetes.io/revision',
  'kubectl.kubernetes.io/last-applied-configuration',
  'endpoints.kubernetes.io/last-change-trigger-time',
  'pv.kubernetes.io/bind-completed',
  'pv.kubernetes.io/bound-by-controller',
  'volume.beta.kubernetes.io/storage-provisioner',
  'volume.kubernetes.io/storage-provisioner',
  'volume.kubernetes.io/selected-node',
]);

/** Labels the API server adds (Namespaces carry their own name). */
export const SERVER_SET_LABELS: ReadonlySet<string> = new Set(['kubernetes.io/metadata.name']);

/** A copy of `obj` without the fields the server writes on its own. */
export function comparableForDrift(obj: Record<string, unknown>): Record<string, unknown> {
  const copy = cloneJson(obj);
  delete copy.status;
  const metadata = copy.metadata;
  if (!isPlainObject(metadata)) return copy;
  for (const field of SERVER_METADATA) delete metadata[field];
  dropKeys(metadata, 'annotations', SERVER_SET_ANNOTATIONS);
  dropKeys(metadata, 'labels', SERVER_SET_LABELS);
  return copy;
}

function dropKeys(
  metadata: Record<string, unknown>,
  field: 'annotations' | 'labels',
  keys: ReadonlySet<string>,
): void {
  const map = metadata[field];
  if (!isPlainObject(map)) return;
  for (const key of Object.keys(map)) if (keys.has(key)) delete map[key];
  if (Object.keys(map).length === 0) delete metadata[field];
}

/** Whether an ignore rule names this object: each of group, kind, name and namespace is empty or equal. */
export function ignoreRuleMatches(rule: IgnoreRule, obj: KubeObject): boolean {
  const matches = (wanted: string | undefined, actual: string) =>
    wanted === undefined || wanted === '' || wanted === actual;
  return (
    matches(rule.group, apiGroup(obj.apiVersion)) &&
    matches(rule.kind, obj.kind) &&
    matches(rule.name, obj.metadata.name) &&
    matches(rule.namespace, obj.metadata.namespace ?? '')
  );
}

/** The JSON pointers `spec.driftDetection.ignore` lets differ on this object. */
export function ignoredPointers(obj: KubeObject, rules: readonly IgnoreRule[]): string[] {
  return rules.filter((rule) => ignoreRuleMatches(rule, obj)).flatMap((rule) => rule.jsonPointers);
}

/** RFC 6901 tokens of a pointer; undefined for a pointer that does not start with `/` (and is not ""). */
export function parsePointer(pointer: string): string[] | undefined {
  if (pointer === '') return [];
  if (!pointer.startsWith('/')) return undefined;
  return pointer
    .slice(1)
    .split('/')
    .map((token) => token.replace(/~1/g, '/').replace(/~0/g, '~'));
}

function escapeToken(token: string): string {
  return token.replace(/~/g, '~0').replace(/\//g, '~1');
}

/**
 * Removes what `tokens` name from `doc` (in place; a list item is blanked to
 * null); a pointer that names nothing is fine. Returns false for "" (the
 * whole object).
 */
function removeAt(doc: Record<string, unknown>, tokens: readonly string[]): boolean {
  if (tokens.length === 0) return false;
  let node: unknown = doc;
  for (const token of tokens.slice(0, -1)) {
    if (Array.isArray(node)) node = /^\d+$/.test(token) ? node[Number(token)] : undefined;
    else if (isPlainObject(node)) node = Object.hasOwn(node, token) ? node[token] : undefined;
    else return true;
  }
  const last = tokens[tokens.length - 1];
  if (Array.isArray(node)) {
    // Blanked rather than removed, so the items after it keep their pointers.
    if (/^\d+$/.test(last) && Number(last) < node.length) node[Number(last)] = null;
  } else if (isPlainObject(node)) {
    delete node[last];
  }
  return true;
}

/**
 * JSON pointers where `a` and `b` differ, sorted. Objects are compared key by
 * key; lists of the same length item by item; a list whose length changed is
 * one difference at the list itself.
 */
export function differingPointers(a: unknown, b: unknown, base = ''): string[] {
  if (jsonEqual(a, b)) return [];
  if (isPlainObject(a) && isPlainObject(b)) {
    const keys = [...new Set([...Object.keys(a), ...Object.keys(b)])].sort();
    return keys.flatMap((key) => {
      const path = `${base}/${escapeToken(key)}`;
      if (!Object.hasOwn(a, key) || !Object.hasOwn(b, key)) return [path];
      return differingPointers(a[key], b[key], path);
    });
  }
  if (Array.isArray(a) && Array.isArray(b) && a.length === b.length) {
    return a.flatMap((item, i) => differingPointers(item, b[i], `${base}/${i}`));
  }
  return [base];
}

/**
 * The JSON pointers where the dry-run result `merged` differs from `live`,
 * after dropping server-written fields and the `ignored` pointers from both.
 */
export function driftPaths(
  merged: Record<string, unknown>,
  live: Record<string, unknown>,
  ignored: readonly string[] = [],
): string[] {
  const left = comparableForDrift(merged);
  const right = comparableForDrift(live);
  for (const pointer of ignored) {
    const tokens = parsePointer(pointer);
    if (tokens === undefined) continue;
    // "" ignores the whole object.
    if (!removeAt(left, tokens)) return [];
    removeAt(right, tokens);
  }
  return differingPointers(left, right);
}

/** The drift of one rendered object, from what the target said about it. */
export function objectDrift(
  desired: KubeObject,
  observation: DriftObservation,
  ignore: readonly IgnoreRule[] = [],
): ObjectDrift {
  switch (observation.kind) {
    case 'absent':
      return { state: 'Missing' };
    case 'unchanged':
      return { state: 'InSync' };
    case 'refused':
      return { state: 'Unappliable', message: observation.message };
    case 'compared': {
      const paths = driftPaths(observation.merged, observation.live, ignoredPointers(desired, ignore));
      return paths.length === 0 ? { state: 'InSync' } : { state: 'Drifted', paths };
    }
  }
}
