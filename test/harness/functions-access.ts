// What the runtime's functions may do, asked as them: a SelfSubjectAccessReview made with their own
// credential (runtime-env.ts functionsKc), so the apiserver judges the user and groups it really
// authenticates them as, through every binding that reaches them — never a guess of their name.
// Tests that take a verb from the functions' ClusterRole wait with it until the authorizer has seen
// the change.
import { AuthenticationV1Api, AuthorizationV1Api, type KubeConfig } from '@kubernetes/client-node';
import { API_GROUP } from '../../domain/api/common.ts';

export interface FunctionsAccess {
  readonly verb: string;
  readonly resource: string;
  readonly namespace: string;
  /** The API group; default convoy.dev. */
  readonly group?: string;
}

/** Whether the functions acting with `functionsKc` may `verb` `resource` in `namespace`. */
export async function functionsMay(
  functionsKc: KubeConfig,
  { verb, resource, namespace, group = API_GROUP }: FunctionsAccess,
): Promise<boolean> {
  const review = await functionsKc.makeApiClient(AuthorizationV1Api).createSelfSubjectAccessReview({
    body: { spec: { resourceAttributes: { group, resource, verb, namespace } } },
  });
  return review.status?.allowed === true;
}

/** The user name the apiserver knows the functions by (as its 403 messages name it). */
export async function functionsUserName(functionsKc: KubeConfig): Promise<string> {
  const review = await functionsKc.makeApiClient(AuthenticationV1Api).createSelfSubjectReview({
    body: { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' },
  });
  const username = review.status?.userInfo?.username;
  if (username === undefined || username === '')
    throw new Error("the apiserver named no user for the functions' credential (SelfSubjectReview)");
  return username;
}

/** The bearer token the functions send (to check that no message carries it). */
export function functionsToken(functionsKc: KubeConfig): string {
  const token = functionsKc.getCurrentUser()?.token;
  if (token === undefined || token === '') throw new Error("the functions' kubeconfig holds no bearer token");
  return token;
}
