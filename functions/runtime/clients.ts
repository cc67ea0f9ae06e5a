import type { S3ClientSource } from '../../adapters/store/s3-render-store.ts';
import type { CredentialsProvider, FetchLike } from '../../adapters/aws/eks-token.ts';
import { createSecretStringReader, SecretReadError } from '../../adapters/aws/secrets-manager.ts';
import { SQSClient } from '@aws-sdk/client-sqs';
import {
  fromDefaultKubeconfig,
  fromKubeconfigFile,
  fromKubeconfigYaml,
  type KubeClientConfig,
} from '../../adapters/kube/kubeconfig.ts';
import { ConfigError, type FunctionConfig } from './config.ts';
import { hintKey, type HintKey } from './applied-hint.ts';
import type { EksAccess } from '../../adapters/kube/target-access.ts';
import type { TenancySettings } from '../../domain/tenancy/settings.ts';
import { tenancyFromEnv } from '../../platform/tenancy-config.ts';
import { defaultProvider } from '@aws-sdk/credential-provider-node';
import { managementAccess } from './management-access.ts';
import { onceAsync } from '../../platform/once.ts';
import { createEcrTokenSource, type EcrTokenSource } from '../../adapters/aws/ecr-token.ts';
import { createEgress } from '../../adapters/egress/client.ts';
import { STRICT_EGRESS } from '../../domain/egress/policy.ts';

/** The clients a function container keeps between invocations. */
export interface FunctionClients {
  kc: KubeClientConfig;
  sqs: SQSClient;
  /** Made on first use (s3-render-store.ts): a run that never reads the store never loads the S3 SDK. */
  s3: S3ClientSource;
  /** The installation's tenancy settings (platform/tenancy-config.ts); default DEFAULT_TENANCY. */
  tenancy?: TenancySettings | undefined;
  /** Reaches `eks` Clusters; undefined: refused. */
  eks?: EksAccess | undefined;
  /** ECR tokens with the function's own role (`provider: aws` OCI sources); undefined: refused. */
  ecr?: EcrTokenSource | undefined;
  /**
   * Seals the reconcile's hints to drift and health and checks them (applied-hint.ts). Made once
   * where the clients are: the loops that share a process share it; on Lambda the three
   * functions share the installation's secret (hintKeyOnAws).
   */
  hintKey: HintKey;
}

/** The management cluster: CONVOY_KUBECONFIG (inline), CONVOY_KUBECONFIG_PATH, else $KUBECONFIG, ~/.kube/config or in-cluster. */
export function kubeConfigFrom(
  config: Pick<FunctionConfig, 'CONVOY_KUBECONFIG' | 'CONVOY_KUBECONFIG_PATH'>,
): KubeClientConfig {
  if (config.CONVOY_KUBECONFIG !== undefined)
    return fromKubeconfigYaml(config.CONVOY_KUBECONFIG, { what: 'CONVOY_KUBECONFIG' });
  if (config.CONVOY_KUBECONFIG_PATH !== undefined) return fromKubeconfigFile(config.CONVOY_KUBECONFIG_PATH);
  return fromDefaultKubeconfig();
}

export function createFunctionClients(
  config: FunctionConfig,
  env: Record<string, string | undefined> = process.env,
  management?: KubeClientConfig,
  key: HintKey = hintKey(config.CONVOY_HINT_KEY),
): FunctionClients {
  const endpoint = config.AWS_ENDPOINT_URL;
  return {
    kc: management ?? kubeConfigFrom(config),
    hintKey: key,
    tenancy: tenancyFromEnv(env),
    sqs: new SQSClient({ region: config.AWS_REGION, ...(endpoint ? { endpoint } : {}) }),
    s3: onceAsync(async () => {
      const { S3Client } = await import('@aws-sdk/client-s3');
      return new S3Client({
        region: config.AWS_REGION,
        ...(endpoint ? { endpoint, forcePathStyle: true } : {}),
      });
    }),
  };
}

/**
 * The clients of a Lambda container: the management cluster through EKS access or a kubeconfig
 * read from Secrets Manager at run time when configured (management-access.ts), `eks` Clusters
 * reached with the function's own role, the installation's hint key (hintKeyOnAws).
 */
export async function createFunctionClientsOnAws(
  config: FunctionConfig,
  env: Record<string, string | undefined> = process.env,
): Promise<FunctionClients> {
  const credentials = defaultProvider();
  const access = await managementAccess(env, credentials);
  const key = await hintKeyOnAws(config, credentials);
  const clients = createFunctionClients(config, env, access.kc, key);
  // The ECR API request goes through the installation's egress policy, as the registry requests do.
  return {
    ...clients,
    eks: access.eks,
    ecr: createEcrTokenSource({
      credentials,
      egress: createEgress(clients.tenancy?.egress ?? STRICT_EGRESS),
    }),
  };
}

/**
 * The hint key of a container: the construct's secret (CONVOY_HINT_KEY_SECRET_ARN), read once
 * at init — not a dynamic reference in the environment: no secret sits in a function's
 * environment (as the kubeconfig, management-access.ts), and a new container reads the secret
 * as it is now, so the three functions agree whatever a deploy updated — else CONVOY_HINT_KEY,
 * else one drawn for this container (hints then verify only within it: the observers read).
 * A secret that cannot be read fails the init, naming the variable and the secret, never its value.
 */
export async function hintKeyOnAws(
  config: FunctionConfig,
  credentials: CredentialsProvider,
  fetch?: FetchLike,
): Promise<HintKey> {
  const arn = config.CONVOY_HINT_KEY_SECRET_ARN;
  if (arn === undefined) return hintKey(config.CONVOY_HINT_KEY);
  if (config.CONVOY_HINT_KEY !== undefined)
    throw new ConfigError(
      "CONVOY_HINT_KEY and CONVOY_HINT_KEY_SECRET_ARN are both set: give one (the installation's hint key, or the secret that holds it)",
    );
  const reader = createSecretStringReader({
    secretId: arn,
    region: config.AWS_REGION,
    credentials,
    ...(fetch !== undefined ? { fetch } : {}),
  });
  let text: string;
  try {
    text = await reader.read();
  } catch (error) {
    // SecretReadError names the secret and the HTTP answer; a network error names neither.
    const what =
      error instanceof SecretReadError
        ? error.message
        : `reading secret ${arn} failed: ${error instanceof Error ? error.message : String(error)}`;
    throw new ConfigError(`CONVOY_HINT_KEY_SECRET_ARN: the hint key could not be read (${what})`, {
      cause: error,
    });
  }
  if (text === '')
    throw new ConfigError(
      `CONVOY_HINT_KEY_SECRET_ARN: the secret ${arn} holds an empty string; give it the installation's hint key`,
    );
  return hintKey(text);
}
