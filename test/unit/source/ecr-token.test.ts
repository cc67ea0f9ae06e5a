// ECR through IAM (`provider: aws`): the GetAuthorizationToken request and answer in the
// documented AWS JSON 1.1 shapes, the token's base64 "AWS:<password>" as basic-auth credentials,
// and the per-container cache that renews the token an hour before its 12-hour expiry.
import { describe, expect, it } from 'vitest';
import { createEcrTokenSource, EcrTokenError } from '../../../adapters/aws/ecr-token.ts';
import type { FetchLike } from '../../../adapters/aws/eks-token.ts';
import {
  ECR_TOKEN_RENEW_BEFORE_MS,
  ecrRegistryOf,
  ecrTokenFresh,
  EcrAnswerError,
  getAuthorizationTokenBody,
  parseAuthorizationToken,
} from '../../../domain/source/ecr.ts';

const HOST = '123456789012.dkr.ecr.eu-west-1.amazonaws.com';
const HOUR = 3_600_000;

/** The answer of GetAuthorizationToken as the ECR API reference documents it (expiresAt: epoch seconds). */
function answer(password: string, expiresAtMs: number): string {
  return JSON.stringify({
    authorizationData: [
      {
        authorizationToken: Buffer.from(`AWS:${password}`).toString('base64'),
        expiresAt: expiresAtMs / 1000,
        proxyEndpoint: `https://${HOST}`,
      },
    ],
  });
}

describe('ECR registry hosts', () => {
  it.each([
    [
      HOST,
      { account: '123456789012', region: 'eu-west-1', endpoint: 'https://api.ecr.eu-west-1.amazonaws.com' },
    ],
    [
      '123456789012.dkr.ecr-fips.us-east-1.amazonaws.com',
      { account: '123456789012', region: 'us-east-1', endpoint: 'https://ecr-fips.us-east-1.amazonaws.com' },
    ],
    [
      '123456789012.dkr.ecr.cn-north-1.amazonaws.com.cn',
      {
        account: '123456789012',
        region: 'cn-north-1',
        endpoint: 'https://api.ecr.cn-north-1.amazonaws.com.cn',
      },
    ],
  ])('%s', (host, expected) => {
    expect(ecrRegistryOf(host)).toEqual(expected);
  });

  it.each([
    'ghcr.io',
    'public.ecr.aws',
    '12345.dkr.ecr.eu-west-1.amazonaws.com',
    '123456789012.dkr.ecr.eu-west-1.amazonaws.com.evil.example',
  ])('%s is not a private ECR registry', (host) => {
    expect(ecrRegistryOf(host)).toBeUndefined();
  });
});

describe('GetAuthorizationToken request and answer', () => {
  it('the request names the registry (account) in registryIds', () => {
    expect(JSON.parse(getAuthorizationTokenBody(ecrRegistryOf(HOST)!))).toEqual({
      registryIds: ['123456789012'],
    });
  });

  it('the token is base64 "AWS:<password>": basic auth with user AWS; expiresAt (epoch seconds) in ms', () => {
    const token = parseAuthorizationToken(answer('eyJwYXlsb2FkIjoi:with:colons', 1_800_000_000_000));
    expect(token).toEqual({
      credentials: { username: 'AWS', password: 'eyJwYXlsb2FkIjoi:with:colons' },
      expiresAt: 1_800_000_000_000,
    });
  });

  it.each([
    ['not JSON', 'nope', 'is not JSON'],
    ['no data', '{"authorizationData":[]}', 'has no authorizationData[0].authorizationToken'],
    [
      'no colon',
      JSON.stringify({
        authorizationData: [
          { authorizationToken: Buffer.from('AWSsecret').toString('base64'), expiresAt: 1 },
        ],
      }),
      'is not base64 of user:password',
    ],
    [
      'no expiry',
      JSON.stringify({
        authorizationData: [{ authorizationToken: Buffer.from('AWS:secret').toString('base64') }],
      }),
      'has no expiresAt',
    ],
  ])('a malformed answer (%s) is refused without echoing the token', (_what, text, message) => {
    expect(() => parseAuthorizationToken(text)).toThrow(EcrAnswerError);
    expect(() => parseAuthorizationToken(text)).toThrow(message);
    try {
      parseAuthorizationToken(text);
    } catch (error) {
      expect(String(error)).not.toContain('secret');
    }
  });

  it('a token is fresh until an hour before it expires, not up to the expiry', () => {
    const token = { credentials: { username: 'AWS', password: 'p' }, expiresAt: 12 * HOUR };
    expect(ECR_TOKEN_RENEW_BEFORE_MS).toBe(HOUR);
    expect(ecrTokenFresh(token, 0)).toBe(true);
    expect(ecrTokenFresh(token, 11 * HOUR - 1)).toBe(true);
    expect(ecrTokenFresh(token, 11 * HOUR)).toBe(false);
  });
});

