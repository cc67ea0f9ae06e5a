/**
 * What an OCI source needs to reach its registry, read as the Release's identity from Secrets in
 * the Release's namespace (docs/security.md): the pull credentials (`secretRef`, or an ECR token with
 * the functions' own role for `provider: aws`), the CA bundle of `certSecretRef` (key ca.crt) and the
 * cosign public key of `verify.secretRef` (key cosign.pub). Shared by spec.source.helm (oci://) and
 * the `oci` source kind. A Secret that is missing, unreadable or malformed is SourceNotReady naming
 * the field, the Secret and the key, never a value.
 */
import type { KeyObject } from 'node:crypto';
import type { OciVerify } from '../../domain/api/oci-options.ts';
import { CosignKeyError, cosignPublicKey } from '../../domain/source/cosign.ts';
import type { RegistryCredentials } from '../../domain/source/oci.ts';
import { ReadRefusedError } from '../../domain/tenancy/read-refusal.ts';
import { EcrTokenError, type EcrTokenSource } from '../aws/ecr-token.ts';
import type { DataReader } from '../kube/identity-reads.ts';
import { SourceNotReadyError } from '../source/errors.ts';
import { registryCredentialsFrom } from './credentials.ts';

export interface OciAccessSpec {
  provider?: 'generic' | 'aws' | undefined;
  secretRef?: { name: string } | undefined;
  certSecretRef?: { name: string } | undefined;
  verify?: OciVerify | undefined;
}

export interface OciAccess {
  credentials: RegistryCredentials | undefined;
  caPem: string | undefined;
  cosignKey: KeyObject | undefined;
}

async function secretKey(
  secrets: Pick<DataReader, 'secretData'>,
  namespace: string,
  name: string,
  key: string,
  field: string,
): Promise<string> {
  let data;
  try {
    data = await secrets.secretData(namespace, name);
  } catch (error) {
    if (error instanceof ReadRefusedError)
      throw new SourceNotReadyError(field, `${field}: ${error.message}`, { cause: error });
    throw error;
  }
  if (data === undefined)
    throw new SourceNotReadyError(field, `${field}: Secret ${namespace}/${name} does not exist`);
  const value = data[key];
  if (value === undefined || value.trim() === '')
    throw new SourceNotReadyError(field, `${field}: Secret ${namespace}/${name} has no key ${key}`);
  return value;
}

export async function ociRegistryAccess(input: {
  secrets: Pick<DataReader, 'secretData'>;
  namespace: string;
  registry: string;
  /** The spec field of the source, e.g. `spec.source.helm`. */
  field: string;
  spec: OciAccessSpec;
  ecr: EcrTokenSource | undefined;
}): Promise<OciAccess> {
  const { secrets, namespace, registry, field, spec } = input;
  let credentials: RegistryCredentials | undefined;
  if (spec.provider === 'aws') {
    if (input.ecr === undefined) {
      throw new SourceNotReadyError(
        `${field}.provider`,
        `${field}.provider: aws needs the functions' AWS identity (convoy on Lambda); this installation has none. Use secretRef with a token instead`,
      );
    }
    try {
      credentials = await input.ecr.credentialsFor(registry);
    } catch (error) {
      if (error instanceof EcrTokenError)
        throw new SourceNotReadyError(`${field}.provider`, `${field}.provider: ${error.message}`, {
          cause: error,
        });
      throw error;
    }
  } else {
    try {
      credentials = await registryCredentialsFrom(
        secrets,
        namespace,
        spec.secretRef?.name,
        registry,
        `${field}.secretRef`,
      );
    } catch (error) {
      if (error instanceof ReadRefusedError)
        throw new SourceNotReadyError(`${field}.secretRef`, `${field}.secretRef: ${error.message}`, {
          cause: error,
        });
      throw error;
    }
  }
  const caPem =
    spec.certSecretRef === undefined
      ? undefined
      : await secretKey(secrets, namespace, spec.certSecretRef.name, 'ca.crt', `${field}.certSecretRef`);
  let cosignKey: KeyObject | undefined;
  if (spec.verify !== undefined) {
    const verifyField = `${field}.verify.secretRef`;
    const pem = await secretKey(secrets, namespace, spec.verify.secretRef.name, 'cosign.pub', verifyField);
    try {
      cosignKey = cosignPublicKey(
        pem,
        `${verifyField}: key cosign.pub of Secret ${namespace}/${spec.verify.secretRef.name}`,
      );
    } catch (error) {
      if (error instanceof CosignKeyError)
        throw new SourceNotReadyError(verifyField, error.message, { cause: error });
      throw error;
    }
  }
  return { credentials, caPem, cosignKey };
}
