import type { DataReader } from '../kube/identity-reads.ts';

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
  throw new Error(`${field}: Secret ${namespace}/${secretName} has neither bearerToken nor username and password keys`);
}
