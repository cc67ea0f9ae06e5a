import { S3Client } from '@aws-sdk/client-s3';
import { SQSClient } from '@aws-sdk/client-sqs';
import { KubeConfig } from '@kubernetes/client-node';
import type { FunctionConfig } from './config.ts';

/** The clients a function container keeps between invocations. */
export interface FunctionClients {
  kc: KubeConfig;
  sqs: SQSClient;
  s3: S3Client;
}

export function kubeConfigFrom(config: Pick<FunctionConfig, 'CONVOY_KUBECONFIG' | 'CONVOY_KUBECONFIG_PATH'>): KubeConfig {
  const kc = new KubeConfig();
  if (config.CONVOY_KUBECONFIG !== undefined) kc.loadFromString(config.CONVOY_KUBECONFIG);
  else if (config.CONVOY_KUBECONFIG_PATH !== undefined) kc.loadFromFile(config.CONVOY_KUBECONFIG_PATH);
  else kc.loadFromDefault();
  return kc;
}

export function createFunctionClients(config: FunctionConfig): FunctionClients {
  const endpoint = config.AWS_ENDPOINT_URL;
  return {
    kc: kubeConfigFrom(config),
    sqs: new SQSClient({ region: config.AWS_REGION, ...(endpoint ? { endpoint } : {}) }),
    s3: new S3Client({ region: config.AWS_REGION, ...(endpoint ? { endpoint, forcePathStyle: true } : {}) }),
  };
}

/** Builds a value on first use and keeps it: one set of clients per Lambda container. */
export function once<T>(create: () => T): () => T {
  let made: { value: T } | undefined;
  return () => (made ??= { value: create() }).value;
}
