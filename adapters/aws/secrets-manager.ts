/**
 * Reads a Secrets Manager secret at run time (GetSecretValue, SigV4-signed with the function's
 * own credentials), so that a kubeconfig never sits in a Lambda environment variable and a
 * rotated secret is picked up without a redeploy. The value is cached for `ttlMs`.
 */
import type { CredentialsProvider, FetchLike } from './eks-token.ts';
import { signedJsonPost } from './signed-json-post.ts';

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
      const endpoint = new URL(
        opts.endpoint ??
          process.env['AWS_ENDPOINT_URL_SECRETS_MANAGER'] ??
          process.env['AWS_ENDPOINT_URL'] ??
          `https://secretsmanager.${opts.region}.amazonaws.com`,
      );
      const response = await signedJsonPost({
        endpoint,
        region: opts.region,
        service: 'secretsmanager',
        target: 'secretsmanager.GetSecretValue',
        contentType: 'application/x-amz-json-1.1',
        body: JSON.stringify({ SecretId: opts.secretId }),
        credentials: await opts.credentials(),
        fetch: send,
        timeoutMs: 10_000,
      });
      const text = await response.text();
      let parsed: { SecretString?: string; __type?: string } = {};
      try {
        parsed = JSON.parse(text) as typeof parsed;
      } catch {
        // reported below
      }
      if (response.status !== 200 || typeof parsed.SecretString !== 'string') {
        throw new SecretReadError(
          `reading secret ${opts.secretId} from Secrets Manager failed: HTTP ${response.status}${parsed.__type ? ` ${parsed.__type.split('#').pop() ?? ''}` : ''}`,
        );
      }
      cached = { value: parsed.SecretString, readAt: now() };
      return cached.value;
    },
  };
}
