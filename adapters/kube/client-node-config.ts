/**
 * The bridge for code that keeps @kubernetes/client-node for its own needs (the relay, `convoy
 * dev`, tests, benchmarks): the KubeClientConfig of a client-node KubeConfig's current context,
 * for the product APIs that take one. Never imported by the functions (only a type comes from
 * client-node here).
 */
import { readFileSync } from 'node:fs';
import type { KubeConfig } from '@kubernetes/client-node';
import { kubeClientConfig, KubeconfigError, type KubeClientConfig } from './kubeconfig.ts';

export function fromClientNodeKubeConfig(kc: KubeConfig): KubeClientConfig {
  const cluster = kc.getCurrentCluster();
  if (cluster === null) throw new KubeconfigError('the kubeconfig has no current cluster (check current-context)');
  const user = kc.getCurrentUser();
  if ((cluster as { proxyUrl?: string }).proxyUrl) {
    throw new KubeconfigError(`cluster ${cluster.name}: proxy-url is not supported by convoy; reach the server directly`);
  }
  const pem = (data: string | undefined, file: string | undefined): string | undefined => {
    if (data !== undefined && data !== '') return Buffer.from(data, 'base64').toString('utf8');
    return file !== undefined && file !== '' ? readFileSync(file, 'utf8') : undefined;
  };
  let tokenFile: string | undefined;
  if (user?.authProvider !== undefined) {
    // loadFromCluster() records the service account token as the `tokenFile` auth provider.
    const config = (user.authProvider as { name?: string; config?: { tokenFile?: string } }).config;
    if ((user.authProvider as { name?: string }).name !== 'tokenFile' || config?.tokenFile === undefined) {
      throw new KubeconfigError(`user ${user.name}: auth-provider is not supported by convoy; use a token or a client certificate`);
    }
    tokenFile = config.tokenFile;
  }
  if (user?.exec !== undefined) {
    throw new KubeconfigError(`user ${user.name}: exec is not supported by convoy; use a token or a client certificate`);
  }
  return kubeClientConfig({
    server: cluster.server,
    ca: pem(cluster.caData, cluster.caFile),
    insecureSkipTlsVerify: cluster.skipTLSVerify,
    tlsServerName: cluster.tlsServerName,
    cert: pem(user?.certData, user?.certFile),
    key: pem(user?.keyData, user?.keyFile),
    token: user?.token,
    tokenFile,
    username: user?.username,
    password: user?.password,
  });
}
