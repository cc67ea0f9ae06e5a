// The installation settings `convoy dev` installs (dev/shipped-identities.ts writes them to the
// relay ConfigMap, from which the relay and the functions read them). Locked down by default, as
// a multi-tenant install should be: Releases without serviceAccountName act as `default` of their
// namespace, no cross-namespace references, only the tenant namespaces (the examples' and those of
// --tenant-namespaces) may act on the cluster. Flags win over the CONVOY_* variables, which win
// over the defaults; --open-tenancy allows every namespace inCluster and cross-namespace references.
// CONVOY_INSECURE_REGISTRIES (OCI registries reachable over plain HTTP), CONVOY_EGRESS_ALLOW and
// CONVOY_CLUSTER_NETWORKS (the egress policy) are passed on when set; convoy dev adds its own Git
// server and registry to the egress allow list (withEgressAllow) and says so in its banner.
import { TenancySettingsError } from '../domain/tenancy/settings.ts';
import type { TenancyManifestOptions } from '../infra/relay-manifests.ts';

export interface DevSettingFlags {
  readonly 'tenant-namespaces'?: string | undefined;
  readonly 'default-service-account'?: string | undefined;
  readonly 'in-cluster-namespaces'?: string | undefined;
  readonly 'cross-namespace-refs'?: boolean | undefined;
  readonly 'open-tenancy'?: boolean | undefined;
  readonly 'watch-secrets'?: boolean | undefined;
}

export interface DevSettings {
  readonly tenancy: TenancyManifestOptions & { readonly tenantNamespaces: readonly string[] };
  readonly watchSecrets: boolean;
}

export const devSettingsUsage = `  --tenant-namespaces a,b     more namespaces whose Releases may act on the cluster (as their
                              ServiceAccount); the examples namespace always is one
  --default-service-account   the ServiceAccount a Release without one acts as (default: default;
                              CONVOY_DEFAULT_SERVICE_ACCOUNT); '' acts as the functions, which may write nothing
  --in-cluster-namespaces     namespaces that may use inCluster Clusters: a,b or * (default: the tenant namespaces)
  --cross-namespace-refs      allow references into other namespaces (default off; CONVOY_CROSS_NAMESPACE_REFS)
  --open-tenancy              --in-cluster-namespaces '*' and --cross-namespace-refs: for trying things out
  --watch-secrets             let the relay list/watch Secrets (it can then read them) to react to labelled ones at once`;

export function devSettings(
  flags: DevSettingFlags,
  env: Record<string, string | undefined>,
  examplesNamespace: string,
): DevSettings {
  const extra = (flags['tenant-namespaces'] ?? '')
    .split(',')
    .map((n) => n.trim())
    .filter((n) => n !== '');
  const tenantNamespaces = [examplesNamespace, ...extra.filter((n) => n !== examplesNamespace)];
  const cross =
    flags['cross-namespace-refs'] === true || flags['open-tenancy'] === true
      ? 'true'
      : env['CONVOY_CROSS_NAMESPACE_REFS']?.trim().toLowerCase();
  if (cross !== undefined && cross !== '' && cross !== 'true' && cross !== 'false') {
    throw new TenancySettingsError(
      `CONVOY_CROSS_NAMESPACE_REFS: must be true or false, not ${JSON.stringify(cross)}`,
    );
  }
  const inCluster =
    flags['open-tenancy'] === true
      ? '*'
      : (flags['in-cluster-namespaces'] ?? env['CONVOY_IN_CLUSTER_NAMESPACES']);
  return {
    tenancy: {
      tenantNamespaces,
      defaultServiceAccount:
        flags['default-service-account'] ?? env['CONVOY_DEFAULT_SERVICE_ACCOUNT'] ?? 'default',
      ...(inCluster !== undefined ? { inClusterNamespaces: inCluster } : {}),
      crossNamespaceRefs: cross === 'true',
      ...(env['CONVOY_INSECURE_REGISTRIES'] !== undefined
        ? { insecureRegistries: env['CONVOY_INSECURE_REGISTRIES'] }
        : {}),
      ...(env['CONVOY_EGRESS_ALLOW'] !== undefined ? { egressAllow: env['CONVOY_EGRESS_ALLOW'] } : {}),
      ...(env['CONVOY_CLUSTER_NETWORKS'] !== undefined
        ? { clusterNetworks: env['CONVOY_CLUSTER_NETWORKS'] }
        : {}),
    },
    watchSecrets: flags['watch-secrets'] === true,
  };
}

/** An egress allow list (CONVOY_EGRESS_ALLOW's form) with `hosts` added: convoy dev's own servers on loopback. */
export function withEgressAllow(current: string | undefined, hosts: readonly string[]): string {
  const list = (current ?? '')
    .split(',')
    .map((h) => h.trim())
    .filter((h) => h !== '');
  return [...list, ...hosts.filter((h) => !list.includes(h))].join(',');
}
