/**
 * EKS without static credentials: the bearer token aws-iam-authenticator (and `aws eks
 * get-token`) makes, minted in-process — no exec plugin, nothing stored.
 *
 * The token is `k8s-aws-v1.` + base64url (no padding) of a presigned STS GetCallerIdentity URL
 * whose signed headers include `x-k8s-aws-id: <cluster name>`, with X-Amz-Expires=60; EKS
 * accepts it for 15 minutes after its X-Amz-Date. Tokens are cached per cluster and role until
 * TOKEN_REFRESH_BEFORE_MS before that. With a roleArn the token is signed with credentials of
 * an STS AssumeRole (cached until shortly before they expire). The cluster's endpoint and CA
 * come from EKS DescribeCluster, signed the same way. No Secret, no token in any environment
 * variable: the credentials are the function's own IAM role.
 */
import { createHash, createHmac } from 'node:crypto';
import { SignatureV4 } from '@smithy/signature-v4';
import { kubeClientConfig, type KubeClientConfig } from '../kube/kubeconfig.ts';
import { ClusterResolutionError, type EksAccess, type EksClusterRef } from '../kube/target-access.ts';

export interface AwsCredentials {
  readonly accessKeyId: string;
  readonly secretAccessKey: string;
  readonly sessionToken?: string | undefined;
  readonly expiration?: Date | undefined;
}

/** The function's own credentials, e.g. @aws-sdk/credential-provider-node's fromNodeProviderChain(). */
export type CredentialsProvider = () => Promise<AwsCredentials>;

export const TOKEN_PREFIX = 'k8s-aws-v1.';
export const CLUSTER_ID_HEADER = 'x-k8s-aws-id';
/** EKS accepts a token for 15 minutes after it was signed. */
export const TOKEN_LIFETIME_MS = 15 * 60_000;
/** A cached token is replaced this long before it expires (it must outlive the requests of one run step). */
export const TOKEN_REFRESH_BEFORE_MS = 60_000;
const PRESIGN_EXPIRES_SECONDS = 60;
const DESCRIBE_TTL_MS = 10 * 60_000;

/** Node's crypto as the signer's hash (SHA-256, HMAC when given a key). */
export class NodeSha256 {
  private hash: ReturnType<typeof createHash> | ReturnType<typeof createHmac>;
  private readonly secret: string | Uint8Array | ArrayBuffer | ArrayBufferView | undefined;
  constructor(secret?: string | Uint8Array | ArrayBuffer | ArrayBufferView) {
    this.secret = secret;
    this.hash = this.fresh();
  }
  private fresh() {
    if (this.secret === undefined) return createHash('sha256');
    const key =
      typeof this.secret === 'string'
        ? this.secret
        : Buffer.from(
            this.secret instanceof ArrayBuffer ? new Uint8Array(this.secret) : (this.secret as Uint8Array),
          );
    return createHmac('sha256', key);
  }
  update(data: string | Uint8Array | ArrayBuffer | ArrayBufferView): void {
    this.hash.update(
      typeof data === 'string'
        ? data
        : Buffer.from(data instanceof ArrayBuffer ? new Uint8Array(data) : (data as Uint8Array)),
    );
  }
  digest(): Promise<Uint8Array> {
    return Promise.resolve(new Uint8Array(this.hash.digest()));
  }
  reset(): void {
    this.hash = this.fresh();
  }
}

const stsHost = (region: string) => `sts.${region}.amazonaws.com`;

