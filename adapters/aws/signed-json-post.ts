/**
 * One SigV4-signed AWS JSON-RPC call (`POST /` with `x-amz-target`), signed with
 * @smithy/signature-v4 and the caller's credentials: what Secrets Manager's GetSecretValue and
 * ECR's GetAuthorizationToken need, without an AWS SDK client per service in the bundles.
 * Transport errors are the caller's to word (they know which secret or registry it was for).
 */
import { SignatureV4 } from '@smithy/signature-v4';
import { NodeSha256, type CredentialsProvider, type FetchLike } from './eks-token.ts';

export interface SignedJsonPost {
  /** The service endpoint (scheme, host and optional port; the path is always `/`). */
  readonly endpoint: URL;
  readonly region: string;
  /** The SigV4 signing name, e.g. `secretsmanager`, `ecr`. */
  readonly service: string;
  /** The `x-amz-target` header, e.g. `secretsmanager.GetSecretValue`. */
  readonly target: string;
  /** e.g. `application/x-amz-json-1.1`. */
  readonly contentType: string;
  readonly body: string;
  /** Resolved credentials (resolve them first, so their errors are not taken for the call's). */
  readonly credentials: Awaited<ReturnType<CredentialsProvider>>;
  readonly fetch: FetchLike;
  readonly timeoutMs: number;
}

/** Signs and sends the request; the answer whatever its status. */
export async function signedJsonPost(request: SignedJsonPost): ReturnType<FetchLike> {
  const { endpoint, body } = request;
  const signer = new SignatureV4({
    credentials: request.credentials,
    region: request.region,
    service: request.service,
    sha256: NodeSha256,
    uriEscapePath: true,
    applyChecksum: true,
  });
  const signed = await signer.sign({
    method: 'POST',
    protocol: endpoint.protocol,
    hostname: endpoint.hostname,
    ...(endpoint.port !== '' ? { port: Number(endpoint.port) } : {}),
    path: '/',
    headers: { host: endpoint.host, 'content-type': request.contentType, 'x-amz-target': request.target },
    body,
  });
  return request.fetch(`${endpoint.protocol}//${endpoint.host}/`, {
    method: 'POST',
    headers: signed.headers,
    body,
    signal: AbortSignal.timeout(request.timeoutMs),
  });
}
