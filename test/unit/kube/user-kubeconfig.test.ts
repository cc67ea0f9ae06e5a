// The user's own kubeconfig: found and merged as kubectl does, parsed by client-node, bridged to
// convoy's transport settings. Talking to a real apiserver is test/integration/cli-kubeconfig.test.ts.
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import {
  connectClientNodeKubeConfig,
  fromClientNodeKubeConfig,
} from '../../../adapters/kube/client-node-config.ts';
import { loadUserKubeConfig, userKubeconfigFiles } from '../../../adapters/kube/user-kubeconfig.ts';

const b64url = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

describe('the user kubeconfig, as kubectl finds and merges it', () => {
  let dir: string;
  const write = async (name: string, config: Record<string, unknown> | string) => {
    const path = join(dir, name);
    await writeFile(
      path,
      typeof config === 'string' ? config : stringify({ apiVersion: 'v1', kind: 'Config', ...config }),
    );
    return path;
  };
  const cluster = (
    name: string,
    server = `https://${name}.example:6443`,
    extra: Record<string, unknown> = {},
  ) => ({ name, cluster: { server, ...extra } });
  const context = (name: string, clusterName: string, user: string) => ({
    name,
    context: { cluster: clusterName, user },
  });

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'convoy-user-kubeconfig-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('--kubeconfig is the only file read; KUBECONFIG lists the existing files in order; else ~/.kube/config; else none', async () => {
    const a = await write('a.yaml', { clusters: [cluster('a')] });
    const b = await write('b.yaml', { clusters: [cluster('b')] });
    const missing = join(dir, 'missing.yaml');
    expect(userKubeconfigFiles({ kubeconfig: a, env: { KUBECONFIG: b } })).toEqual([a]);
    expect(userKubeconfigFiles({ env: { KUBECONFIG: [missing, b, a].join(':') } })).toEqual([b, a]);
    expect(userKubeconfigFiles({ env: { HOME: join(dir, 'no-home') } })).toEqual([]);
    expect(() => userKubeconfigFiles({ env: { KUBECONFIG: missing } })).toThrow(
      `KUBECONFIG names ${missing}, which does not exist`,
    );
    expect(() => userKubeconfigFiles({ kubeconfig: missing })).toThrow(
      `--kubeconfig ${missing} does not exist`,
    );
  });

  it('merging: the first file to name a cluster, user or context wins, and the first current-context set wins', async () => {
    const first = await write('m1.yaml', {
      users: [{ name: 'me', user: { token: 'first' } }],
      contexts: [context('work', 'prod', 'me')],
    });
    const second = await write('m2.yaml', {
      clusters: [cluster('prod')],
      users: [{ name: 'me', user: { token: 'second' } }],
      'current-context': 'work',
    });
    const third = await write('m3.yaml', {
      clusters: [cluster('prod', 'https://other.example')],
      'current-context': 'elsewhere',
    });
    const kc = loadUserKubeConfig([first, second, third]);
    expect(kc.getCurrentContext()).toBe('work');
    expect(kc.getCurrentCluster()?.server).toBe('https://prod.example:6443');
    expect(kc.getCurrentUser()?.token).toBe('first');
    expect(loadUserKubeConfig([first, second, third], 'work').getCurrentUser()?.token).toBe('first');
  });

  it('a context that is missing, or names a cluster or user no file defines, is a clear error', async () => {
    const path = await write('dangling.yaml', {
      clusters: [cluster('c')],
      contexts: [context('x', 'c', 'ghost'), context('y', 'gone', 'ghost')],
      'current-context': 'x',
    });
    expect(() => loadUserKubeConfig([path])).toThrow(
      `the kubeconfig ${path}: context x names the user ghost, which is not defined`,
    );
    expect(() => loadUserKubeConfig([path], 'y')).toThrow(
      `context y names the cluster gone, which is not defined`,
    );
    expect(() => loadUserKubeConfig([path], 'z')).toThrow(`the kubeconfig ${path} has no context z`);
    const none = await write('no-current.yaml', { clusters: [cluster('c')] });
    expect(() => loadUserKubeConfig([none])).toThrow('set no current-context; pass --context');
  });

  it('a file that is not YAML is refused without quoting it (it holds credentials)', async () => {
    const path = await write('broken.yaml', 'users:\n  - name: me\n    user: {token: s3cret-value\n');
    expect(() => loadUserKubeConfig([path])).toThrow(`the kubeconfig ${path} is not a valid kubeconfig`);
    try {
      loadUserKubeConfig([path]);
    } catch (error) {
      expect((error as Error).message).not.toContain('s3cret');
    }
  });

  it('relative paths are resolved against the file: certificate files, tokenFile and an exec command with a slash', async () => {
    const sub = join(dir, 'sub');
    await mkdir(sub, { recursive: true });
    await writeFile(join(sub, 'ca.crt'), 'CA PEM');
    await writeFile(join(sub, 'me.token'), 'file-token\n');
    const path = join(sub, 'config');
    await writeFile(
      path,
      stringify({
        clusters: [cluster('c', 'https://c.example', { 'certificate-authority': 'ca.crt' })],
        users: [
          { name: 'file', user: { tokenFile: 'me.token' } },
          {
            name: 'exec',
            user: {
              exec: { apiVersion: 'client.authentication.k8s.io/v1beta1', command: './bin/get-token' },
            },
          },
          {
            name: 'path',
            user: { exec: { apiVersion: 'client.authentication.k8s.io/v1beta1', command: 'aws' } },
          },
        ],
        contexts: [context('file', 'c', 'file'), context('exec', 'c', 'exec'), context('path', 'c', 'path')],
        'current-context': 'file',
      }),
    );
    const kc = loadUserKubeConfig([path]);
    const config = fromClientNodeKubeConfig(kc);
    expect(config.ca).toBe('CA PEM');
    expect(config.bearerToken()).toBe('file-token');
    expect((loadUserKubeConfig([path], 'exec').getCurrentUser()?.exec as { command: string }).command).toBe(
      join(sub, 'bin', 'get-token'),
    );
    expect((loadUserKubeConfig([path], 'path').getCurrentUser()?.exec as { command: string }).command).toBe(
      'aws',
    );
  });

  it('an OIDC auth-provider with a valid id-token: client-node gives the bearer token, per request', async () => {
    const idToken = `${b64url({ alg: 'none' })}.${b64url({ exp: 4102444800, sub: 'me' })}.sig`;
    const path = await write('oidc.yaml', {
      clusters: [cluster('c')],
      users: [
        {
          name: 'me',
          user: {
            'auth-provider': {
              name: 'oidc',
              config: { 'id-token': idToken, 'idp-issuer-url': 'https://issuer.example', 'client-id': 'k' },
            },
          },
        },
      ],
      contexts: [context('me', 'c', 'me')],
      'current-context': 'me',
    });
    const config = fromClientNodeKubeConfig(loadUserKubeConfig([path]));
    expect(await config.tokenSource?.()).toBe(idToken);
    const connected = await connectClientNodeKubeConfig(loadUserKubeConfig([path]));
    expect(connected.bearerToken()).toBe(idToken);
  });

  it('impersonation (`as`) and basic auth carry over', async () => {
    const path = await write('as.yaml', {
      clusters: [cluster('c')],
      users: [{ name: 'me', user: { username: 'u', password: 'p', as: 'someone' } }],
      contexts: [context('me', 'c', 'me')],
      'current-context': 'me',
    });
    const config = await connectClientNodeKubeConfig(loadUserKubeConfig([path]));
    expect(config).toMatchObject({ username: 'u', password: 'p', impersonate: 'someone' });
  });

  it('proxy-url: the CLI connection gets a proxy agent; the synchronous bridge refuses it in one line', async () => {
    const path = await write('proxy.yaml', {
      clusters: [cluster('c', 'https://c.example', { 'proxy-url': 'socks5://127.0.0.1:1080' })],
      users: [{ name: 'me', user: { token: 't' } }],
      contexts: [context('me', 'c', 'me')],
      'current-context': 'me',
    });
    const connected = await connectClientNodeKubeConfig(loadUserKubeConfig([path]));
    expect(connected.agent.constructor.name).toBe('SocksProxyAgent');
    expect(() => fromClientNodeKubeConfig(loadUserKubeConfig([path]))).toThrow(
      'cluster c: proxy-url is used by the convoy CLI, not here; reach the server directly',
    );
  });
});