/** The presigned GetCallerIdentity URL for `clusterName`, signed at `now`. */
export async function presignedCallerIdentityUrl(
  clusterName: string,
  region: string,
  credentials: AwsCredentials,
  now: Date,
): Promise<string> {
  const hostname = stsHost(region);
  const signer = new SignatureV4({
    credentials,
    region,
    service: 'sts',
    sha256: NodeSha256,
    uriEscapePath: true,
    applyChecksum: false,
  });
  const presigned = await signer.presign(
    {
      method: 'GET',
      protocol: 'https:',
      hostname,
      path: '/',
      query: { Action: 'GetCallerIdentity', Version: '2011-06-15' },
      headers: { host: hostname, [CLUSTER_ID_HEADER]: clusterName },
    },
    { expiresIn: PRESIGN_EXPIRES_SECONDS, signingDate: now },
  );
  const query = new URLSearchParams();
  for (const [name, value] of Object.entries(presigned.query ?? {})) {
    for (const v of Array.isArray(value) ? value : [value]) if (typeof v === 'string') query.append(name, v);
  }
  return `https://${hostname}/?${query.toString()}`;
}

/** The bearer token for `clusterName`: `k8s-aws-v1.` + base64url of the presigned URL, unpadded. */
export async function eksToken(
  clusterName: string,
  region: string,
  credentials: AwsCredentials,
  now: Date,
): Promise<string> {
  const url = await presignedCallerIdentityUrl(clusterName, region, credentials, now);
  return TOKEN_PREFIX + Buffer.from(url, 'utf8').toString('base64url');
}

export type FetchLike = (
  url: string,
  init: { method: string; headers: Record<string, string>; body?: string; signal?: AbortSignal },
) => Promise<{
  status: number;
  text(): Promise<string>;
}>;

export interface EksAccessOptions {
  credentials: CredentialsProvider;
  now?: () => Date;
  /** Default globalThis.fetch. */
  fetch?: FetchLike;
  /** How long an AWS call may take. Default 10 s. */
  timeoutMs?: number;
}

export interface EksTokens {
  /** A token for the cluster, cached until TOKEN_REFRESH_BEFORE_MS before it expires. */
  token(eks: EksClusterRef): Promise<string>;
  /** EksAccess for the target resolvers: endpoint and CA from DescribeCluster, the token minted per request (cached). */
  access: EksAccess;
}

/**
 * Token minting with caches for one container. Nothing here is module state: the caller keeps
 * the returned object (one per function container).
 */
