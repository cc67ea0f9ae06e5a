/**
 * Reads a Secrets Manager secret at run time (GetSecretValue, SigV4-signed with the function's
 * own credentials), so that a kubeconfig never sits in a Lambda environment variable and a
 * rotated secret is picked up without a redeploy. The value is cached for `ttlMs`.
 */
import { SignatureV4 } from '@smithy/signature-v4';
import { NodeSha256, type CredentialsProvider, type FetchLike } from './eks-token.ts';

export class SecretReadError extends Error {
  override name = 'SecretReadError';
}

export interface SecretStringReader {
  /** The SecretString, cached for the reader's TTL. Errors name the secret, never its value. */
  read(): Promise<string>;
}

export function createSecretStringReader(opts: {
  secretId: string;
  region: string;
  credentials: CredentialsProvider;
  ttlMs?: number;
  now?: () => number;
  fetch?: FetchLike;
  /**
   * The service's endpoint; default AWS_ENDPOINT_URL_SECRETS_MANAGER, else AWS_ENDPOINT_URL (the
   * variables the AWS SDKs read), else https://secretsmanager.<region>.amazonaws.com.
   */
  endpoint?: string;
}): SecretStringReader {
  const now = opts.now ?? Date.now;
  const ttlMs = opts.ttlMs ?? 5 * 60_000;
  const send: FetchLike = opts.fetch ?? ((url, init) => fetch(url, init));
  let cached: { value: string; readAt: number } | undefined;
  return {
    async read() {
      if (cached !== undefined && now() - cached.readAt < ttlMs) return cached.value;
      const endpoint = new URL(opts.endpoint ?? process.env['AWS_ENDPOINT_URL_SECRETS_MANAGER'] ?? process.env['AWS_ENDPOINT_URL'] ?? `https://secretsmanager.${opts.region}.amazonaws.com`);
      const hostname = endpoint.host;
      const body = JSON.stringify({ SecretId: opts.secretId });
      const signer = new SignatureV4({ credentials: await opts.credentials(), region: opts.region, service: 'secretsmanager', sha256: NodeSha256, uriEscapePath: true, applyChecksum: true });
      const signed = await signer.sign({
        method: 'POST',
        protocol: endpoint.protocol,
        hostname: endpoint.hostname,
        ...(endpoint.port !== '' ? { port: Number(endpoint.port) } : {}),
        path: '/',
        headers: { host: hostname, 'content-type': 'application/x-amz-json-1.1', 'x-amz-target': 'secretsmanager.GetSecretValue' },
        body,
      });
      const response = await send(`${endpoint.protocol}//${hostname}/`, { method: 'POST', headers: signed.headers, body, signal: AbortSignal.timeout(10_000) });
      const text = await response.text();
      let parsed: { SecretString?: string; __type?: string } = {};
      try {
        parsed = JSON.parse(text) as typeof parsed;
      } catch {
        // reported below
      }
      if (response.status !== 200 || typeof parsed.SecretString !== 'string') {
        throw new SecretReadError(`reading secret ${opts.secretId} from Secrets Manager failed: HTTP ${response.status}${parsed.__type ? ` ${parsed.__type.split('#').pop() ?? ''}` : ''}`);
      }
      cached = { value: parsed.SecretString, readAt: now() };
      return cached.value;
    },
  };
}
