/**
 * The installation's tenancy policy: which namespaces may target the management cluster itself,
 * which IAM roles a namespace's EKS Clusters may use, and whether a reference may cross namespaces. Pure; the adapters call it before they read
 * what a reference names, and a refusal reaches status through the step that followed the
 * reference (ClusterNotReady, SourceNotReady, ValuesNotReady), naming the policy.
 */
import { eksRoleAllowed, eksRolesOf, FUNCTION_ROLE } from './eks-roles.ts';
import type { TenancySettings } from './settings.ts';

/** A reference or target the installation's policy does not allow. Not terminal: a changed policy or spec fixes it. */
export class PolicyRefusedError extends Error {
  override name = 'PolicyRefusedError';
  /** The policy that refused, e.g. `crossNamespaceRefs` or `inClusterNamespaces`. */
  readonly policy: string;
  constructor(policy: string, message: string) {
    super(message);
    this.policy = policy;
  }
}

export interface Reference {
  /** What refers, for the message: e.g. `spec.cluster` of Release team-a/web. */
  readonly field: string;
  /** The namespace of the object that holds the reference. */
  readonly fromNamespace: string;
  readonly kind: string;
  readonly name: string;
  /** The namespace the reference names; undefined: the referring object's own. */
  readonly namespace: string | undefined;
}

/** The namespace a reference resolves to; throws PolicyRefusedError when it crosses namespaces and that is not allowed. */
export function referencedNamespace(
  ref: Reference,
  settings: Pick<TenancySettings, 'crossNamespaceRefs'>,
): string {
  const namespace = ref.namespace ?? ref.fromNamespace;
  if (namespace === ref.fromNamespace || settings.crossNamespaceRefs) return namespace;
  throw new PolicyRefusedError(
    'crossNamespaceRefs',
    `${ref.field} names ${ref.kind} ${namespace}/${ref.name} in another namespace, which this installation does not allow ` +
      `(policy crossNamespaceRefs: false); use a ${ref.kind} in namespace ${ref.fromNamespace}`,
  );
}

/** Throws PolicyRefusedError unless Releases of `releaseNamespace` may target the management cluster itself. */
export function assertInClusterAllowed(
  releaseNamespace: string,
  cluster: string,
  settings: Pick<TenancySettings, 'inClusterNamespaces'>,
): void {
  const allowed = settings.inClusterNamespaces;
  if (allowed === 'all' || allowed.has(releaseNamespace)) return;
  throw new PolicyRefusedError(
    'inClusterNamespaces',
    `Cluster ${cluster} has inCluster: true, and Releases in namespace ${releaseNamespace} may not target the management cluster ` +
      `(policy inClusterNamespaces: ${allowed.size === 0 ? 'none' : [...allowed].sort().join(', ')}); use a Cluster with its own credentials`,
  );
}

/**
 * Throws PolicyRefusedError unless the EKS Cluster `cluster` may use `roleArn` (undefined: the
 * functions' own IAM role) for a Release of `releaseNamespace`: both the Cluster's namespace
 * (which names the role) and the Release's (which acts through it) must be allowed it by
 * `eksRoles`. Checked before any token is minted or any role assumed.
 */
export function assertEksRoleAllowed(
  target: {
    readonly clusterNamespace: string;
    readonly cluster: string;
    readonly roleArn: string | undefined;
    readonly releaseNamespace: string;
  },
  settings: Pick<TenancySettings, 'eksRoles'>,
): void {
  const role =
    target.roleArn === undefined
      ? "convoy's own IAM role (spec.eks has no roleArn)"
      : `role ${target.roleArn}`;
  for (const namespace of new Set([target.clusterNamespace, target.releaseNamespace])) {
    if (eksRoleAllowed(namespace, target.roleArn, settings.eksRoles)) continue;
    const granted = eksRolesOf(namespace, settings.eksRoles);
    const shown =
      granted.length === 0
        ? 'none'
        : granted.map((r) => (r === FUNCTION_ROLE ? `${FUNCTION_ROLE} (convoy's own role)` : r)).join(', ');
    throw new PolicyRefusedError(
      'eksRoles',
      `Cluster ${target.clusterNamespace}/${target.cluster} would reach its EKS cluster as ${role}, which namespace ${namespace} may not use ` +
        `(policy eksRoles: ${namespace} may use ${shown}); set spec.eks.roleArn to a role allowed for ${namespace}, or ask the platform admin to allow it (CONVOY_EKS_ROLES, the construct's eksTargets.namespaceRoles)`,
    );
  }
}
