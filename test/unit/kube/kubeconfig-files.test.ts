// The CLI's fast path (adapters/kube/kubeconfig-files.ts): one plain kubeconfig is read without
// @kubernetes/client-node; anything only client-node's loader handles falls through to it.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { plainKubeconfig } from '../../../adapters/kube/kubeconfig-files.ts';

const kubeconfig = (user: Record<string, unknown>, cluster: Record<string, unknown> = {}) =>
  JSON.stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'c', cluster: { server: 'https://127.0.0.1:6443', ...cluster } }],
    users: [{ name: 'u', user }],
    contexts: [
      { name: 'one', context: { cluster: 'c', user: 'u' } },
      { name: 'other', context: { cluster: 'c', user: 'u' } },
    ],
    'current-context': 'one',
  });

describe('plainKubeconfig: the CLI reads a plain kubeconfig without client-node', () => {
  let dir: string;
  const file = async (name: string, text: string) => {
    const path = join(dir, name);
    await writeFile(path, text);
    return path;
  };
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'convoy-kubeconfig-files-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('a token user (current-context or --context) is loaded here, with its token', async () => {
    const path = await file('token.yaml', kubeconfig({ token: 'abc' }));
    const config = plainKubeconfig([path], undefined);
    expect(config?.server).toBe('https://127.0.0.1:6443');
    expect(config?.bearerToken()).toBe('abc');
    expect(plainKubeconfig([path], 'other')?.bearerToken()).toBe('abc');
    config?.agent.destroy();
  });

  it('a tokenFile relative to the kubeconfig is read from its folder, trimmed', async () => {
    await file('token', 'from-file\n');
    const path = await file('token-file.yaml', kubeconfig({ tokenFile: 'token' }));
    expect(plainKubeconfig([path], undefined)?.bearerToken()).toBe('from-file');
  });

  it.each([
    ['an exec plugin', { exec: { apiVersion: 'client.authentication.k8s.io/v1', command: 'aws' } }, {}],
    ['an auth-provider', { 'auth-provider': { name: 'oidc' } }, {}],
    ['impersonation (as)', { token: 't', as: 'alice' }, {}],
    ['a proxy-url', { token: 't' }, { 'proxy-url': 'http://proxy:3128' }],
  ])("%s goes to client-node's loader (undefined here)", async (_what, user, cluster) => {
    const path = await file(`plugin-${_what.length}.yaml`, kubeconfig(user, cluster));
    expect(plainKubeconfig([path], undefined)).toBeUndefined();
  });

  it("several files to merge, an unknown context or a file that does not parse go to client-node's loader", async () => {
    const path = await file('merge.yaml', kubeconfig({ token: 't' }));
    expect(plainKubeconfig([path, path], undefined)).toBeUndefined();
    expect(plainKubeconfig([path], 'nowhere')).toBeUndefined();
    expect(plainKubeconfig([await file('bad.yaml', 'clusters: [')], undefined)).toBeUndefined();
  });
});
