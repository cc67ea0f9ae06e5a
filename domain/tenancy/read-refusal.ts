/**
 * A read a Release causes on the management cluster (a values layer, Git or Helm credentials, a
 * Cluster's kubeconfig) is made as the Release's own identity (identity.ts), so a Release can
 * pull in only what its ServiceAccount may read. When the apiserver refuses it, the refusal
 * reaches status through the step that made the read (ValuesNotReady, SourceNotReady,
 * ClusterNotReady) with this message: the object, the identity and the missing right — never the
 * object's data.
 */
import { describeIdentity, type ActingIdentity } from './identity.ts';

/** An object a Release names and convoy reads for it. */
export interface NamedObject {
  readonly kind: 'Secret' | 'ConfigMap';
  readonly namespace: string;
  readonly name: string;
}

/**
 * `rbac`: the identity may not get the object; `impersonation`: the installation does not let
 * convoy act as that identity at all.
 */
export type ReadRefusedBy = 'rbac' | 'impersonation';

/** The Release's identity may not read what it names. Not terminal: a new RoleBinding fixes it. */
export class ReadRefusedError extends Error {
  override name = 'ReadRefusedError';
  readonly identity: ActingIdentity;
  readonly object: NamedObject;
  readonly refusedBy: ReadRefusedBy;
  constructor(
    identity: ActingIdentity,
    object: NamedObject,
    refusedBy: ReadRefusedBy,
    options?: ErrorOptions,
  ) {
    super(readRefusedMessage(identity, object, refusedBy), options);
    this.identity = identity;
    this.object = object;
    this.refusedBy = refusedBy;
  }
}

const RESOURCES: Record<NamedObject['kind'], string> = { Secret: 'secrets', ConfigMap: 'configmaps' };

export function readRefusedMessage(
  identity: ActingIdentity,
  object: NamedObject,
  refusedBy: ReadRefusedBy,
): string {
  const what = `${object.kind} ${object.namespace}/${object.name} cannot be read ${describeIdentity(identity)}`;
  if (refusedBy === 'impersonation') {
    return (
      `${what}: this installation does not let convoy act as that identity (impersonation Forbidden); ` +
      `ask the platform admin to allow impersonating the ServiceAccounts of namespace ${object.namespace}`
    );
  }
  const missing = `it may not get ${RESOURCES[object.kind]} in namespace ${object.namespace} (Forbidden)`;
  const fix =
    identity.kind === 'serviceAccount'
      ? `grant ${identity.username} get on this ${object.kind} (a Role with resourceNames: [${object.name}]), or name one it may read`
      : 'set spec.serviceAccountName to a ServiceAccount that may read it';
  return `${what}: ${missing}; ${fix}`;
}
