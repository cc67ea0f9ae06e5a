/**
 * What every route of the HTTP API shares: the error type that is already an
 * answer, path validation, and the access check (SubjectAccessReview for the
 * caller's identity) on one Release.
 */
import type { Context } from 'hono';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import { z } from 'zod';
import type { Authenticator, Identity, ReleaseVerb } from './auth.ts';

/** `identity` is set by the bearer middleware; `token` too, only for routes that act with the caller's own credentials. Never log either. */
export type ApiEnv = { Variables: { identity: Identity; token: string } };

/** The body of every error response. */
export interface ApiErrorBody {
  error: string;
  message: string;
  field?: string;
}

/** An error that is already an HTTP answer. */
export class ApiError extends Error {
  override name = 'ApiError';
  readonly status: ContentfulStatusCode;
  readonly code: string;
  readonly field: string | undefined;

  constructor(status: ContentfulStatusCode, code: string, message: string, field?: string) {
    super(message);
    this.status = status;
    this.code = code;
    this.field = field;
  }
}

/** A full renderRef as GET …/renders lists them. */
export const renderRefSchema = z.string().regex(/^sha256:[0-9a-f]{64}$/, {
  message: 'must be sha256:<64 lowercase hex digits>, a renderRef from GET …/renders',
});

const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

export function checkNamespace(namespace: string, field = 'namespace'): string {
  if (namespace.length > 63 || !DNS1123_LABEL.test(namespace)) {
    throw new ApiError(
      400,
      'InvalidRequest',
      `namespace ${JSON.stringify(namespace.slice(0, 80))} is not a Kubernetes namespace name (lowercase letters, digits and "-", at most 63)`,
      field,
    );
  }
  return namespace;
}

export function namespaceOf(c: Context<ApiEnv>): string {
  return checkNamespace(c.req.param('ns') ?? '');
}

export function releaseKey(c: Context<ApiEnv>): { namespace: string; name: string } {
  const namespace = namespaceOf(c);
  const name = c.req.param('name') ?? '';
  if (name.length > 253 || !DNS1123_SUBDOMAIN.test(name)) {
    throw new ApiError(
      400,
      'InvalidRequest',
      `Release name ${JSON.stringify(name.slice(0, 80))} is not a Kubernetes object name (lowercase letters, digits, "-" and ".", at most 253)`,
      'name',
    );
  }
  return { namespace, name };
}

export function subjectOf(id: Identity): {
  uid?: string;
  extra?: Readonly<Record<string, readonly string[]>>;
} {
  return {
    ...(id.uid !== undefined ? { uid: id.uid } : {}),
    ...(id.extra !== undefined ? { extra: id.extra } : {}),
  };
}

/** Whether the caller may `verb` convoy.dev's `resource` in `namespace` ('' = every namespace); `name` narrows it to one. */
function mayOn(
  resource: 'releases' | 'releasesets',
  auth: Authenticator,
  id: Identity,
  verb: ReleaseVerb,
  namespace: string,
  name?: string,
): Promise<boolean> {
  return auth.authorize(
    id.user,
    id.groups,
    { verb, namespace, resource, ...(name !== undefined ? { name } : {}) },
    subjectOf(id),
  );
}

/** Whether the caller may `verb` releases.convoy.dev in `namespace` ('' = every namespace); `name` narrows it to one. */
export const mayOnReleases = (
  auth: Authenticator,
  id: Identity,
  verb: ReleaseVerb,
  namespace: string,
  name?: string,
): Promise<boolean> => mayOn('releases', auth, id, verb, namespace, name);

/** Whether the caller may `verb` releasesets.convoy.dev in `namespace` ('' = every namespace); `name` narrows it to one. */
export const mayOnReleaseSets = (
  auth: Authenticator,
  id: Identity,
  verb: ReleaseVerb,
  namespace: string,
  name?: string,
): Promise<boolean> => mayOn('releasesets', auth, id, verb, namespace, name);

/** Validates the path and checks the caller may `verb` this object of `resource` (403 otherwise, naming what to ask for). */
async function allowOn(
  resource: 'releases' | 'releasesets',
  auth: Authenticator,
  c: Context<ApiEnv>,
  verb: ReleaseVerb,
): Promise<{ namespace: string; name: string; user: string }> {
  const key = releaseKey(c);
  const id = c.get('identity');
  if (!(await mayOn(resource, auth, id, verb, key.namespace, key.name))) {
    throw new ApiError(
      403,
      'Forbidden',
      `user "${id.user}" may not ${verb} ${resource}.convoy.dev "${key.name}" in namespace "${key.namespace}"; ask for a Role that grants "${verb}" on ${resource}.convoy.dev`,
    );
  }
  return { ...key, user: id.user };
}

/** Validates the path and checks the caller may `verb` this ReleaseSet (403 otherwise, naming what to ask for). */
export const allowReleaseSet = (
  auth: Authenticator,
  c: Context<ApiEnv>,
  verb: ReleaseVerb,
): Promise<{ namespace: string; name: string; user: string }> => allowOn('releasesets', auth, c, verb);

/** Validates the path and checks the caller may `verb` this Release (403 otherwise, naming what to ask for). */
export const allowRelease = (
  auth: Authenticator,
  c: Context<ApiEnv>,
  verb: ReleaseVerb,
): Promise<{ namespace: string; name: string; user: string }> => allowOn('releases', auth, c, verb);
