import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  fromKubeconfigFile,
  fromKubeconfigYaml,
  fromStoredKubeconfigYaml,
  inClusterConfig,
  KubeconfigError,
  NoCurrentClusterError,
} from '../../../adapters/kube/kubeconfig.ts';
import { microTime } from '../../../adapters/kube/lease.ts';

const b64 = (text: string) => Buffer.from(text).toString('base64');

const kubeconfig = (
  user: string,
  cluster = `{server: "https://k.example:6443", certificate-authority-data: ${b64('CA')}}`,
) =>
  [
    'apiVersion: v1',
    'kind: Config',
    `clusters: [{name: c, cluster: ${cluster}}, {name: other, cluster: {server: "https://other.example"}}]`,
    `users: [{name: u, user: ${user}}, {name: v, user: {token: vee}}]`,
    'contexts: [{name: x, context: {cluster: c, user: u}}, {name: y, context: {cluster: other, user: v}}]',
    'current-context: x',
  ].join('\n');

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'convoy-kubeconfig-'));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

describe('kubeconfig loading', () => {
  it('current-context picks the cluster and user: server, CA, client certificate and key (base64 data)', () => {
    const config = fromKubeconfigYaml(
      kubeconfig(`{client-certificate-data: ${b64('CERT')}, client-key-data: ${b64('KEY')}}`),
    );
    expect(config.server).toBe('https://k.example:6443');
    expect([config.ca, config.cert, config.key]).toEqual(['CA', 'CERT', 'KEY']);
    expect(config.bearerToken()).toBeUndefined();
  });

  it('a context option overrides current-context; tokens and insecure-skip-tls-verify are read', () => {
    const config = fromKubeconfigYaml(kubeconfig('{token: tee}'), { context: 'y' });
    expect(config.server).toBe('https://other.example');
    expect(config.bearerToken()).toBe('vee');
    const insecure = fromKubeconfigYaml(
      kubeconfig('{token: tee}', '{server: "https://k.example/", insecure-skip-tls-verify: true}'),
    );
    expect(insecure.insecureSkipTlsVerify).toBe(true);
    expect(insecure.server).toBe('https://k.example');
  });

  it('no current-context → NoCurrentClusterError', () => {
    expect(() => fromKubeconfigYaml(kubeconfig('{token: t}').replace('current-context: x', ''))).toThrow(
      NoCurrentClusterError,
    );
  });

  it('exec and auth-provider are refused, naming the field', () => {
    expect(() => fromKubeconfigYaml(kubeconfig('{exec: {command: /bin/sh}}'))).toThrow(
      /users\[u\]\.user\.exec/,
    );
    expect(() => fromKubeconfigYaml(kubeconfig('{auth-provider: {name: gcp}}'))).toThrow(/auth-provider/);
  });

  it('a stored kubeconfig reads no file: certificate-authority, client-certificate, tokenFile are refused', () => {
    const withFile = kubeconfig(
      '{token: t}',
      '{server: "https://k.example", certificate-authority: /etc/passwd}',
    );
    expect(() => fromStoredKubeconfigYaml(withFile, 'stored')).toThrow(KubeconfigError);
    expect(() => fromStoredKubeconfigYaml(kubeconfig('{client-certificate: /etc/passwd}'), 'stored')).toThrow(
      /client-certificate/,
    );
    expect(() => fromStoredKubeconfigYaml(kubeconfig('{tokenFile: /etc/passwd}'), 'stored')).toThrow(
      /tokenFile/,
    );
  });

  it('the management kubeconfig file may name files, relative to its folder', async () => {
    await writeFile(join(dir, 'ca.pem'), 'CA FROM FILE');
    await writeFile(join(dir, 'token'), 'file-token\n');
    const path = join(dir, 'config');
    await writeFile(
      path,
      kubeconfig('{tokenFile: token}', '{server: "https://k.example", certificate-authority: ca.pem}'),
    );
    const config = fromKubeconfigFile(path);
    expect(config.ca).toBe('CA FROM FILE');
    expect(config.bearerToken()).toBe('file-token');
  });

  it('invalid YAML → an error that does not quote the text', () => {
    const error = (() => {
      try {
        fromStoredKubeconfigYaml('users: [token: s3cret', 'the kubeconfig in Secret a/b');
      } catch (e) {
        return e as Error;
      }
      return undefined;
    })();
    expect(error?.message).toBe('the kubeconfig in Secret a/b is not valid YAML');
  });

  it('in-cluster: KUBERNETES_SERVICE_HOST/PORT, the service account CA, and a token re-read from its file', async () => {
    await writeFile(join(dir, 'ca.crt'), 'SA CA');
    await writeFile(join(dir, 'token'), 'sa-token');
    const config = inClusterConfig(
      { KUBERNETES_SERVICE_HOST: 'fd00::1', KUBERNETES_SERVICE_PORT: '443' },
      dir,
    );
    expect(config.server).toBe('https://[fd00::1]:443');
    expect(config.ca).toBe('SA CA');
    expect(config.bearerToken()).toBe('sa-token');
    expect(() => inClusterConfig({}, dir)).toThrow(/KUBERNETES_SERVICE_HOST/);
  });
});

describe('Lease MicroTime', () => {
  it('is written with six fraction digits, as the apiserver does', () => {
    expect(microTime(new Date('2026-11-29T15:21:13.067Z'))).toBe('2026-11-29T15:21:13.067000Z');
  });
});
