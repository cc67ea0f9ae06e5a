/**
 * The CLI with kubeconfigs as users have them, against the real apiserver, run as a child process:
 * an exec plugin like the one `aws eks update-kubeconfig` writes (run once per command, its stderr
 * and exit code in one line when it fails), a tokenFile, client certificates as files, a
 * KUBECONFIG list merged as kubectl merges it, and a proxy-url through a real CONNECT proxy; and the
 * synchronous bridge `convoy dev`'s functions use, through the same exec plugin.
 * alice (a static token of the harness) may read Releases in the test namespace only.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { connect as netConnect, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RbacAuthorizationV1Api } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { fromClientNodeKubeConfig } from '../../adapters/kube/client-node-config.ts';
import { createKubeClient, resourcePath } from '../../adapters/kube/http.ts';
import { loadUserKubeConfig } from '../../adapters/kube/user-kubeconfig.ts';
import { runConvoy } from '../harness/cli.ts';
import { freshNamespace, kubeConfigFor, type FreshNamespace } from '../harness/kube.ts';
import { convoyApi, releaseSpec } from '../harness/releases.ts';

interface AdminKubeconfig {
  clusters: { cluster: { server: string; 'certificate-authority-data': string } }[];
  users: { name: string; user: { 'client-certificate-data'?: string; 'client-key-data'?: string } }[];
}

const EXEC_API = 'client.authentication.k8s.io/v1beta1';

describe('the CLI takes every kubeconfig kubectl takes', { timeout: 120_000 }, () => {
  const adminPath = inject('kubeconfigPath');
  const aliceToken = inject('tokens')['alice'] ?? '';
  let dir: string;
  let ns: FreshNamespace;
  let admin: AdminKubeconfig;
  const server = () => admin.clusters[0]?.cluster.server ?? '';
  const caData = () => admin.clusters[0]?.cluster['certificate-authority-data'] ?? '';
  const cluster = (extra: Record<string, unknown> = {}) => ({
    name: 'test',
    cluster: { server: server(), 'certificate-authority-data': caData(), ...extra },
  });
  const config = (user: Record<string, unknown>, clusterExtra: Record<string, unknown> = {}) =>
    stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [cluster(clusterExtra)],
      users: [{ name: 'alice', user }],
      contexts: [{ name: 'alice@test', context: { cluster: 'test', user: 'alice', namespace: ns.name } }],
      'current-context': 'alice@test',
    });
  const write = async (name: string, text: string, mode = 0o600) => {
    const path = join(dir, name);
    await writeFile(path, text, { mode });
    return path;
  };
  const getApp = (kubeconfig: string, env: Record<string, string> = {}) =>
    runConvoy(['get', 'app', '-n', ns.name], kubeconfig, env);

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'convoy-cli-kubeconfig-'));
    admin = parse(await readFile(adminPath, 'utf8')) as AdminKubeconfig;
    const kc = kubeConfigFor(adminPath);
    ns = await freshNamespace(kc, 'cli-kubeconfig');
    const rbac = kc.makeApiClient(RbacAuthorizationV1Api);
    await rbac.createNamespacedRole({
      namespace: ns.name,
      body: {
        metadata: { name: 'release-reader' },
        rules: [
          { apiGroups: ['convoy.dev'], resources: ['releases'], verbs: ['get', 'list'] },
          { apiGroups: ['', 'events.k8s.io'], resources: ['events'], verbs: ['list'] },
        ],
      },
    });
    await rbac.createNamespacedRoleBinding({
      namespace: ns.name,
      body: {
        metadata: { name: 'alice-reads-releases' },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'release-reader' },
        subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'alice' }],
      },
    });
    await convoyApi(kc).create('Release', ns.name, 'app', releaseSpec());
  });
  afterAll(async () => {
    await ns?.delete();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  /** An exec plugin that logs each run (args, env, KUBERNETES_EXEC_INFO) and prints alice's token. */
  const execPlugin = async (name: string, body: string) => write(name, `#!/bin/sh\n${body}\n`, 0o700);

  it('an exec plugin (v1beta1, command, args, env) authenticates get, describe and status, and runs once per command', async () => {
    const runs = join(dir, 'exec-runs.log');
    const plugin = await execPlugin(
      'get-token',
      [
        `echo "args=$* profile=$AWS_PROFILE info=$KUBERNETES_EXEC_INFO" >> "${runs}"`,
        `printf '{"apiVersion":"${EXEC_API}","kind":"ExecCredential","status":{"token":"%s","expirationTimestamp":"2099-01-01T00:00:00Z"}}' "$ALICE_TOKEN"`,
      ].join('\n'),
    );
    const kubeconfig = await write(
      'exec.yaml',
      config({
        exec: {
          apiVersion: EXEC_API,
          command: plugin,
          args: ['eks', 'get-token', '--cluster-name', 'test'],
          env: [
            { name: 'AWS_PROFILE', value: 'dev' },
            { name: 'ALICE_TOKEN', value: aliceToken },
          ],
          interactiveMode: 'IfAvailable',
          provideClusterInfo: false,
        },
      }),
    );
    const get = await getApp(kubeconfig);
    expect(get.stderr).toBe('');
    expect(get.code).toBe(0);
    expect(get.stdout).toMatch(/^app\s/m);
    // describe reads the Release and its Events: two requests, one plugin run.
    const describe = await runConvoy(['describe', 'app', '-n', ns.name], kubeconfig);
    expect(describe.code).toBe(0);
    expect(describe.stdout).toContain('Name:        app');
    const status = await runConvoy(['status', 'app', '-n', ns.name], kubeconfig);
    expect(status.stderr).not.toMatch(/credential|401|403/);
    expect(status.code).toBe(3); // waiting: no functions run in this test
    const lines = (await readFile(runs, 'utf8')).trim().split('\n');
    expect(lines).toHaveLength(3);
    expect(lines[0]).toContain('args=eks get-token --cluster-name test profile=dev');
    const info = JSON.parse(lines[0]?.split(' info=')[1] ?? '{}') as {
      apiVersion: string;
      kind: string;
      spec: { interactive: boolean };
    };
    expect(info).toEqual({ apiVersion: EXEC_API, kind: 'ExecCredential', spec: { interactive: false } });
  });

  it("the synchronous bridge (convoy dev's in-process functions, the relay) authenticates through the same exec plugin", async () => {
    const runs = join(dir, 'bridge-runs.log');
    const plugin = await execPlugin(
      'bridge-token',
      `echo run >> "${runs}"\nprintf '{"apiVersion":"${EXEC_API}","kind":"ExecCredential","status":{"token":"%s"}}' "$ALICE_TOKEN"`,
    );
    const path = await write(
      'bridge.yaml',
      config({
        exec: { apiVersion: EXEC_API, command: plugin, env: [{ name: 'ALICE_TOKEN', value: aliceToken }] },
      }),
    );
    const bridged = fromClientNodeKubeConfig(loadUserKubeConfig([path]));
    const client = createKubeClient(bridged);
    try {
      const releases = await Promise.all(
        [1, 2, 3].map(() =>
          client.get<{ metadata: { name: string } }>(
            resourcePath('convoy.dev/v1alpha1', 'releases', ns.name, 'app'),
          ),
        ),
      );
      expect(releases.map((r) => r.metadata.name)).toEqual(['app', 'app', 'app']);
      expect((await readFile(runs, 'utf8')).trim().split('\n')).toHaveLength(1);
    } finally {
      bridged.agent.destroy();
    }
  });

  it('a failing exec plugin is one line naming the command, its exit code and its stderr', async () => {
    const plugin = await execPlugin(
      'aws',
      'echo "" >&2\necho "Error loading SSO Token: Token for dev does not exist" >&2\necho "run aws sso login" >&2\nexit 255',
    );
    const run = await getApp(
      await write(
        'failing.yaml',
        config({ exec: { apiVersion: EXEC_API, command: plugin, args: ['eks', 'get-token'] } }),
      ),
    );
    expect(run.code).toBe(1);
    expect(run.stdout).toBe('');
    const lines = run.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toBe(
      `convoy: no cluster: the exec plugin ${plugin} of kubeconfig user alice failed with exit code 255: Error loading SSO Token: Token for dev does not exist | run aws sso login`,
    );
  });

  it('an exec plugin that is not installed: one line with the installHint', async () => {
    const run = await getApp(
      await write(
        'missing.yaml',
        config({
          exec: {
            apiVersion: EXEC_API,
            command: 'convoy-test-no-such-plugin',
            installHint: 'install it from example.com/plugin',
          },
        }),
      ),
    );
    expect(run.code).toBe(1);
    expect(run.stderr.trim()).toBe(
      'convoy: no cluster: the exec plugin convoy-test-no-such-plugin of kubeconfig user alice was not found (install it from example.com/plugin)',
    );
  });

  it('an exec plugin printing no ExecCredential: one line, the output not quoted', async () => {
    const plugin = await execPlugin('garbled', `echo "not json ${aliceToken}"`);
    const run = await getApp(
      await write('garbled.yaml', config({ exec: { apiVersion: EXEC_API, command: plugin } })),
    );
    expect(run.code).toBe(1);
    expect(run.stderr.trim()).toBe(
      `convoy: no cluster: the exec plugin ${plugin} of kubeconfig user alice printed no usable ExecCredential: stdout is not JSON`,
    );
    expect(run.stderr).not.toContain(aliceToken);
  });

  it('tokenFile (relative to the kubeconfig, ending in a newline) authenticates', async () => {
    await write('alice.token', `${aliceToken}\n`);
    const run = await getApp(await write('token-file.yaml', config({ tokenFile: 'alice.token' })));
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
  });

  it('client certificates and the CA as files, relative to the kubeconfig', async () => {
    const user = admin.users.find((u) => u.name === 'admin')?.user ?? admin.users[0]?.user ?? {};
    const pem = (b64: string | undefined) => Buffer.from(b64 ?? '', 'base64').toString('utf8');
    await write('ca.crt', pem(caData()));
    await write('admin.crt', pem(user['client-certificate-data']));
    await write('admin.key', pem(user['client-key-data']));
    const text = stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name: 'test', cluster: { server: server(), 'certificate-authority': 'ca.crt' } }],
      users: [{ name: 'admin', user: { 'client-certificate': 'admin.crt', 'client-key': './admin.key' } }],
      contexts: [{ name: 'admin@test', context: { cluster: 'test', user: 'admin' } }],
      'current-context': 'admin@test',
    });
    const run = await getApp(await write('cert-files.yaml', text));
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
  });

  it('a KUBECONFIG list merges as kubectl does: missing files skipped, the first file to name a user or set current-context wins', async () => {
    const first = await write(
      'merge-1.yaml',
      stringify({
        apiVersion: 'v1',
        kind: 'Config',
        users: [{ name: 'alice', user: { token: aliceToken } }],
        contexts: [{ name: 'alice@test', context: { cluster: 'test', user: 'alice' } }],
        'current-context': 'alice@test',
      }),
    );
    const second = await write(
      'merge-2.yaml',
      stringify({
        apiVersion: 'v1',
        kind: 'Config',
        clusters: [cluster()],
        users: [{ name: 'alice', user: { token: 'not-alices-token' } }],
        contexts: [{ name: 'nowhere', context: { cluster: 'nowhere', user: 'alice' } }],
        'current-context': 'nowhere',
      }),
    );
    const run = await getApp([join(dir, 'does-not-exist.yaml'), first, second].join(':'));
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    // --context picks a context of any file of the list.
    const other = await runConvoy(
      ['get', 'app', '-n', ns.name, '--context', 'nowhere'],
      [first, second].join(':'),
    );
    expect(other.code).toBe(1);
    expect(other.stderr.trim()).toMatch(
      /^convoy: no cluster: the kubeconfigs .* context nowhere names the cluster nowhere, which is not defined$/,
    );
  });

  it('proxy-url: every request goes through the proxy (HTTP CONNECT)', async () => {
    const tunnels: string[] = [];
    const open: { destroy(): void }[] = [];
    const proxy: Server = createServer((_req, res) => res.writeHead(405).end());
    proxy.on('connect', (req, socket, head) => {
      tunnels.push(req.url ?? '');
      const [host, port] = (req.url ?? '').split(':');
      const upstream = netConnect(Number(port), host ?? '', () => {
        socket.write('HTTP/1.1 200 Connection Established\r\n\r\n');
        upstream.write(head);
        upstream.pipe(socket);
        socket.pipe(upstream);
      });
      open.push(socket, upstream);
      upstream.on('error', () => socket.destroy());
      socket.on('error', () => upstream.destroy());
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    try {
      const proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
      const run = await getApp(
        await write('proxy.yaml', config({ token: aliceToken }, { 'proxy-url': proxyUrl })),
      );
      expect(run.stderr).toBe('');
      expect(run.code).toBe(0);
      expect(tunnels).toEqual([new URL(server()).host]);
    } finally {
      // The apiserver keeps its side of a tunnel open after the CLI is gone; close() waits for them.
      for (const s of open) s.destroy();
      await new Promise((resolve) => proxy.close(resolve));
    }
  });

  it('an exec plugin that is not executable (EACCES) is one line, not a stack trace', async () => {
    const plugin = await write('not-executable', '#!/bin/sh\necho hi\n', 0o600);
    const run = await getApp(
      await write('noexec.yaml', config({ exec: { apiVersion: EXEC_API, command: plugin } })),
    );
    expect(run.code).toBe(1);
    expect(run.stderr.trim()).toBe(
      `convoy: no cluster: the exec plugin ${plugin} of kubeconfig user alice could not start: EACCES`,
    );
  });
});
