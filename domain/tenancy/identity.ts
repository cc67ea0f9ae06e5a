/**
 * Who convoy acts as when it works on a target for a Release ("who am I acting as"), decided
 * here and nowhere else.
 *
 * - On the management cluster (a Cluster with inCluster: true): the Release's ServiceAccount,
 *   `system:serviceaccount:<release namespace>:<spec.serviceAccountName>`, impersonated; or the
 *   installation's defaultServiceAccount in the Release's namespace; or, when neither is set,
 *   convoy's own credentials (as before per-Release identity existed).
 * - On a remote Cluster (a kubeconfig Secret, or EKS): the identity of those credentials. The
 *   Cluster's owner chose them; convoy does not impersonate on clusters it does not run in.
 */
import type { Release } from '../api/index.ts';
import type { TenancySettings } from './settings.ts';

export type ActingIdentity =
  /** Impersonated on the management cluster. */
  | {
      readonly kind: 'serviceAccount';
      readonly namespace: string;
      readonly name: string;
      readonly username: string;
    }
  /** convoy's own credentials on the management cluster (no serviceAccountName, no default). */
  | { readonly kind: 'controller' }
  /** The credentials of a remote Cluster (its kubeconfig's user, or the EKS token's IAM identity). */
  | { readonly kind: 'clusterCredentials'; readonly cluster: string };

export const serviceAccountUsername = (namespace: string, name: string): string =>
  `system:serviceaccount:${namespace}:${name}`;

/** The identity a Release acts as on the management cluster. */
export function inClusterIdentity(
  release: Release,
  settings: Pick<TenancySettings, 'defaultServiceAccount'>,
): ActingIdentity {
  const namespace = release.metadata.namespace ?? 'default';
  const name = release.spec.serviceAccountName ?? settings.defaultServiceAccount;
  if (name === undefined) return { kind: 'controller' };
  return { kind: 'serviceAccount', namespace, name, username: serviceAccountUsername(namespace, name) };
}

/** The identity a Release acts as on a remote Cluster. */
export function remoteIdentity(clusterNamespace: string, clusterName: string): ActingIdentity {
  return { kind: 'clusterCredentials', cluster: `${clusterNamespace}/${clusterName}` };
}

/** For messages: "as system:serviceaccount:team-a:deployer". */
export function describeIdentity(identity: ActingIdentity): string {
  switch (identity.kind) {
    case 'serviceAccount':
      return `as ${identity.username}`;
    case 'controller':
      return "as convoy's own identity (no serviceAccountName and no installation defaultServiceAccount)";
    case 'clusterCredentials':
      return `with the credentials of Cluster ${identity.cluster}`;
  }
}

/** The user to impersonate, or undefined to act with the credentials as they are. */
export function impersonatedUser(identity: ActingIdentity): string | undefined {
  return identity.kind === 'serviceAccount' ? identity.username : undefined;
}
