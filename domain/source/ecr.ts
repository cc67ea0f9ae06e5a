/**
 * Amazon ECR through IAM (`provider: aws`), the pure part: which registry hosts are ECR, the
 * GetAuthorizationToken request and answer (the AWS JSON 1.1 protocol, as documented in the ECR API
 * reference), and when a cached token is renewed. No network: adapters/aws/ecr-token.ts signs and sends.
 *
 * - Private registries are `<account>.dkr.ecr[-fips].<region>.amazonaws.com[.cn]`.
 * - The answer's `authorizationData[0].authorizationToken` is base64 of `AWS:<password>`, the
 *   credentials for basic auth to the registry; `expiresAt` is epoch seconds, 12 hours after issue.
 * - A token is reused until ECR_TOKEN_RENEW_BEFORE_MS before its expiry, never up to it.
 */
import type { RegistryCredentials } from './oci.ts';

export const ECR_TARGET = 'AmazonEC2ContainerRegistry_V20150921.GetAuthorizationToken';
export const ECR_CONTENT_TYPE = 'application/x-amz-json-1.1';
/** A cached token is renewed this long before `expiresAt`: one hour below ECR's 12-hour lifetime. */
export const ECR_TOKEN_RENEW_BEFORE_MS = 60 * 60_000;

const ECR_HOST = /^([0-9]{12})\.dkr\.ecr(-fips)?\.([a-z0-9-]+)\.amazonaws\.com(\.cn)?$/;
/** The CRD's check that a `provider: aws` repository is a private ECR registry (release-spec.ts). */
export const ECR_OCI_URL_PATTERN =
  '^oci://[0-9]{12}\\.dkr\\.ecr(-fips)?\\.[a-z0-9-]+\\.amazonaws\\.com(\\.cn)?/';

export interface EcrRegistry {
  account: string;
  region: string;
  /** The ECR API endpoint of that region. */
  endpoint: string;
}

/** The account and region of an ECR registry host; undefined when the host is not ECR. */
export function ecrRegistryOf(host: string): EcrRegistry | undefined {
  const m = ECR_HOST.exec(host.toLowerCase());
  if (m === null) return undefined;
  const region = m[3];
  const fips = m[2] !== undefined;
  const suffix = m[4] !== undefined ? 'amazonaws.com.cn' : 'amazonaws.com';
  return { account: m[1], region, endpoint: `https://${fips ? 'ecr-fips' : 'api.ecr'}.${region}.${suffix}` };
}

/** The request body of GetAuthorizationToken for one registry (account). */
export function getAuthorizationTokenBody(registry: EcrRegistry): string {
  return JSON.stringify({ registryIds: [registry.account] });
}

export interface EcrToken {
  credentials: RegistryCredentials;
  /** Epoch ms. */
  expiresAt: number;
}

export class EcrAnswerError extends Error {
  override name = 'EcrAnswerError';
}

/**
 * The credentials in a GetAuthorizationToken answer (JSON text). `expiresAt` is epoch seconds (a
 * number; an ISO string is accepted too). Throws EcrAnswerError naming what is missing, never the token.
 */
export function parseAuthorizationToken(text: string): EcrToken {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new EcrAnswerError('the GetAuthorizationToken answer is not JSON');
  }
  const list =
    typeof parsed === 'object' && parsed !== null
      ? (parsed as { authorizationData?: unknown }).authorizationData
      : undefined;
  const first = Array.isArray(list) ? (list[0] as Record<string, unknown> | undefined) : undefined;
  const token = first?.['authorizationToken'];
  if (typeof token !== 'string' || token === '')
    throw new EcrAnswerError(
      'the GetAuthorizationToken answer has no authorizationData[0].authorizationToken',
    );
  const decoded = decodeBase64(token);
  const colon = decoded === undefined ? -1 : decoded.indexOf(':');
  if (decoded === undefined || colon <= 0)
    throw new EcrAnswerError(
      'the authorizationToken of the GetAuthorizationToken answer is not base64 of user:password',
    );
  const raw = first?.['expiresAt'];
  const expiresAt = typeof raw === 'number' ? raw * 1000 : typeof raw === 'string' ? Date.parse(raw) : NaN;
  if (!Number.isFinite(expiresAt))
    throw new EcrAnswerError('the GetAuthorizationToken answer has no expiresAt');
  return {
    credentials: { username: decoded.slice(0, colon), password: decoded.slice(colon + 1) },
    expiresAt,
  };
}

/** Whether a cached token may still be used at `now` (epoch ms): until ECR_TOKEN_RENEW_BEFORE_MS before it expires. */
export function ecrTokenFresh(token: EcrToken, now: number): boolean {
  return now < token.expiresAt - ECR_TOKEN_RENEW_BEFORE_MS;
}

function decodeBase64(text: string): string | undefined {
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(text)) return undefined;
  try {
    const binary = atob(text);
    return new TextDecoder().decode(Uint8Array.from(binary, (c) => c.charCodeAt(0)));
  } catch {
    return undefined;
  }
}