export function createEksTokens(opts: EksAccessOptions): EksTokens {
  const now = opts.now ?? (() => new Date());
  const send: FetchLike = opts.fetch ?? ((url, init) => fetch(url, init));
  const timeoutMs = opts.timeoutMs ?? 10_000;
  const tokens = new Map<string, { token: string; expiresAt: number }>();
  const roles = new Map<string, AwsCredentials>();
  const clusters = new Map<string, { config: KubeClientConfig; expiresAt: number }>();

  const signedFetch = async (
    service: 'sts' | 'eks',
    region: string,
    credentials: AwsCredentials,
    request: { method: 'GET' | 'POST'; hostname: string; path: string; body?: string; contentType?: string },
  ) => {
    const signer = new SignatureV4({
      credentials,
      region,
      service,
      sha256: NodeSha256,
      uriEscapePath: true,
      applyChecksum: true,
    });
    const headers: Record<string, string> = {
      host: request.hostname,
      accept: 'application/json',
      ...(request.contentType ? { 'content-type': request.contentType } : {}),
    };
    const signed = await signer.sign(
      {
        method: request.method,
        protocol: 'https:',
        hostname: request.hostname,
        path: request.path,
        headers,
        ...(request.body !== undefined ? { body: request.body } : {}),
      },
      { signingDate: now() },
    );
    const response = await send(`https://${request.hostname}${request.path}`, {
      method: request.method,
      headers: signed.headers,
      ...(request.body !== undefined ? { body: request.body } : {}),
      signal: AbortSignal.timeout(timeoutMs),
    });
    return { status: response.status, text: await response.text() };
  };

  const credentialsFor = async (eks: EksClusterRef, where: string): Promise<AwsCredentials> => {
    const own = await opts.credentials();
    if (eks.roleArn === undefined) return own;
    const cached = roles.get(eks.roleArn);
    if (cached?.expiration !== undefined && cached.expiration.getTime() - TOKEN_LIFETIME_MS > now().getTime())
      return cached;
    const body = new URLSearchParams({
      Action: 'AssumeRole',
      Version: '2011-06-15',
      RoleArn: eks.roleArn,
      RoleSessionName: 'convoy',
      DurationSeconds: '3600',
    }).toString();
    const answer = await signedFetch('sts', eks.region, own, {
      method: 'POST',
      hostname: stsHost(eks.region),
      path: '/',
      body,
      contentType: 'application/x-www-form-urlencoded',
    });
    const field = (name: string) => new RegExp(`<${name}>([^<]+)</${name}>`).exec(answer.text)?.[1];
    const accessKeyId = field('AccessKeyId');
    const secretAccessKey = field('SecretAccessKey');
    if (answer.status !== 200 || accessKeyId === undefined || secretAccessKey === undefined) {
      throw new ClusterResolutionError(
        `${where}: assuming spec.eks.roleArn ${eks.roleArn} failed (STS answered HTTP ${answer.status}${field('Code') ? ` ${field('Code')}` : ''}); check the role's trust policy`,
      );
    }
    const expiration = field('Expiration');
    const assumed: AwsCredentials = {
      accessKeyId,
      secretAccessKey,
      sessionToken: field('SessionToken'),
      expiration: expiration ? new Date(expiration) : new Date(now().getTime() + 3600_000),
    };
    roles.set(eks.roleArn, assumed);
    return assumed;
  };

  const token = async (eks: EksClusterRef, where = `EKS cluster ${eks.name}`): Promise<string> => {
    const key = `${eks.region}/${eks.name}/${eks.roleArn ?? ''}`;
    const at = now();
    const hit = tokens.get(key);
    if (hit !== undefined && hit.expiresAt - TOKEN_REFRESH_BEFORE_MS > at.getTime()) return hit.token;
    const minted = await eksToken(eks.name, eks.region, await credentialsFor(eks, where), at);
    tokens.set(key, { token: minted, expiresAt: at.getTime() + TOKEN_LIFETIME_MS });
    return minted;
  };

  const access: EksAccess = async (eks, where) => {
    const key = `${eks.region}/${eks.name}/${eks.roleArn ?? ''}`;
    const hit = clusters.get(key);
    if (hit !== undefined && hit.expiresAt > now().getTime()) return hit.config;
    let answer: { status: number; text: string };
    try {
      answer = await signedFetch('eks', eks.region, await credentialsFor(eks, where), {
        method: 'GET',
        hostname: `eks.${eks.region}.amazonaws.com`,
        path: `/clusters/${encodeURIComponent(eks.name)}`,
      });
    } catch (error) {
      if (error instanceof ClusterResolutionError) throw error;
      throw new ClusterResolutionError(
        `${where}: EKS (DescribeCluster ${eks.name} in ${eks.region}) is unreachable (${error instanceof Error ? error.message : String(error)})`,
        { cause: error },
      );
    }
    let described: {
      cluster?: { endpoint?: string; certificateAuthority?: { data?: string }; status?: string };
    } = {};
    try {
      described = JSON.parse(answer.text) as typeof described;
    } catch {
      // reported below
    }
    if (answer.status === 404)
      throw new ClusterResolutionError(
        `${where}: EKS has no cluster ${eks.name} in ${eks.region} (spec.eks.name)`,
      );
    if (answer.status !== 200 || described.cluster?.endpoint === undefined) {
      throw new ClusterResolutionError(
        `${where}: EKS DescribeCluster ${eks.name} in ${eks.region} answered HTTP ${answer.status}; the function role needs eks:DescribeCluster`,
      );
    }
    const ca = described.cluster.certificateAuthority?.data;
    const config = kubeClientConfig({
      server: described.cluster.endpoint,
      ...(ca ? { ca: Buffer.from(ca, 'base64').toString('utf8') } : {}),
      tokenSource: () => token(eks, where),
    });
    clusters.set(key, { config, expiresAt: now().getTime() + DESCRIBE_TTL_MS });
    return config;
  };

  return { token: (eks) => token(eks), access };
}
