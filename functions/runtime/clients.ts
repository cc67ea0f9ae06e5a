import type { S3ClientSource } from '../../adapters/store/s3-render-store.ts';
import { SQSClient } from '@aws-sdk/client-sqs';
import { fromDefaultKubeconfig, fromKubeconfigFile, fromKubeconfigYaml, type KubeClientConfig } from '../../adapters/kube/kubeconfig.ts';
import type { FunctionConfig } from './config.ts';
import type { EksAccess } from '../../adapters/kube/target-access.ts';
import type { TenancySettings } from '../../domain/tenancy/settings.ts';
import { tenancyFromEnv } from './tenancy-config.ts';
import { defaultProvider } from '@aws-sdk/credential-provider-node';
import { managementAccess } from './management-access.ts';

/** The clients a function container keeps between invocations. */
export interface FunctionClients {
  kc: KubeClientConfig;
  sqs: SQSClient;
  /** Made on first use (s3-render-store.ts): a run that never reads the store never loads the S3 SDK. */
  s3: S3ClientSource;
  /** The installation's tenancy settings (functions/runtime/tenancy-config.ts); default DEFAULT_TENANCY. */
  tenancy?: TenancySettings | undefined;
  /** Reaches `eks` Clusters; undefined: refused. */
  eks?: EksAccess | undefined;
}

/** The management cluster: CONVOY_KUBECONFIG (inline), CONVOY_KUBECONFIG_PATH, else $KUBECONFIG, ~/.kube/config or in-cluster. */
export function kubeConfigFrom(config: Pick<FunctionConfig, 'CONVOY_KUBECONFIG' | 'CONVOY_KUBECONFIG_PATH'>): KubeClientConfig {
  if (config.CONVOY_KUBECONFIG !== undefined) return fromKubeconfigYaml(config.CONVOY_KUBECONFIG, { what: 'CONVOY_KUBECONFIG' });
  if (config.CONVOY_KUBECONFIG_PATH !== undefined) return fromKubeconfigFile(config.CONVOY_KUBECONFIG_PATH);
  return fromDefaultKubeconfig();
}

export function createFunctionClients(
  config: FunctionConfig,
  env: Record<string, string | undefined> = process.env,
  management?: KubeClientConfig,
): FunctionClients {
  const endpoint = config.AWS_ENDPOINT_URL;
  return {
    kc: management ?? kubeConfigFrom(config),
    tenancy: tenancyFromEnv(env),
    sqs: new SQSClient({ region: config.AWS_REGION, ...(endpoint ? { endpoint } : {}) }),
    s3: onceAsync(async () => {
      const { S3Client } = await import('@aws-sdk/client-s3');
      return new S3Client({ region: config.AWS_REGION, ...(endpoint ? { endpoint, forcePathStyle: true } : {}) });
    }),
  };
}

/**
 * The clients of a Lambda container: the management cluster through EKS access or a kubeconfig
 * read from Secrets Manager at run time when configured (management-access.ts), `eks` Clusters
 * reached with the function's own role.
 */
export async function createFunctionClientsOnAws(config: FunctionConfig, env: Record<string, string | undefined> = process.env): Promise<FunctionClients> {
  const access = await managementAccess(env, defaultProvider());
  return { ...createFunctionClients(config, env, access.kc), eks: access.eks };
}

/** once() for an async value; a rejected attempt is not kept, so the next invocation tries again. */
export function onceAsync<T>(create: () => Promise<T>): () => Promise<T> {
  let made: Promise<T> | undefined;
  return () =>
    (made ??= create().catch((error: unknown) => {
      made = undefined;
      throw error;
    }));
}

/** Builds a value on first use and keeps it: one set of clients per Lambda container. */
export function once<T>(create: () => T): () => T {
  let made: { value: T } | undefined;
  return () => (made ??= { value: create() }).value;
}
