/**
 * The installation's settings, generated in ONE place for every install path: the relay's
 * ConfigMap (deploy/, the Helm chart, `convoy install --print`, the construct's manifests), the
 * functions' environment (the construct) and `convoy dev` (which applies the ConfigMap and runs the
 * relay and the functions from it). The functions and the relay parse them with the same
 * platform/tenancy-config.ts.
 *
 * `tenantNamespaces` is the one setting that also shapes RBAC (functions-rbac.ts): the functions may
 * impersonate ServiceAccounts only in these namespaces, so a Release outside them cannot act on the
 * management cluster at all. kube-system, the other kube-* namespaces and convoy's own namespace are
 * refused: impersonating their ServiceAccounts (e.g. kube-system:clusterrole-aggregation-controller,
 * or convoy-relay) would hand the functions those rights.
 */
import { parseTenancySettings, TenancySettingsError } from '../domain/tenancy/settings.ts';

export class ManifestError extends Error {
  override name = 'ManifestError';
}

/** The ServiceAccount Releases without serviceAccountName act as, unless told otherwise (Flux's lockdown value). */
export const DEFAULT_SERVICE_ACCOUNT = 'default';

/** Namespaces whose ServiceAccounts convoy never impersonates, whatever the installation says. */
export const SYSTEM_NAMESPACES: readonly string[] = ['kube-system', 'kube-public', 'kube-node-lease'];

export interface TenancyManifestOptions {
  /** CONVOY_DEFAULT_SERVICE_ACCOUNT; default DEFAULT_SERVICE_ACCOUNT. '' acts with the functions' identity. */
  readonly defaultServiceAccount?: string;
  /**
   * Namespaces whose Releases may act on the management cluster: the functions get `impersonate` on
   * ServiceAccounts there (a RoleBinding each) and nowhere else. Default none. Never kube-system,
   * kube-public, kube-node-lease or the installation namespace.
   */
  readonly tenantNamespaces?: readonly string[];
  /** CONVOY_IN_CLUSTER_NAMESPACES: '*', '' (none) or a comma-separated list; default the tenant namespaces. */
  readonly inClusterNamespaces?: string;
  /** CONVOY_CROSS_NAMESPACE_REFS; default false. */
  readonly crossNamespaceRefs?: boolean;
  /**
   * CONVOY_INSECURE_REGISTRIES: OCI registries (`host[:port]`, comma-separated, or `*`) Releases may
   * reach over plain HTTP with `insecure: true`. Default '' (none). Checked when the manifests are
   * made (`convoy install --insecure-registries`, the chart's settings, the construct's tenancy prop).
   */
  readonly insecureRegistries?: string;
  /**
   * CONVOY_EGRESS_ALLOW: what Git, Helm, OCI and ECR requests may reach beyond public addresses —
   * CIDR, IP[:port], [IPv6]:port, host[:port] or *.domain entries, comma-separated
   * (domain/egress/policy.ts). Default '' (public addresses only). Written only when set.
   */
  readonly egressAllow?: string;
  /**
   * CONVOY_CLUSTER_NETWORKS: the management cluster's Service and Pod CIDRs, refused to outbound
   * requests even inside an allowed CIDR. Default none known. Written only when set.
   */
  readonly clusterNetworks?: string;
}

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;

/** The tenant namespaces, checked: names, no duplicates, none of the system or installation namespaces. */
export function tenantNamespacesOf(
  tenancy: TenancyManifestOptions | undefined,
  installationNamespace: string,
): string[] {
  const list = [...(tenancy?.tenantNamespaces ?? [])];
  const seen = new Set<string>();
  for (const ns of list) {
    if (!DNS_LABEL.test(ns))
      throw new ManifestError(
        `tenantNamespaces: ${JSON.stringify(ns)} is not a namespace name (RFC 1123 label)`,
      );
    if (SYSTEM_NAMESPACES.includes(ns)) {
      throw new ManifestError(
        `tenantNamespaces: ${ns} may not be a tenant namespace: impersonating its ServiceAccounts (e.g. kube-system:clusterrole-aggregation-controller) would make convoy's functions cluster-admin in all but name`,
      );
    }
    if (ns === installationNamespace) {
      throw new ManifestError(
        `tenantNamespaces: ${ns} is convoy's own installation namespace; impersonating its ServiceAccounts would hand Releases the relay's rights. Put Releases that act on the management cluster in a namespace of their own`,
      );
    }
    if (seen.has(ns)) throw new ManifestError(`tenantNamespaces: ${ns} is listed twice`);
    seen.add(ns);
  }
  return list;
}

/** The installation's tenancy settings as entries of the relay's ConfigMap and the functions' environment. */
export function tenancyEnvironment(
  tenancy: TenancyManifestOptions | undefined,
  namespace: string,
): { name: string; value: string }[] {
  const tenants = tenantNamespacesOf(tenancy, namespace);
  return [
    {
      name: 'CONVOY_DEFAULT_SERVICE_ACCOUNT',
      value: tenancy?.defaultServiceAccount ?? DEFAULT_SERVICE_ACCOUNT,
    },
    { name: 'CONVOY_TENANT_NAMESPACES', value: tenants.join(',') },
    { name: 'CONVOY_IN_CLUSTER_NAMESPACES', value: tenancy?.inClusterNamespaces ?? tenants.join(',') },
    { name: 'CONVOY_CROSS_NAMESPACE_REFS', value: String(tenancy?.crossNamespaceRefs ?? false) },
    { name: 'CONVOY_INSECURE_REGISTRIES', value: insecureRegistriesOf(tenancy) },
    ...egressEnvironment(tenancy),
  ];
}

/**
 * CONVOY_EGRESS_ALLOW and CONVOY_CLUSTER_NETWORKS when the install sets them (left out otherwise:
 * the functions then apply the strict policy), checked as the functions parse them.
 */
export function egressEnvironment(
  tenancy: TenancyManifestOptions | undefined,
): { name: string; value: string }[] {
  const allow = tenancy?.egressAllow?.trim() ?? '';
  const networks = tenancy?.clusterNetworks?.trim() ?? '';
  try {
    parseTenancySettings({ egressAllow: allow, clusterNetworks: networks });
  } catch (error) {
    if (error instanceof TenancySettingsError) throw new ManifestError(error.message, { cause: error });
    throw error;
  }
  return [
    ...(allow !== '' ? [{ name: 'CONVOY_EGRESS_ALLOW', value: allow }] : []),
    ...(networks !== '' ? [{ name: 'CONVOY_CLUSTER_NETWORKS', value: networks }] : []),
  ];
}

/** CONVOY_INSECURE_REGISTRIES, checked as the functions parse it (domain/tenancy/settings.ts); '' is none. */
export function insecureRegistriesOf(tenancy: TenancyManifestOptions | undefined): string {
  const value = tenancy?.insecureRegistries?.trim() ?? '';
  try {
    parseTenancySettings({ insecureRegistries: value });
  } catch (error) {
    if (error instanceof TenancySettingsError) throw new ManifestError(error.message, { cause: error });
    throw error;
  }
  return value;
}
