import type { DataReader } from '../kube/identity-reads.ts';
import { dockerConfigCredentials, type RegistryCredentials } from '../../domain/source/oci.ts';

export type GitAuth = { username: string; password: string } | { bearerToken: string };

/**
 * Reads git/helm credentials from a Secret, as the Release's identity (the caller passes the
 * reader acting as it); errors name the Secret and keys, never the values.
 */
export async function credentialsFrom(
  reader: Pick<DataReader, 'secretData'>,
  namespace: string,
  secretName: string | undefined,
  field: string,
): Promise<GitAuth | undefined> {
  if (secretName === undefined) return undefined;
  const data = await reader.secretData(namespace, secretName);
  if (data === undefined) throw new Error(`${field}: Secret ${namespace}/${secretName} does not exist`);
  if (data['bearerToken']) return { bearerToken: data['bearerToken'] };
  if (data['username'] !== undefined && data['password'] !== undefined) {
    return { username: data['username'], password: data['password'] };
  }
  throw new Error(
    `${field}: Secret ${namespace}/${secretName} has neither bearerToken nor username and password keys`,
  );
}

/**
 * Registry credentials from a Secret, as the Release's identity: type kubernetes.io/dockerconfigjson
 * (`.dockerconfigjson`, the entry for `registry`) or `username` + `password` keys. Errors name the
 * Secret, the keys and the registry, never the values.
 */
export async function registryCredentialsFrom(
  reader: Pick<DataReader, 'secretData'>,
  namespace: string,
  secretName: string | undefined,
  registry: string,
  field: string,
): Promise<RegistryCredentials | undefined> {
  if (secretName === undefined) return undefined;
  const data = await reader.secretData(namespace, secretName);
  if (data === undefined) throw new Error(`${field}: Secret ${namespace}/${secretName} does not exist`);
  const what = `${field}: Secret ${namespace}/${secretName}`;
  const dockerConfig = data['.dockerconfigjson'];
  if (dockerConfig !== undefined) {
    const found = dockerConfigCredentials(dockerConfig, registry, what);
    if (found === undefined)
      throw new Error(
        `${what} has no .dockerconfigjson entry for registry ${registry}; add one (kubectl create secret docker-registry --docker-server=${registry})`,
      );
    return found;
  }
  if (data['username'] !== undefined && data['password'] !== undefined) {
    return { username: data['username'], password: data['password'] };
  }
  throw new Error(
    `${what} has neither a .dockerconfigjson key (type kubernetes.io/dockerconfigjson) nor username and password keys`,
  );
}
