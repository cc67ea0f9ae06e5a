/**
 * The shape of one rendered Kubernetes object, and JSON helpers for working on objects without
 * mutating them.
 *
 * Rendered objects are plain JSON data (no Maps, Dates, binary or non-finite numbers): they are
 * content-addressed (`renderRef`), stored and compared, so `manifest-parse.ts` normalizes every
 * parsed document into fresh plain objects.
 */

export type JsonPrimitive = string | number | boolean | null;
export type JsonValue = JsonPrimitive | JsonValue[] | { [key: string]: JsonValue };
export type JsonObject = { [key: string]: JsonValue };

export interface KubeObjectMeta {
  name: string;
  /** Absent for cluster-scoped objects and for namespaced objects that take the target namespace. */
  namespace?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  [field: string]: unknown;
}

/** One Kubernetes object of a render: apiVersion, kind and metadata.name are always strings. */
export interface KubeObject {
  apiVersion: string;
  kind: string;
  metadata: KubeObjectMeta;
  [field: string]: unknown;
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Sets `key` as an own property; unlike `target[key] = value`, a "__proto__" key stays data. */
export function setOwnProperty(target: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, writable: true, enumerable: true, configurable: true });
}

/** A deep copy of JSON data; shared sub-trees (YAML aliases) become independent copies. */
export function cloneJson<T>(value: T): T {
  if (Array.isArray(value)) return value.map((item: unknown) => cloneJson(item)) as T;
  if (isPlainObject(value)) {
    const copy: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) setOwnProperty(copy, key, cloneJson(item));
    return copy as T;
  }
  return value;
}

/** JSON equality: key order of objects does not matter, array order does. */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a)) {
    return Array.isArray(b) && a.length === b.length && a.every((item, i) => jsonEqual(item, b[i]));
  }
  if (isPlainObject(a) && isPlainObject(b)) {
    const keys = Object.keys(a);
    if (keys.length !== Object.keys(b).length) return false;
    return keys.every((key) => Object.hasOwn(b, key) && jsonEqual(a[key], b[key]));
  }
  return false;
}

function typeName(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  return `a ${typeof value}`;
}

function stringMapProblem(value: unknown, field: string): string | undefined {
  if (value === undefined) return undefined;
  if (!isPlainObject(value)) return `${field} must be a mapping of strings, not ${typeName(value)}`;
  for (const [key, item] of Object.entries(value)) {
    if (typeof item !== 'string') {
      return `${field}["${key}"] must be a string, not ${typeName(item)} (quote the value in YAML)`;
    }
  }
  return undefined;
}

/**
 * Why `value` is not a usable Kubernetes object, naming the field, or undefined when it is one.
 * Checked: apiVersion, kind, metadata.name (non-empty strings), metadata.namespace (a string),
 * metadata.labels and metadata.annotations (string to string).
 */
export function kubeObjectProblem(value: unknown): string | undefined {
  if (!isPlainObject(value)) return `is ${typeName(value)}, not a mapping (a Kubernetes object)`;
  for (const field of ['apiVersion', 'kind'] as const) {
    const item = value[field];
    if (item === undefined || item === null) return `missing ${field}`;
    if (typeof item !== 'string' || item === '')
      return `${field} must be a non-empty string, not ${typeName(item)}`;
  }
  const metadata = value.metadata;
  if (metadata === undefined || metadata === null) return 'missing metadata.name (there is no metadata)';
  if (!isPlainObject(metadata)) return `metadata must be a mapping, not ${typeName(metadata)}`;
  const name = metadata.name;
  if (name === undefined || name === null || name === '') {
    return metadata.generateName === undefined
      ? 'missing metadata.name'
      : 'missing metadata.name (generateName is not supported: server-side apply needs a fixed name)';
  }
  if (typeof name !== 'string') return `metadata.name must be a string, not ${typeName(name)}`;
  if (metadata.namespace !== undefined && typeof metadata.namespace !== 'string') {
    return `metadata.namespace must be a string, not ${typeName(metadata.namespace)}`;
  }
  return (
    stringMapProblem(metadata.labels, 'metadata.labels') ??
    stringMapProblem(metadata.annotations, 'metadata.annotations')
  );
}

/** `apps/v1` → `apps`; `v1` → `` (the core group). */
export function apiGroup(apiVersion: string): string {
  const slash = apiVersion.lastIndexOf('/');
  return slash < 0 ? '' : apiVersion.slice(0, slash);
}

export const isNamespace = (obj: KubeObject): boolean => obj.kind === 'Namespace' && obj.apiVersion === 'v1';
export const isCrd = (obj: KubeObject): boolean =>
  obj.kind === 'CustomResourceDefinition' && apiGroup(obj.apiVersion) === 'apiextensions.k8s.io';
/** A Namespace or CustomResourceDefinition: other objects of a render may live in it or be of its kind. */
export const isCreator = (obj: KubeObject): boolean => isNamespace(obj) || isCrd(obj);

/** `Kind namespace/name`, or `Kind name` without a namespace: how messages name an object. */
export function describeObject(obj: KubeObject): string {
  const ns = obj.metadata.namespace;
  return ns ? `${obj.kind} ${ns}/${obj.metadata.name}` : `${obj.kind} ${obj.metadata.name}`;
}
