/**
 * Who is calling, and may they? The HTTP API delegates both questions to the
 * management cluster's API server, as kube-rbac-proxy does: a TokenReview
 * checks the bearer token, a SubjectAccessReview asks RBAC (or whatever
 * authorizer the cluster runs) whether that user may `update` (sync, pin) or
 * `get` (reads) `releases.convoy.dev` in the namespace.
 *
 * The token is only ever put in the TokenReview body: never in a log line,
 * an error message or an exception this module throws.
 */
import { createKubeClient, isKubeApiError } from '../../adapters/kube/http.ts';
import type { KubeClientConfig } from '../../adapters/kube/kubeconfig.ts';
import { API_GROUP } from '../../domain/api/common.ts';

export interface Identity {
  readonly user: string;
  readonly groups: readonly string[];
  readonly uid?: string;
  readonly extra?: Readonly<Record<string, readonly string[]>>;
}

export type ReleaseVerb = 'get' | 'list' | 'update';

export interface AccessRequest {
  readonly verb: ReleaseVerb;
  readonly namespace: string;
  /** releases, or releasesets (the same rules, on the ReleaseSet resource). */
  readonly resource: 'releases' | 'releasesets';
  readonly name?: string;
}

export interface Authenticator {
  /** The user behind a bearer token, or undefined when the token is not valid. Throws only when the check itself failed. */
  authenticate(bearer: string): Promise<Identity | undefined>;
  /** Whether the user may do `request` (on `releases.convoy.dev`). Throws only when the check itself failed. */
  authorize(
    user: string,
    groups: readonly string[],
    request: AccessRequest,
    subject?: { readonly uid?: string; readonly extra?: Readonly<Record<string, readonly string[]>> },
  ): Promise<boolean>;
}

/** The TokenReview or SubjectAccessReview call failed (network, or the relay lacks RBAC to create them). */
export class AuthCheckError extends Error {
  override name = 'AuthCheckError';
  /** 'TokenReview' or 'SubjectAccessReview'. */
  readonly check: string;

  constructor(check: string, message: string, cause?: unknown) {
    super(message, cause === undefined ? undefined : { cause });
    this.check = check;
  }
}

/** An error's description without anything that might echo a request body (a token). */
function describeFailure(err: unknown): string {
  if (isKubeApiError(err)) return `HTTP ${err.status}`;
  if (err instanceof Error) return err.name;
  return 'unknown error';
}

/**
 * Checks tokens with TokenReview and access with SubjectAccessReview on the
 * cluster `kube` points at. The relay's own identity needs `create` on
 * `tokenreviews.authentication.k8s.io` and
 * `subjectaccessreviews.authorization.k8s.io` (the system:auth-delegator ClusterRole).
 */
interface ReviewStatus {
  status?: {
    authenticated?: boolean;
    allowed?: boolean;
    denied?: boolean;
    user?: { username?: string; uid?: string; groups?: string[]; extra?: Record<string, string[]> };
  };
}

export function createKubeAuthenticator(kube: KubeClientConfig): Authenticator {
  const client = createKubeClient(kube, { userAgent: 'convoy-relay', timeoutMs: 30_000 });
  const authn = {
    createTokenReview: ({ body }: { body: unknown }) =>
      client.create<ReviewStatus>('/apis/authentication.k8s.io/v1/tokenreviews', body),
  };
  const authz = {
    createSubjectAccessReview: ({ body }: { body: unknown }) =>
      client.create<ReviewStatus>('/apis/authorization.k8s.io/v1/subjectaccessreviews', body),
  };
  return {
    async authenticate(bearer) {
      if (bearer === '') return undefined;
      let review;
      try {
        review = await authn.createTokenReview({
          body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec: { token: bearer } },
        });
      } catch (err) {
        // The cause is dropped on purpose: a client error could carry the request body, which holds the token.
        throw new AuthCheckError(
          'TokenReview',
          `TokenReview failed (${describeFailure(err)}): check that the relay may create tokenreviews.authentication.k8s.io`,
        );
      }
      const status = review.status;
      const username = status?.user?.username;
      if (status?.authenticated !== true || username === undefined || username === '') return undefined;
      return {
        user: username,
        groups: status.user?.groups ?? [],
        ...(status.user?.uid !== undefined ? { uid: status.user.uid } : {}),
        ...(status.user?.extra !== undefined ? { extra: status.user.extra } : {}),
      };
    },

    async authorize(user, groups, request, subject) {
      let review;
      try {
        review = await authz.createSubjectAccessReview({
          body: {
            apiVersion: 'authorization.k8s.io/v1',
            kind: 'SubjectAccessReview',
            spec: {
              user,
              groups: [...groups],
              ...(subject?.uid !== undefined ? { uid: subject.uid } : {}),
              ...(subject?.extra !== undefined
                ? { extra: Object.fromEntries(Object.entries(subject.extra).map(([k, v]) => [k, [...v]])) }
                : {}),
              resourceAttributes: {
                group: API_GROUP,
                resource: request.resource,
                verb: request.verb,
                namespace: request.namespace,
                ...(request.name !== undefined ? { name: request.name } : {}),
              },
            },
          },
        });
      } catch (err) {
        throw new AuthCheckError(
          'SubjectAccessReview',
          `SubjectAccessReview for ${request.verb} ${request.resource}.${API_GROUP} in ${request.namespace} failed (${describeFailure(err)}): check that the relay may create subjectaccessreviews.authorization.k8s.io`,
          err,
        );
      }
      return review.status?.allowed === true && review.status.denied !== true;
    },
  };
}
