/**
 * The ConfigMaps and Secrets a Release names (values layers, Git and Helm credentials, a
 * Cluster's kubeconfig), read from the management cluster as the Release's own identity
 * (domain/tenancy/identity.ts → actingAs → the Impersonate-User header: no extra request).
 * What that identity may not read is a ReadRefusedError naming the object and the identity;
 * nothing is cached here, so one identity's read never serves another's.
 */
import {
  impersonatedUser,
  ReadRefusedError,
  type ActingIdentity,
  type NamedObject,
  type ReadRefusedBy,
} from '../../domain/tenancy/index.ts';
import { isKubeApiError, type KubeApiError } from './http.ts';
import { actingAs, type KubeClientConfig } from './kubeconfig.ts';
import { createManagementReader } from './management-reader.ts';

/** Reads as one identity. undefined: the object does not exist. */
export interface DataReader {
  configMapData(namespace: string, name: string): Promise<Record<string, string> | undefined>;
  /** base64-decoded. Never log or echo it. */
  secretData(namespace: string, name: string): Promise<Record<string, string> | undefined>;
}

/** A DataReader acting as `identity` on the management cluster. */
export type DataReaderFor = (identity: ActingIdentity) => DataReader;

export function createIdentityReads(managementKubeConfig: KubeClientConfig): DataReaderFor {
  return (identity) => {
    // The same connections; only the Impersonate-User header differs.
    const reader = createManagementReader(actingAs(managementKubeConfig, impersonatedUser(identity)));
    const refusedAs = async <T>(object: NamedObject, read: () => Promise<T>): Promise<T> => {
      try {
        return await read();
      } catch (error) {
        if (isKubeApiError(error, 403))
          throw new ReadRefusedError(identity, object, refusedBy(error), { cause: error });
        throw error;
      }
    };
    return {
      configMapData: (namespace, name) =>
        refusedAs({ kind: 'ConfigMap', namespace, name }, () => reader.configMapData(namespace, name)),
      secretData: (namespace, name) =>
        refusedAs({ kind: 'Secret', namespace, name }, () => reader.secretData(namespace, name)),
    };
  };
}

const IMPERSONATED_KINDS: ReadonlySet<string> = new Set([
  'serviceaccounts',
  'users',
  'groups',
  'uids',
  'userextras',
]);

/** The apiserver's impersonation filter names the impersonated kind in the Status details. */
function refusedBy(error: KubeApiError): ReadRefusedBy {
  const body = error.body as { message?: unknown; details?: { kind?: unknown } } | undefined;
  const kind = typeof body?.details?.kind === 'string' ? body.details.kind : '';
  const message = typeof body?.message === 'string' ? body.message : '';
  return IMPERSONATED_KINDS.has(kind) || message.includes('cannot impersonate') ? 'impersonation' : 'rbac';
}
