/**
 * The installation's tenancy settings, as pure data. The composition roots read them from the
 * environment (functions/runtime/config.ts, `convoy dev`) and pass them in; nothing here reads
 * the environment itself.
 */
import { EksRolesSettingError, parseEksRoles, type EksRoleGrant } from './eks-roles.ts';
import {
  EgressSettingError,
  parseClusterNetworks,
  parseEgressAllow,
  type EgressPolicy,
} from '../egress/policy.ts';
export interface TenancySettings {
  /**
   * The ServiceAccount (in the Release's own namespace) that a Release without
   * spec.serviceAccountName acts as, like Flux's `--default-service-account`. undefined: such a
   * Release acts with convoy's own credentials on the management cluster — what every Release
   * could do before per-Release identity existed, and what a locked-down install must not allow.
   */
  readonly defaultServiceAccount: string | undefined;
  /**
   * Namespaces whose Releases may target the management cluster itself (`Cluster.spec.inCluster:
   * true`). 'all': every namespace (the default outside AWS, as before).
   */
  readonly inClusterNamespaces: ReadonlySet<string> | 'all';
  /**
   * Whether a reference may name an object in another namespace (a Release's Cluster,
   * GitRepository or values layer; a Cluster's kubeconfig Secret). Off by default, like Flux's
   * `--no-cross-namespace-refs` lockdown.
   */
  readonly crossNamespaceRefs: boolean;
  /**
   * Which IAM roles the EKS Clusters (`Cluster.spec.eks`) of each namespace may use, the
   * functions' own role (a Cluster without roleArn) only where named (eks-roles.ts). Empty: none
   * — an installation says which namespace may reach which EKS cluster as whom.
   */
  readonly eksRoles: readonly EksRoleGrant[];
  /**
   * OCI registries (`host` or `host:port`) a Release may reach over plain HTTP with `insecure: true`
   * ('all': any). undefined or empty: none — every registry is HTTPS, like a Kubernetes node's
   * container runtime without an insecure-registries entry.
   */
  readonly insecureRegistries?: ReadonlySet<string> | 'all' | undefined;
  /**
   * What the outbound clients (Git, Helm repositories, OCI registries, ECR) may connect to beyond
   * public addresses (domain/egress/policy.ts): `egressAllow` entries and the cluster's networks.
   * undefined: the strict policy — public addresses only.
   */
  readonly egress?: EgressPolicy | undefined;
}

/**
 * What an installation that sets nothing gets: Releases work as they always did on the
 * management cluster; no cross-namespace references; no EKS role for anyone.
 */
export const DEFAULT_TENANCY: TenancySettings = Object.freeze({
  defaultServiceAccount: undefined,
  inClusterNamespaces: 'all',
  crossNamespaceRefs: false,
  eksRoles: Object.freeze([]),
});

/** A bad installation setting; the message names the variable. */
export class TenancySettingsError extends Error {
  override name = 'TenancySettingsError';
}

/** The settings' names; a composition root passes its own (e.g. the environment variables) for messages. */
type SettingName =
  | 'defaultServiceAccount'
  | 'inClusterNamespaces'
  | 'crossNamespaceRefs'
  | 'eksRoles'
  | 'insecureRegistries'
  | 'egressAllow'
  | 'clusterNetworks';

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/;
const REGISTRY_HOST = /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?(:[0-9]{1,5})?$/;

/**
 * Settings from their textual form (environment variables, ConfigMap entries):
 * - `defaultServiceAccount`: a ServiceAccount name, or empty for none;
 * - `inClusterNamespaces`: `*` (all), empty (none) or a comma-separated list of namespaces;
 * - `crossNamespaceRefs`: `true` or `false`;
 * - `eksRoles`: `<namespace>=<role>[,<role>…]` entries separated by `;` (eks-roles.ts);
 * - `insecureRegistries`: `*` (any), empty (none) or a comma-separated list of `host[:port]`;
 * - `egressAllow`: CIDR, IP[:port], [IPv6]:port, host[:port] or *.domain[:port] entries, comma-separated
 *   (domain/egress/policy.ts); empty: public addresses only;
 * - `clusterNetworks`: the cluster's Service and Pod CIDRs, comma-separated; empty: none known.
 */
