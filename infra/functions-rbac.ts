/**
 * The functions' identity on the management cluster: exactly what functions/ calls there, bound
 * to FUNCTIONS_GROUP (on AWS the EKS access entry of the function roles maps to it; `convoy dev`
 * and the integration harness authenticate as a user of that group). Writing rendered objects is
 * not among it: a Release writes as its ServiceAccount (impersonation), so these rights never
 * reach a tenant.
 *
 * Impersonation is granted per tenant namespace (a RoleBinding to FUNCTIONS_IMPERSONATE_ROLE in
 * each), never cluster-wide: RBAC cannot narrow a ClusterRoleBinding's `impersonate` to a namespace,
 * and a cluster-wide grant let the functions act as kube-system:clusterrole-aggregation-controller,
 * whose rights include adding a rule for every verb on every resource to any ClusterRole. An installation without tenant namespaces
 * lets no Release act on the management cluster.
 */
import { tenantNamespacesOf, type TenancyManifestOptions } from './installation-settings.ts';
import type { KubeManifest } from './kube-manifest.ts';

/** The Kubernetes group of the functions' identity (EKS access entry kubernetesGroups). */
export const FUNCTIONS_GROUP = 'convoy:functions';
export const FUNCTIONS_ROLE_NAME = 'convoy-functions';
/** The ClusterRole holding only `impersonate serviceaccounts`, bound per tenant namespace. */
export const FUNCTIONS_IMPERSONATE_ROLE = 'convoy-functions-impersonate';

const RBAC = 'rbac.authorization.k8s.io/v1';

/**
 * `serviceAccount`: also bind a ServiceAccount of the installation namespace, for functions that
 * authenticate as one (`convoy dev` on a cluster where it cannot mint a user of FUNCTIONS_GROUP).
 */
export function functionsRbac(
  namespace: string,
  labels: Record<string, string>,
  tenancy?: TenancyManifestOptions,
  serviceAccount?: string,
): KubeManifest[] {
  const subjects: Record<string, string>[] = [
    { kind: 'Group', name: FUNCTIONS_GROUP, apiGroup: 'rbac.authorization.k8s.io' },
    ...(serviceAccount === undefined ? [] : [{ kind: 'ServiceAccount', name: serviceAccount, namespace }]),
  ];
  const clusterRoleRef = (name: string) => ({
    apiGroup: 'rbac.authorization.k8s.io',
    kind: 'ClusterRole',
    name,
  });
  return [
    {
      apiVersion: RBAC,
      kind: 'ClusterRole',
      metadata: { name: FUNCTIONS_ROLE_NAME, labels },
      rules: [
        // Releases: the reconcile reads them (and lists a namespace's for cluster waves); each loop applies its status slice.
        { apiGroups: ['convoy.dev'], resources: ['releases'], verbs: ['get', 'list'] },
        { apiGroups: ['convoy.dev'], resources: ['releases/status'], verbs: ['patch'] },
        // The fleet function: reads its ReleaseSet, applies its status (convoy-releaseset),
        // and writes the child Releases (server-side apply, delete, orphan = patch of ownerReferences).
        // releasesets/finalizers: a child's owner reference sets blockOwnerDeletion, which the
        // OwnerReferencesPermissionEnforcement admission plugin allows only to who may update them.
        { apiGroups: ['convoy.dev'], resources: ['releasesets'], verbs: ['get', 'list', 'watch'] },
        { apiGroups: ['convoy.dev'], resources: ['releasesets/status'], verbs: ['get', 'patch', 'update'] },
        { apiGroups: ['convoy.dev'], resources: ['releasesets/finalizers'], verbs: ['update'] },
        {
          apiGroups: ['convoy.dev'],
          resources: ['releases'],
          verbs: ['create', 'patch', 'update', 'delete'],
        },
        {
          apiGroups: ['convoy.dev'],
          resources: ['clusters', 'gitrepositories', 'mutations', 'lifecycles'],
          verbs: ['get', 'list'],
        },
        // Namespaces, get only: a Release may depend on another namespace's objects only when that
        // namespace's labels allow it (domain/dependencies/tenancy.ts).
        { apiGroups: [''], resources: ['namespaces'], verbs: ['get'] },
        // The notify function: reads the Notifications of a Release's namespace and applies its status
        // (convoy-notify); destination Secrets are read as the Release's ServiceAccount, like the rest.
        { apiGroups: ['convoy.dev'], resources: ['notifications'], verbs: ['get', 'list'] },
        { apiGroups: ['convoy.dev'], resources: ['notifications/status'], verbs: ['patch'] },
        // No ConfigMap or Secret: values layers, kubeconfig Secrets and Git/Helm credentials are read
        // as the Release's ServiceAccount (adapters/kube/identity-reads.ts).
        // Events about a Release, in the Release's namespace (adapters/kube/events.ts: create, then on a
        // repeat get + merge-patch of its series).
        { apiGroups: ['events.k8s.io'], resources: ['events'], verbs: ['create', 'get', 'patch'] },
      ],
    },
    {
      apiVersion: RBAC,
      kind: 'ClusterRoleBinding',
      metadata: { name: FUNCTIONS_ROLE_NAME, labels },
      roleRef: clusterRoleRef(FUNCTIONS_ROLE_NAME),
      subjects,
    },
    {
      apiVersion: RBAC,
      kind: 'ClusterRole',
      metadata: { name: FUNCTIONS_IMPERSONATE_ROLE, labels },
      // Granted only through RoleBindings in the tenant namespaces (below): a Release acts as its ServiceAccount.
      rules: [{ apiGroups: [''], resources: ['serviceaccounts'], verbs: ['impersonate'] }],
    },
    ...tenantNamespacesOf(tenancy, namespace).map((tenant): KubeManifest => ({
      apiVersion: RBAC,
      kind: 'RoleBinding',
      metadata: { name: FUNCTIONS_IMPERSONATE_ROLE, namespace: tenant, labels },
      roleRef: clusterRoleRef(FUNCTIONS_IMPERSONATE_ROLE),
      subjects,
    })),
    {
      apiVersion: RBAC,
      kind: 'Role',
      metadata: { name: FUNCTIONS_ROLE_NAME, namespace, labels },
      rules: [
        {
          apiGroups: ['coordination.k8s.io'],
          resources: ['leases'],
          verbs: ['get', 'list', 'create', 'update', 'patch', 'delete', 'deletecollection'],
        },
      ],
    },
    {
      apiVersion: RBAC,
      kind: 'RoleBinding',
      metadata: { name: FUNCTIONS_ROLE_NAME, namespace, labels },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: FUNCTIONS_ROLE_NAME },
      subjects,
    },
  ];
}
