// How the target cluster's answers read to the reconcile: success, a refusal no retry changes
// (ApplyRejectedError: the object or its RBAC must be fixed) or a transient failure
// (KubeRequestError), with the server's message — a Secret's values blanked out — and who was
// refused (the Release's ServiceAccount, or the Cluster's credentials).
import { ApplyRejectedError } from '../../domain/reconcile/ports.ts';
import { apiGroup, describeObject, isPlainObject, type KubeObject } from '../../domain/render/kube-object.ts';
import { isSchemaError } from './object-paths.ts';

/** A request that failed for a reason that may pass: network, timeout, 5xx, 429, 401 (retry). */
export class KubeRequestError extends Error {
  override name = 'KubeRequestError';
  /** The HTTP status, or undefined when no answer came. */
  readonly status: number | undefined;
  /** The reason alone, e.g. `ECONNREFUSED` or `no answer within 5 s`. */
  readonly reason: string;
  /** No answer came: the cluster is not reachable (domain/reconcile/stops.ts isUnreachable). */
  readonly unreachable: boolean;
  constructor(message: string, status: number | undefined, options?: ErrorOptions & { reason?: string }) {
    super(message, options);
    this.status = status;
    this.reason = options?.reason ?? message;
    this.unreachable = status === undefined;
  }
}

const MAX_SERVER_MESSAGE = 4000;

/** 4xx answers that no retry will change: the object (or the RBAC for it) must be fixed. */
const REJECTED_STATUSES: ReadonlySet<number> = new Set([400, 403, 404, 405, 409, 410, 413, 415, 422]);

export function expectSuccessAs(
  obj: KubeObject,
  action: string,
  response: { status: number; body: unknown },
  actor: string | undefined,
): void {
  if (response.status >= 200 && response.status <= 299) return;
  // A refusal by RBAC names who was refused: the Release's ServiceAccount, or the Cluster's credentials.
  const who = (response.status === 401 || response.status === 403) && actor !== undefined ? ` ${actor}` : '';
  if (isSchemaError(response))
    throw new ApplyRejectedError(schemaRefusal(obj, action, serverMessage(obj, response.body)));
  const message = `${describeObject(obj)}: ${action} refused by the server${who} (HTTP ${response.status}): ${serverMessage(obj, response.body)}`;
  if (REJECTED_STATUSES.has(response.status)) throw new ApplyRejectedError(message);
  throw new KubeRequestError(message, response.status);
}

/**
 * A server-side apply the schema refused (object-paths.ts isSchemaError): the API server answers
 * HTTP 500 with `failed to create typed patch object (<ns/name>; <gvk>): .spec.x: field not
 * declared in schema`, which read as a crash when quoted behind "(HTTP 500)". Said as
 * what it is: the server's field errors, which object's schema they break, and what to fix.
 */
function schemaRefusal(obj: KubeObject, action: string, message: string): string {
  const parsed = /^failed to create typed (patch|live) object(?: \([^)]*\))?: ([\s\S]*)$/.exec(message);
  const detail = parsed?.[2] ?? message;
  const schema = `the ${obj.kind} schema of ${obj.apiVersion}`;
  return parsed?.[1] === 'live'
    ? `${describeObject(obj)}: ${action} refused by the server: the live object does not fit ${schema}: ${detail} (fix the live object or the CustomResourceDefinition)`
    : `${describeObject(obj)}: ${action} refused by the server: ${detail} — the rendered object does not fit ${schema} (fix or remove the field in the source)`;
}

export function expectObjectAs(
  obj: KubeObject,
  action: string,
  response: { status: number; body: unknown },
  actor: string | undefined,
): Record<string, unknown> {
  expectSuccessAs(obj, action, response, actor);
  if (!isPlainObject(response.body)) {
    throw new KubeRequestError(
      `${describeObject(obj)}: ${action} answered HTTP ${response.status} without a JSON object`,
      response.status,
    );
  }
  return response.body;
}

/** The server's `Status.message`, shortened, with a Secret's values blanked out. */
function serverMessage(obj: KubeObject, body: unknown): string {
  let message =
    isPlainObject(body) && typeof body.message === 'string' && body.message !== ''
      ? body.message
      : typeof body === 'string' && body !== ''
        ? body
        : 'no message';
  if (obj.kind === 'Secret' && apiGroup(obj.apiVersion) === '') message = redactSecretValues(message, obj);
  return message.length > MAX_SERVER_MESSAGE ? `${message.slice(0, MAX_SERVER_MESSAGE)}…` : message;
}

function redactSecretValues(message: string, secret: KubeObject): string {
  const values: string[] = [];
  for (const field of ['data', 'stringData'] as const) {
    const map = secret[field];
    if (!isPlainObject(map)) continue;
    for (const value of Object.values(map)) {
      if (typeof value !== 'string') continue;
      values.push(value);
      if (field === 'data') values.push(Buffer.from(value, 'base64').toString('utf8'));
    }
  }
  let redacted = message;
  // Longest first, so that a value containing another is blanked whole; short values would
  // blank ordinary words of the message.
  for (const value of values.filter((v) => v.length >= 4).sort((a, b) => b.length - a.length)) {
    redacted = redacted.split(value).join('[redacted]');
  }
  return redacted;
}
