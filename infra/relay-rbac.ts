/**
 * The relay's RBAC: exactly what relay/ calls on the management cluster (relay-manifests.ts lists
 * each call; proven with the ServiceAccount's own token in test/integration/tenancy-relay.test.ts).
 */
import type { KubeManifest } from './kube-manifest.ts';

/** The metadata of a relay object: its name, the installation namespace when namespaced, the relay's labels. */
export type Meta = (
  name: string,
  namespaced: boolean,
) => { name: string; namespace?: string; labels: Record<string, string> };

/** The relay's ClusterRole (what relay/ reads cluster-wide) and its Role on the installation namespace's Leases, each bound to its ServiceAccount. */
export function relayRbac({
  watchSecrets,
  namespace,
  meta,
  name,
  serviceAccount,
}: {
  watchSecrets: boolean | undefined;
  namespace: string;
  meta: Meta;
  name: string;
  serviceAccount: string;
}): KubeManifest[] {
  return [
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      metadata: meta(name, false),
      rules: [
        // No patch/update: the HTTP API writes (sync, pin, suspend) with the caller's own token.
        { apiGroups: ['convoy.dev'], resources: ['releases'], verbs: ['get', 'list', 'watch'] },
        // releasesets: the relay sends each ReleaseSet its fleet messages (watched only with a fleet queue).
        // notifications: a Release whose record there is behind is sent to notify (only with a notify queue).
        {
          apiGroups: ['convoy.dev'],
          resources: [
            'clusters',
            'mutations',
            'lifecycles',
            'gitrepositories',
            'releasesets',
            'notifications',
          ],
          verbs: ['list', 'watch'],
        },
        // Metadata-only informers; never get. Secrets only when watchSecrets (list returns their data).
        { apiGroups: [''], resources: ['configmaps'], verbs: ['list', 'watch'] },
        ...(watchSecrets === true
          ? [{ apiGroups: [''], resources: ['secrets'], verbs: ['list', 'watch'] }]
          : []),
        { apiGroups: ['authentication.k8s.io'], resources: ['tokenreviews'], verbs: ['create'] },
        { apiGroups: ['authorization.k8s.io'], resources: ['subjectaccessreviews'], verbs: ['create'] },
      ],
    },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: meta(name, false),
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name },
      subjects: [{ kind: 'ServiceAccount', name: serviceAccount, namespace }],
    },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'Role',
      metadata: meta(name, true),
      rules: [
        {
          apiGroups: ['coordination.k8s.io'],
          resources: ['leases'],
          verbs: ['get', 'list', 'create', 'update', 'deletecollection'],
        },
      ],
    },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'RoleBinding',
      metadata: meta(name, true),
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name },
      subjects: [{ kind: 'ServiceAccount', name: serviceAccount, namespace }],
    },
  ];
}