export function parseTenancySettings(
  text: {
    defaultServiceAccount?: string | undefined;
    inClusterNamespaces?: string | undefined;
    crossNamespaceRefs?: string | undefined;
    eksRoles?: string | undefined;
    insecureRegistries?: string | undefined;
    egressAllow?: string | undefined;
    clusterNetworks?: string | undefined;
  },
  given: Partial<Record<SettingName, string>> = {},
): TenancySettings {
  const names: Record<SettingName, string> = {
    defaultServiceAccount: given.defaultServiceAccount ?? 'defaultServiceAccount',
    inClusterNamespaces: given.inClusterNamespaces ?? 'inClusterNamespaces',
    crossNamespaceRefs: given.crossNamespaceRefs ?? 'crossNamespaceRefs',
    eksRoles: given.eksRoles ?? 'eksRoles',
    insecureRegistries: given.insecureRegistries ?? 'insecureRegistries',
    egressAllow: given.egressAllow ?? 'egressAllow',
    clusterNetworks: given.clusterNetworks ?? 'clusterNetworks',
  };
  const sa = text.defaultServiceAccount?.trim() ?? '';
  if (sa !== '' && (!DNS_SUBDOMAIN.test(sa) || sa.length > 253)) {
    throw new TenancySettingsError(
      `${names.defaultServiceAccount}: ${JSON.stringify(sa)} is not a ServiceAccount name`,
    );
  }
  let inCluster: TenancySettings['inClusterNamespaces'] = DEFAULT_TENANCY.inClusterNamespaces;
  if (text.inClusterNamespaces !== undefined) {
    const raw = text.inClusterNamespaces.trim();
    if (raw === '*') inCluster = 'all';
    else {
      const list = raw === '' ? [] : raw.split(',').map((n) => n.trim());
      const bad = list.find((n) => !DNS_LABEL.test(n) || n.length > 63);
      if (bad !== undefined) {
        throw new TenancySettingsError(
          `${names.inClusterNamespaces}: ${JSON.stringify(bad)} is not a namespace name (use * for all, or a comma-separated list)`,
        );
      }
      inCluster = new Set(list);
    }
  }
  const cross = text.crossNamespaceRefs?.trim().toLowerCase();
  if (cross !== undefined && cross !== '' && cross !== 'true' && cross !== 'false') {
    throw new TenancySettingsError(
      `${names.crossNamespaceRefs}: must be true or false, not ${JSON.stringify(text.crossNamespaceRefs)}`,
    );
  }
  let eksRoles: readonly EksRoleGrant[] = DEFAULT_TENANCY.eksRoles;
  try {
    if (text.eksRoles !== undefined) eksRoles = parseEksRoles(text.eksRoles, names.eksRoles);
  } catch (error) {
    if (error instanceof EksRolesSettingError)
      throw new TenancySettingsError(error.message, { cause: error });
    throw error;
  }
  let insecure: TenancySettings['insecureRegistries'];
  const insecureText = text.insecureRegistries?.trim() ?? '';
  if (insecureText === '*') insecure = 'all';
  else if (insecureText !== '') {
    const hosts = insecureText.split(',').map((h) => h.trim().toLowerCase());
    const bad = hosts.find((h) => !REGISTRY_HOST.test(h));
    if (bad !== undefined) {
      throw new TenancySettingsError(
        `${names.insecureRegistries}: ${JSON.stringify(bad)} is not a registry host[:port] (use * for any, or a comma-separated list)`,
      );
    }
    insecure = new Set(hosts);
  }
  let egress: EgressPolicy | undefined;
  try {
    if ((text.egressAllow ?? '').trim() !== '' || (text.clusterNetworks ?? '').trim() !== '') {
      egress = {
        allow: parseEgressAllow(text.egressAllow, names.egressAllow),
        clusterNetworks: parseClusterNetworks(text.clusterNetworks, names.clusterNetworks),
      };
    }
  } catch (error) {
    if (error instanceof EgressSettingError) throw new TenancySettingsError(error.message, { cause: error });
    throw error;
  }
  return {
    defaultServiceAccount: sa === '' ? undefined : sa,
    inClusterNamespaces: inCluster,
    crossNamespaceRefs:
      cross === undefined || cross === '' ? DEFAULT_TENANCY.crossNamespaceRefs : cross === 'true',
    eksRoles,
    ...(insecure !== undefined ? { insecureRegistries: insecure } : {}),
    ...(egress !== undefined ? { egress } : {}),
  };
}

/** Whether the installation lets Releases reach `registry` (host[:port]) over plain HTTP. */
export function insecureRegistryAllowed(
  settings: Pick<TenancySettings, 'insecureRegistries'>,
  registry: string,
): boolean {
  const allowed = settings.insecureRegistries;
  if (allowed === undefined) return false;
  return allowed === 'all' || allowed.has(registry.toLowerCase());
}
