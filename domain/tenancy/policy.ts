/**
 * The installation's tenancy policy: which namespaces may target the management cluster itself,
 * and whether a reference may cross namespaces. Pure; the adapters call it before they read
 * what a reference names, and a refusal reaches status through the step that followed the
 * reference (ClusterNotReady, SourceNotReady, ValuesNotReady), naming the policy.
 */
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
export function referencedNamespace(ref: Reference, settings: Pick<TenancySettings, 'crossNamespaceRefs'>): string {
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
