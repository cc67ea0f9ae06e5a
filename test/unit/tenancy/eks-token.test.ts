// The EKS bearer token against the format aws-iam-authenticator documents: `k8s-aws-v1.` +
// base64url (unpadded) of a presigned STS GetCallerIdentity URL (regional host, Action,
// Version, X-Amz-Expires=60, signed headers host;x-k8s-aws-id), cached until shortly before its
// 15-minute validity ends.
import { describe, expect, it } from 'vitest';
import {
  createEksTokens,
  eksToken,
  TOKEN_LIFETIME_MS,
  TOKEN_PREFIX,
  type FetchLike,
} from '../../../adapters/aws/eks-token.ts';

const credentials = {
  accessKeyId: 'AKIDEXAMPLE',
  secretAccessKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY',
  sessionToken: 'session-token',
};
const at = new Date('2026-12-01T08:00:00Z');

function decode(token: string): URL {
  expect(token.startsWith(TOKEN_PREFIX)).toBe(true);
  const encoded = token.slice(TOKEN_PREFIX.length);
  expect(encoded).not.toMatch(/[=+/]/);
  return new URL(Buffer.from(encoded, 'base64url').toString('utf8'));
}

describe('EKS token (aws-iam-authenticator format)', () => {
  it('is a presigned GetCallerIdentity URL on the regional STS host, signed for x-k8s-aws-id, valid 60 s as a URL', async () => {
    const url = decode(await eksToken('prod-eu-1', 'eu-west-1', credentials, at));
    expect(url.protocol).toBe('https:');
    expect(url.host).toBe('sts.eu-west-1.amazonaws.com');
    expect(url.pathname).toBe('/');
    const q = url.searchParams;
    expect(q.get('Action')).toBe('GetCallerIdentity');
    expect(q.get('Version')).toBe('2011-06-15');
    expect(q.get('X-Amz-Algorithm')).toBe('AWS4-HMAC-SHA256');
    expect(q.get('X-Amz-Credential')).toBe('AKIDEXAMPLE/20261201/eu-west-1/sts/aws4_request');
    expect(q.get('X-Amz-Date')).toBe('20261201T080000Z');
    expect(q.get('X-Amz-Expires')).toBe('60');
    expect(q.get('X-Amz-SignedHeaders')).toBe('host;x-k8s-aws-id');
    expect(q.get('X-Amz-Security-Token')).toBe('session-token');
    expect(q.get('X-Amz-Signature')).toMatch(/^[0-9a-f]{64}$/);
  });

  it('the signature covers the cluster name: another cluster, another token', async () => {
    const a = decode(await eksToken('a', 'eu-west-1', credentials, at)).searchParams.get('X-Amz-Signature');
    const b = decode(await eksToken('b', 'eu-west-1', credentials, at)).searchParams.get('X-Amz-Signature');
    expect(a).not.toBe(b);
  });

  it('is cached and refreshed shortly before its 15 minutes end', async () => {
    let now = at.getTime();
    let fetched = 0;
    const tokens = createEksTokens({
      credentials: () => {
        fetched++;
        return Promise.resolve(credentials);
      },
      now: () => new Date(now),
    });
    const eks = { name: 'prod', region: 'eu-west-1' };
    const first = await tokens.token(eks);
    now += 10 * 60_000;
    expect(await tokens.token(eks)).toBe(first);
    now = at.getTime() + TOKEN_LIFETIME_MS - 30_000;
    const refreshed = await tokens.token(eks);
    expect(refreshed).not.toBe(first);
    expect(decode(refreshed).searchParams.get('X-Amz-Date')).toBe('20261201T081430Z');
    expect(fetched).toBe(2);
  });

  it('with roleArn: the token is signed with the assumed role (STS AssumeRole signed with the own credentials)', async () => {
    const calls: { url: string; body?: string; auth?: string }[] = [];
    const fake: FetchLike = (url, init) => {
      calls.push({
        url,
        ...(init.body !== undefined ? { body: init.body } : {}),
        auth: init.headers['authorization'] ?? '',
      });
      return Promise.resolve({
        status: 200,
        text: () =>
          Promise.resolve(
            '<AssumeRoleResponse><AssumeRoleResult><Credentials><AccessKeyId>ASIAASSUMED</AccessKeyId><SecretAccessKey>s3cr3t</SecretAccessKey><SessionToken>assumed-session</SessionToken><Expiration>2026-12-01T09:00:00Z</Expiration></Credentials></AssumeRoleResult></AssumeRoleResponse>',
          ),
      });
    };
    const tokens = createEksTokens({
      credentials: () => Promise.resolve(credentials),
      now: () => at,
      fetch: fake,
    });
    const token = await tokens.token({
      name: 'prod',
      region: 'eu-west-1',
      roleArn: 'arn:aws:iam::123456789012:role/convoy-prod',
    });
    expect(calls).toHaveLength(1);
    expect(calls[0]?.url).toBe('https://sts.eu-west-1.amazonaws.com/');
    expect(calls[0]?.body).toContain('Action=AssumeRole');
    expect(calls[0]?.body).toContain('RoleArn=arn%3Aaws%3Aiam%3A%3A123456789012%3Arole%2Fconvoy-prod');
    expect(calls[0]?.auth).toContain('Credential=AKIDEXAMPLE/');
    const q = decode(token).searchParams;
    expect(q.get('X-Amz-Credential')).toMatch(/^ASIAASSUMED\//);
    expect(q.get('X-Amz-Security-Token')).toBe('assumed-session');
  });

  it('bad input: an EKS cluster name that does not exist → a ClusterResolutionError naming it (ClusterNotReady), no credentials in the message', async () => {
    const fake: FetchLike = () =>
      Promise.resolve({
        status: 404,
        text: () => Promise.resolve('{"message":"No cluster found for name: nope."}'),
      });
    const tokens = createEksTokens({
      credentials: () => Promise.resolve(credentials),
      now: () => at,
      fetch: fake,
    });
    const error = await tokens
      .access({ name: 'nope', region: 'eu-west-1' }, 'Cluster team-a/prod')
      .catch((e: unknown) => e as Error);
    expect(error).toBeInstanceOf(Error);
    expect((error as Error).name).toBe('ClusterResolutionError');
    expect((error as Error).message).toContain('no cluster nope in eu-west-1');
    expect((error as Error).message).not.toContain(credentials.secretAccessKey);
    const unreachable = createEksTokens({
      credentials: () => Promise.resolve(credentials),
      now: () => at,
      fetch: () => Promise.reject(new Error('getaddrinfo ENOTFOUND eks.eu-west-1.amazonaws.com')),
    });
    const down = await unreachable
      .access({ name: 'prod', region: 'eu-west-1' }, 'Cluster team-a/prod')
      .catch((e: unknown) => e as Error);
    expect((down as Error).message).toContain('unreachable');
  });

  it('access: endpoint and CA from DescribeCluster, the token sent as the bearer token', async () => {
    const ca = Buffer.from('-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n').toString(
      'base64',
    );
    const fake: FetchLike = (url) =>
      Promise.resolve({
        status: 200,
        text: () =>
          Promise.resolve(
            JSON.stringify({
              cluster: {
                endpoint: 'https://ABC.gr7.eu-west-1.eks.amazonaws.com',
                certificateAuthority: { data: ca },
              },
            }),
          ),
        ...(url ? {} : {}),
      });
    const tokens = createEksTokens({
      credentials: () => Promise.resolve(credentials),
      now: () => at,
      fetch: fake,
    });
    const config = await tokens.access({ name: 'prod', region: 'eu-west-1' }, 'Cluster team-a/prod');
    expect(config.server).toBe('https://ABC.gr7.eu-west-1.eks.amazonaws.com');
    expect(config.ca).toContain('BEGIN CERTIFICATE');
    expect(config.token).toBeUndefined();
    expect((await config.tokenSource!()).startsWith(TOKEN_PREFIX)).toBe(true);
  });
});
