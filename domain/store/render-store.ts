/**
 * The render store port: content-addressed renders of one Release, kept so
 * that drift, health, rollback and pins can load exactly what was applied.
 * Adapters (S3 in AWS, fauxqs in `convoy dev`) implement `RenderStore`;
 * loops receive it as a port and never see S3.
 *
 * Renders hold Secret objects: no implementation may log object content or
 * put it in an error message.
 */

/** What the store knows about one render without reading its objects. */
export interface StoredRenderMeta {
  /** `sha256:<64 hex>`: the content address computed by the caller (domain/render). */
  readonly renderRef: string;
  readonly namespace: string;
  /** The Release name. */
  readonly release: string;
  /** RFC 3339 time the render was stored (the caller's clock). */
  readonly createdAt: string;
  readonly objectCount: number;
  /** The status `resolvedSource` the render was made from. */
  readonly resolvedSource?: unknown;
  /** The status `resolvedCluster` the render was made for. */
  readonly resolvedCluster?: unknown;
  /** The status `resolvedMutations` applied to the render, in order. */
  readonly resolvedMutations?: readonly { readonly name: string; readonly generation: number }[];
}

export interface StoredRender {
  readonly meta: StoredRenderMeta;
  readonly objects: readonly object[];
}

export interface RenderStore {
  /**
   * Stores a render. Idempotent: storing a renderRef that is already stored
   * keeps the first copy (same content by construction) and its createdAt.
   * @throws InvalidRenderKeyError, RenderStoreUnavailableError
   */
  put(meta: StoredRenderMeta, objects: readonly object[]): Promise<void>;
  /**
   * The render, or undefined when it is not stored.
   * @throws InvalidRenderKeyError, RenderStoreReadError (stored but unreadable), RenderStoreUnavailableError
   */
  get(namespace: string, release: string, renderRef: string): Promise<StoredRender | undefined>;
  /** @throws InvalidRenderKeyError, RenderStoreUnavailableError */
  has(namespace: string, release: string, renderRef: string): Promise<boolean>;
  /**
   * Every stored render of the Release, newest first (createdAt, then renderRef).
   * The `resolved*` fields may be absent here when they were too large to
   * keep beside the object; `get` always returns them.
   * @throws InvalidRenderKeyError, RenderStoreReadError, RenderStoreUnavailableError
   */
  list(namespace: string, release: string): Promise<StoredRenderMeta[]>;
  /** Removes the render; removing one that is not stored is not an error. */
  delete(namespace: string, release: string, renderRef: string): Promise<void>;
}

/** Present in the store but unreadable: bad compression, bad JSON, or content that is not the render asked for. Retrying does not help. */
export class RenderStoreReadError extends Error {
  override name = 'RenderStoreReadError';
  readonly retryable = false;
  /** Where the render lives (an S3 key); never its content. */
  readonly key: string;

  constructor(key: string, message: string) {
    super(message);
    this.key = key;
  }
}

/** The store could not be reached or refused the call (network, permissions, throttling, a missing bucket). Usually transient. */
export class RenderStoreUnavailableError extends Error {
  override name = 'RenderStoreUnavailableError';
  readonly retryable = true;
  /** The operation that failed: put, get, has, list or delete. */
  readonly operation: string;
  /** The backend's error name or code, e.g. `AccessDenied`, `NoSuchBucket`, `ECONNREFUSED`. */
  readonly errorName: string;
  readonly key: string;

  constructor(operation: string, key: string, errorName: string, message: string, cause?: unknown) {
    super(message, cause === undefined ? undefined : { cause });
    this.operation = operation;
    this.key = key;
    this.errorName = errorName;
  }
}

/** A namespace, Release name or renderRef that cannot name a stored render (a caller bug, or bad user input to validate first). */
export class InvalidRenderKeyError extends Error {
  override name = 'InvalidRenderKeyError';
  readonly retryable = false;
  /** `namespace`, `release` or `renderRef`. */
  readonly field: string;

  constructor(field: string, message: string) {
    super(message);
    this.field = field;
  }
}

const RENDER_REF = /^sha256:[0-9a-f]{64}$/;
// Kubernetes object names: DNS-1123 subdomain for a Release, label for a namespace. Neither may hold "/", so keys never collide.
const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

export function isRenderRef(value: string): boolean {
  return RENDER_REF.test(value);
}

/** @throws InvalidRenderKeyError naming the field that cannot be part of a store key. */
export function checkRenderKey(namespace: string, release: string, renderRef: string): void {
  checkReleaseKey(namespace, release);
  if (!RENDER_REF.test(renderRef)) {
    throw new InvalidRenderKeyError(
      'renderRef',
      `render store: renderRef ${JSON.stringify(renderRef.slice(0, 80))} is not sha256:<64 lowercase hex digits>`,
    );
  }
}

/** @throws InvalidRenderKeyError naming the field that cannot be part of a store key. */
export function checkReleaseKey(namespace: string, release: string): void {
  if (namespace.length > 63 || !DNS1123_LABEL.test(namespace)) {
    throw new InvalidRenderKeyError(
      'namespace',
      `render store: namespace ${JSON.stringify(namespace.slice(0, 80))} is not a Kubernetes namespace name (lowercase letters, digits and "-", at most 63)`,
    );
  }
  if (release.length > 253 || !DNS1123_SUBDOMAIN.test(release)) {
    throw new InvalidRenderKeyError(
      'release',
      `render store: Release name ${JSON.stringify(release.slice(0, 260))} is not a Kubernetes object name (lowercase letters, digits, "-" and ".", at most 253)`,
    );
  }
}

/**
 * Newest first: by createdAt, later first; then by renderRef so the order is
 * total. A createdAt that does not parse sorts last (oldest).
 */
export function compareNewestFirst(a: StoredRenderMeta, b: StoredRenderMeta): number {
  const ta = Date.parse(a.createdAt);
  const tb = Date.parse(b.createdAt);
  const va = Number.isNaN(ta) ? -Infinity : ta;
  const vb = Number.isNaN(tb) ? -Infinity : tb;
  if (va !== vb) return vb > va ? 1 : -1;
  return a.renderRef < b.renderRef ? -1 : a.renderRef > b.renderRef ? 1 : 0;
}
