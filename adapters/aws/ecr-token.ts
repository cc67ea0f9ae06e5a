/**
 * ECR through IAM (`provider: aws`): registry credentials from ecr:GetAuthorizationToken, called with
 * the function's own role (SigV4 through signed-json-post.ts, as secrets-manager.ts does — no
 * @aws-sdk/client-ecr in the bundle; docs/decisions.md "ECR through IAM"). The answer's token is
 * base64 `AWS:<password>`: basic auth to the registry. Tokens are cached per registry (account and
 * region) by the source this makes, one per container, and renewed an hour before their 12-hour
 * expiry (domain/source/ecr.ts). Errors name the registry and the HTTP answer, never the token.
 *
 * Which repositories the role may pull is the construct's `ecrRepositories` grant: every Release
 * with `provider: aws` pulls as the function, so the grant is the installation's allow-list.
 *
 * The ECR API request goes through the egress client like every other outbound request (the
 * registry host a tenant names picks the region, so the endpoint): inside a VPC whose ECR endpoints
 * resolve to private addresses, the installation lists them in its egress allow list.
 */
import {
  ECR_CONTENT_TYPE,
  ECR_TARGET,
  EcrAnswerError,
  ecrRegistryOf,
  ecrTokenFresh,
  getAuthorizationTokenBody,
  parseAuthorizationToken,
  type EcrToken,
} from '../../domain/source/ecr.ts';
import type { RegistryCredentials } from '../../domain/source/oci.ts';
import { STRICT_EGRESS } from '../../domain/egress/policy.ts';
import { createEgress, type Egress } from '../egress/client.ts';
import type { CredentialsProvider, FetchLike } from './eks-token.ts';
import { signedJsonPost } from './signed-json-post.ts';

export class EcrTokenError extends Error {
  override name = 'EcrTokenError';
}

export interface EcrTokenSource {
  /** Basic-auth credentials for an ECR registry host; EcrTokenError when the host is not ECR or ECR refused. */
  credentialsFor(registryHost: string): Promise<RegistryCredentials>;
}

export function createEcrTokenSource(opts: {
  credentials: CredentialsProvider;
  now?: () => number;
  fetch?: FetchLike;
  /** The ECR API endpoint; default AWS_ENDPOINT_URL_ECR, else AWS_ENDPOINT_URL, else the region's. */
  endpoint?: string;
  /** Per-request timeout; default 10 s. */
  timeoutMs?: number;
  /** The egress client of the ECR API request (when `fetch` is not given); default one with the strict policy. */
  egress?: Egress | undefined;
}): EcrTokenSource {
  const now = opts.now ?? Date.now;
  const egress = opts.fetch === undefined ? (opts.egress ?? createEgress(STRICT_EGRESS)) : undefined;
  const send: FetchLike = opts.fetch ?? ((url, init) => egress!.fetch(url, init));
  // Per source (one per container): the token of each registry, and the request under way.
  const tokens = new Map<string, Promise<EcrToken>>();

  async function fetchToken(host: string): Promise<EcrToken> {
    const registry = ecrRegistryOf(host)!;
    const endpoint = new URL(
      opts.endpoint ??
        process.env['AWS_ENDPOINT_URL_ECR'] ??
        process.env['AWS_ENDPOINT_URL'] ??
        registry.endpoint,
    );
    const credentials = await opts.credentials();
    let response;
    try {
      response = await signedJsonPost({
        endpoint,
        region: registry.region,
        service: 'ecr',
        target: ECR_TARGET,
        contentType: ECR_CONTENT_TYPE,
        body: getAuthorizationTokenBody(registry),
        credentials,
        fetch: send,
        timeoutMs: opts.timeoutMs ?? 10_000,
      });
    } catch (error) {
      throw new EcrTokenError(
        `ecr:GetAuthorizationToken for registry ${host} got no answer from ${endpoint.host} (${error instanceof Error ? error.name : 'error'})`,
        { cause: error },
      );
    }
    const text = await response.text();
    if (response.status !== 200) {
      let type = '';
      try {
        type = ((JSON.parse(text) as { __type?: string }).__type ?? '').split('#').pop() ?? '';
      } catch {
        // no JSON: the status alone
      }
      throw new EcrTokenError(
        `ecr:GetAuthorizationToken for registry ${host} failed: HTTP ${response.status}${type ? ` ${type}` : ''}` +
          (response.status === 400 || response.status === 403
            ? ' (does the function role have ecr:GetAuthorizationToken? the construct grants it with ecrRepositories)'
            : ''),
      );
    }
    try {
      return parseAuthorizationToken(text);
    } catch (error) {
      if (error instanceof EcrAnswerError)
        throw new EcrTokenError(`ecr:GetAuthorizationToken for registry ${host}: ${error.message}`, {
          cause: error,
        });
      throw error;
    }
  }

  return {
    async credentialsFor(registryHost) {
      const host = registryHost.toLowerCase();
      if (ecrRegistryOf(host) === undefined) {
        throw new EcrTokenError(
          `provider: aws needs an ECR registry (<account>.dkr.ecr.<region>.amazonaws.com), not ${host}`,
        );
      }
      const cached = tokens.get(host);
      if (cached !== undefined) {
        const token = await cached.catch(() => undefined);
        if (token !== undefined && ecrTokenFresh(token, now())) return token.credentials;
        if (tokens.get(host) === cached) tokens.delete(host);
      }
      const pending = tokens.get(host) ?? fetchToken(host);
      tokens.set(host, pending);
      try {
        return (await pending).credentials;
      } catch (error) {
        if (tokens.get(host) === pending) tokens.delete(host);
        throw error;
      }
    },
  };
}