describe('createEcrTokenSource', () => {
  function source(answers: (() => { status: number; text: string })[], clock: { now: number }) {
    const requests: { url: string; headers: Record<string, string>; body: string | undefined }[] = [];
    const fetch: FetchLike = (url, init) => {
      requests.push({ url, headers: init.headers, body: init.body });
      const next = answers.shift();
      if (next === undefined) return Promise.reject(new Error('no more answers'));
      const a = next();
      return Promise.resolve({ status: a.status, text: () => Promise.resolve(a.text) });
    };
    const credentials = () =>
      Promise.resolve({
        accessKeyId: 'AKIDEXAMPLE',
        secretAccessKey: 'wJalrXUtnFEMI/K7MDENG',
        sessionToken: 'session',
      });
    return {
      requests,
      ecr: createEcrTokenSource({
        credentials,
        fetch,
        now: () => clock.now,
        endpoint: 'https://api.ecr.eu-west-1.amazonaws.com',
      }),
    };
  }

  it('signs GetAuthorizationToken with SigV4 for service ecr in the registry region (the function role), JSON 1.1 target', async () => {
    const clock = { now: 0 };
    const { requests, ecr } = source([() => ({ status: 200, text: answer('pw-1', 12 * HOUR) })], clock);
    expect(await ecr.credentialsFor(HOST)).toEqual({ username: 'AWS', password: 'pw-1' });
    expect(requests).toHaveLength(1);
    const r = requests[0] ?? { url: '', headers: {}, body: undefined };
    expect(r.url).toBe('https://api.ecr.eu-west-1.amazonaws.com/');
    expect(r.headers['x-amz-target']).toBe('AmazonEC2ContainerRegistry_V20150921.GetAuthorizationToken');
    expect(r.headers['content-type']).toBe('application/x-amz-json-1.1');
    expect(r.headers['authorization']).toMatch(
      /^AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE\/\d{8}\/eu-west-1\/ecr\/aws4_request, SignedHeaders=[^,]*x-amz-target[^,]*, Signature=[0-9a-f]{64}$/,
    );
    expect(r.headers['x-amz-security-token']).toBe('session');
    expect(JSON.parse(r.body ?? '')).toEqual({ registryIds: ['123456789012'] });
  });

  it('caches the token per registry until an hour before expiresAt, then asks again', async () => {
    const clock = { now: 0 };
    const { requests, ecr } = source(
      [
        () => ({ status: 200, text: answer('pw-1', 12 * HOUR) }),
        () => ({ status: 200, text: answer('pw-2', 23 * HOUR) }),
      ],
      clock,
    );
    expect((await ecr.credentialsFor(HOST)).password).toBe('pw-1');
    clock.now = 10 * HOUR;
    expect((await ecr.credentialsFor(HOST)).password).toBe('pw-1');
    expect(requests).toHaveLength(1);
    clock.now = 11 * HOUR; // 11 h: within the hour before the 12-h expiry
    expect((await ecr.credentialsFor(HOST)).password).toBe('pw-2');
    expect(requests).toHaveLength(2);
  });

  it('concurrent resolves share one request', async () => {
    const clock = { now: 0 };
    const { requests, ecr } = source([() => ({ status: 200, text: answer('pw-1', 12 * HOUR) })], clock);
    const all = await Promise.all([
      ecr.credentialsFor(HOST),
      ecr.credentialsFor(HOST),
      ecr.credentialsFor(HOST),
    ]);
    expect(all.map((c) => c.password)).toEqual(['pw-1', 'pw-1', 'pw-1']);
    expect(requests).toHaveLength(1);
  });

  it('a refusal names the registry, the status and the ECR error type, and is not cached', async () => {
    const clock = { now: 0 };
    const { requests, ecr } = source(
      [
        () => ({
          status: 400,
          text: JSON.stringify({ __type: 'com.amazonaws.ecr#AccessDeniedException', message: 'no' }),
        }),
        () => ({ status: 200, text: answer('pw-1', 12 * HOUR) }),
      ],
      clock,
    );
    await expect(ecr.credentialsFor(HOST)).rejects.toThrow(EcrTokenError);
    await expect(ecr.credentialsFor(HOST)).resolves.toEqual({ username: 'AWS', password: 'pw-1' });
    expect(requests).toHaveLength(2);
  });

  it('the message of a refusal', async () => {
    const { ecr } = source(
      [() => ({ status: 400, text: JSON.stringify({ __type: 'AccessDeniedException' }) })],
      { now: 0 },
    );
    await expect(ecr.credentialsFor(HOST)).rejects.toThrow(
      `ecr:GetAuthorizationToken for registry ${HOST} failed: HTTP 400 AccessDeniedException (does the function role have ecr:GetAuthorizationToken? the construct grants it with ecrRepositories)`,
    );
  });

  it('a registry that is not ECR is refused before any request', async () => {
    const { requests, ecr } = source([], { now: 0 });
    await expect(ecr.credentialsFor('ghcr.io')).rejects.toThrow(
      'provider: aws needs an ECR registry (<account>.dkr.ecr.<region>.amazonaws.com), not ghcr.io',
    );
    expect(requests).toHaveLength(0);
  });
});
