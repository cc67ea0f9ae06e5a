/**
 * How the functions reach the management cluster, without a credential in any environment
 * variable on AWS:
 * - CONVOY_MANAGEMENT_EKS_NAME (+ CONVOY_MANAGEMENT_SERVER, CONVOY_MANAGEMENT_CA_DATA, both
 *   public): an EKS token minted from the function's own IAM role (the construct's access entry
 *   maps it to the convoy:functions group);
 * - CONVOY_KUBECONFIG_SECRET_ARN: a kubeconfig read from Secrets Manager at start, its token
 *   re-read every 5 minutes (rotation needs no redeploy); exec, auth-provider and file paths
 *   are refused as in any stored kubeconfig;
 * - otherwise CONVOY_KUBECONFIG / CONVOY_KUBECONFIG_PATH / the default kubeconfig (clients.ts).
 */
import { createEksTokens, type CredentialsProvider } from '../../adapters/aws/eks-token.ts';
import { createSecretStringReader } from '../../adapters/aws/secrets-manager.ts';
import { kubeClientConfig, type KubeClientConfig } from '../../adapters/kube/kubeconfig.ts';
import { loadStoredKubeConfig } from '../../adapters/kube/target-access.ts';
import type { EksAccess } from '../../adapters/kube/target-access.ts';
import { ConfigError } from './config.ts';

export interface ManagementAccess {
  kc: KubeClientConfig | undefined;
  /** Reaches `eks` target Clusters with the same credentials. */
  eks: EksAccess;
}

export async function managementAccess(
  env: Record<string, string | undefined>,
  credentials: CredentialsProvider,
): Promise<ManagementAccess> {
  const region = env.AWS_REGION ?? 'us-east-1';
  const tokens = createEksTokens({ credentials });
  const eksName = env.CONVOY_MANAGEMENT_EKS_NAME;
  if (eksName !== undefined && eksName !== '') {
    const server = env.CONVOY_MANAGEMENT_SERVER;
    if (server === undefined || server === '')
      throw new ConfigError(
        'CONVOY_MANAGEMENT_EKS_NAME is set, CONVOY_MANAGEMENT_SERVER (the cluster endpoint) is not',
      );
    const ca = env.CONVOY_MANAGEMENT_CA_DATA;
    return {
      kc: kubeClientConfig({
        server,
        ...(ca ? { ca: Buffer.from(ca, 'base64').toString('utf8') } : {}),
        tokenSource: () => tokens.token({ name: eksName, region }),
      }),
      eks: tokens.access,
    };
  }
  const secretArn = env.CONVOY_KUBECONFIG_SECRET_ARN;
  if (secretArn !== undefined && secretArn !== '') {
    const secret = createSecretStringReader({ secretId: secretArn, region, credentials });
    const what = `the kubeconfig in ${secretArn}`;
    const first = loadStoredKubeConfig(await secret.read(), what);
    // The first load's agent and token reader are left out (never called): the token comes from tokenSource.
    // eslint-disable-next-line @typescript-eslint/unbound-method
    const { agent: _agent, bearerToken: _bearer, ...settings } = first;
    return {
      kc: kubeClientConfig({
        ...settings,
        token: undefined,
        // A rotated token is picked up within the reader's 5-minute cache.
        tokenSource: async () => loadStoredKubeConfig(await secret.read(), what).bearerToken() ?? '',
      }),
      eks: tokens.access,
    };
  }
  return { kc: undefined, eks: tokens.access };
}
