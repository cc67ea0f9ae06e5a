import { parseTenancySettings, type TenancySettings } from '../domain/tenancy/settings.ts';

/**
 * The installation's tenancy settings from the environment (the construct, the install
 * manifests' ConfigMap, or `convoy dev`):
 * - CONVOY_DEFAULT_SERVICE_ACCOUNT: the ServiceAccount a Release without serviceAccountName acts as;
 * - CONVOY_IN_CLUSTER_NAMESPACES: `*`, empty (none), or namespaces that may use `inCluster: true`;
 * - CONVOY_CROSS_NAMESPACE_REFS: `true` to allow references into other namespaces;
 * - CONVOY_EKS_ROLES: which IAM roles each namespace's EKS Clusters may use,
 *   `<namespace>=<role ARN or pattern>[,…];…`, `self` for the functions' own role
 *   (domain/tenancy/eks-roles.ts); unset or empty: none;
 * - CONVOY_INSECURE_REGISTRIES: OCI registries (`host[:port]`, or `*`) a Release may reach over
 *   plain HTTP with `insecure: true`; unset or empty: none;
 * - CONVOY_EGRESS_ALLOW: what the outbound clients may reach beyond public addresses (CIDR,
 *   IP[:port], host[:port], *.domain entries; domain/egress/policy.ts); unset or empty: public only;
 * - CONVOY_CLUSTER_NETWORKS: the cluster's Service and Pod CIDRs, refused even inside an allowed CIDR.
 * Unset variables keep DEFAULT_TENANCY. A malformed value fails the container's start, naming it.
 */
export function tenancyFromEnv(env: Record<string, string | undefined>): TenancySettings {
  return parseTenancySettings(
    {
      defaultServiceAccount: env.CONVOY_DEFAULT_SERVICE_ACCOUNT,
      inClusterNamespaces: env.CONVOY_IN_CLUSTER_NAMESPACES,
      crossNamespaceRefs: env.CONVOY_CROSS_NAMESPACE_REFS,
      eksRoles: env.CONVOY_EKS_ROLES,
      insecureRegistries: env.CONVOY_INSECURE_REGISTRIES,
      egressAllow: env.CONVOY_EGRESS_ALLOW,
      clusterNetworks: env.CONVOY_CLUSTER_NETWORKS,
    },
    {
      defaultServiceAccount: 'CONVOY_DEFAULT_SERVICE_ACCOUNT',
      inClusterNamespaces: 'CONVOY_IN_CLUSTER_NAMESPACES',
      crossNamespaceRefs: 'CONVOY_CROSS_NAMESPACE_REFS',
      eksRoles: 'CONVOY_EKS_ROLES',
      insecureRegistries: 'CONVOY_INSECURE_REGISTRIES',
      egressAllow: 'CONVOY_EGRESS_ALLOW',
      clusterNetworks: 'CONVOY_CLUSTER_NETWORKS',
    },
  );
}
