// Helm charts from OCI registries, on the real apiserver, a real registry
// (distribution v3.1.2, test/harness/oci-registry.ts) with charts pushed by the real `helm push`,
// and the real helm binary rendering them.
import { createServer, type Socket } from 'node:net';
import { CoreV1Api } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { Release } from '../../domain/api/objects.ts';
import type { ReconcilePorts } from '../../domain/reconcile/ports.ts';
import { fetchOciHelmChart } from '../../adapters/source/oci-helm.ts';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { kubeConfigFor } from '../harness/kube.ts';
import { startOciRegistry, type OciRegistry } from '../harness/oci-registry.ts';
import { startReconcileEnv, type ReconcileEnv } from '../harness/reconcile-env.ts';

function applied(release: Release) {
  return release.status?.conditions?.find((c) => c.type === 'Applied');
}

describe('Helm charts from OCI registries', () => {
  let env: ReconcileEnv;
  let core: CoreV1Api;
  let open: OciRegistry;
  let locked: OciRegistry;
  let tokenAuth: OciRegistry;
  /** The ports of an installation that lets Releases reach both test registries over plain HTTP. */
  let ports: ReconcilePorts;
  const digests: Record<string, string> = {};
  let lockedDigest = '';
  let n = 0;

  beforeAll(async () => {
    env = await startReconcileEnv(kubeConfigFor(inject('kubeconfigPath')), 'oci-helm');
    core = env.kc.makeApiClient(CoreV1Api);
    open = await startOciRegistry();
    locked = await startOciRegistry({ users: [{ username: 'puller', password: 'pull-secret-123' }] });
    tokenAuth = await startOciRegistry({
      token: { users: [{ username: 'robot', password: 'robot-secret-456' }] },
    });
    // The registries (and the token server) run on 127.0.0.1: the egress allow list opens exactly them;
    // plain HTTP reaches them, the token realm included, because the installation lists them.
    const hosts = [...open.egressHosts, ...locked.egressHosts, ...tokenAuth.egressHosts];
    env.allowEgress(...hosts);
    ports = env.ports({ wiring: { tenancy: { ...env.tenancy, insecureRegistries: new Set(hosts) } } });
    for (const version of ['1.2.0', '1.2.3', '1.3.0']) {
      digests[version] = (await open.pushChart('charts', 'demo', version)).digest;
    }
  });
  afterAll(async () => {
    await open?.stop();
    await locked?.stop();
    await tokenAuth?.stop();
    await env?.close();
  });

  async function release(helm: Record<string, unknown>, extra: Record<string, unknown> = {}) {
    const name = `oci-${++n}`;
    await env.api.create('Release', env.ns.name, name, {
      cluster: { name: 'local' },
      targetNamespace: env.ns.name,
      source: { helm: { chart: 'demo', insecure: true, ...helm } },
      content: { type: 'Helm', helm: { releaseName: name } },
      ...extra,
    });
    return name;
  }

  const deployed = async (chart = 'demo') =>
    (await core.readNamespacedConfigMap({ namespace: env.ns.name, name: `${chart}-version` })).data;

  it('an exact version: resolvedSource.helm names the chart, the version and the digest helm push printed; the chart is rendered and applied', async () => {
    const name = await release({ repository: open.url('charts'), version: '1.2.0' });
    const result = await env.reconcile(name, ports);
    expect(applied(result.release)).toMatchObject({ status: 'True', reason: 'Applied' });
    expect(result.release.status?.lastAttempted?.resolvedSource?.helm).toEqual({
      repository: open.url('charts'),
      chart: 'demo',
      version: '1.2.0',
      digest: digests['1.2.0'],
    });
    expect((await deployed())?.['version']).toBe('1.2.0');
  });

  it('a range: ~1.2 over 1.2.0/1.2.3/1.3.0 → 1.2.3', async () => {
    const name = await release({ repository: open.url('charts'), version: '~1.2' });
    const result = await env.reconcile(name, ports);
    expect(applied(result.release)?.status).toBe('True');
    expect(result.release.status?.lastAttempted?.resolvedSource?.helm).toMatchObject({
      version: '1.2.3',
      digest: digests['1.2.3'],
    });
    expect((await deployed())?.['version']).toBe('1.2.3');
  });

  it('a digest: the manifest it names, with the version read from the artifact; no version means the highest semver tag', async () => {
    const byDigest = await release({ repository: open.url('charts'), digest: digests['1.2.0'] });
    const pinned = await env.reconcile(byDigest, ports);
    expect(applied(pinned.release)?.status).toBe('True');
    expect(pinned.release.status?.lastAttempted?.resolvedSource?.helm).toMatchObject({
      version: '1.2.0',
      digest: digests['1.2.0'],
    });
    expect((await deployed())?.['version']).toBe('1.2.0');

    const newest = await release({ repository: open.url('charts') });
    const highest = await env.reconcile(newest, ports);
    expect(highest.release.status?.lastAttempted?.resolvedSource?.helm).toMatchObject({
      version: '1.3.0',
      digest: digests['1.3.0'],
    });
  });

  it('a new tag in range is a new render on the next reconcile (the interval or a convoy sync re-resolves); a moved tag (same tag, new digest) is a new render too', async () => {
    const name = await release({ repository: open.url('moving'), version: '~2.0' });
    await open.pushChart('moving', 'demo', '2.0.0', 'first');
    const first = await env.reconcile(name, ports);
    expect(first.release.status?.lastAttempted?.resolvedSource?.helm?.version).toBe('2.0.0');
    const firstRef = first.release.status?.lastSuccessful?.renderRef;
    expect(firstRef).toMatch(/^sha256:/);

    const pushed = await open.pushChart('moving', 'demo', '2.0.1', 'first');
    const second = await env.reconcile(name, ports);
    expect(second.release.status?.lastAttempted?.resolvedSource?.helm).toMatchObject({
      version: '2.0.1',
      digest: pushed.digest,
    });
    expect(second.release.status?.lastSuccessful?.renderRef).not.toBe(firstRef);
    expect((await deployed())?.['version']).toBe('2.0.1');

    const moved = await open.pushChart('moving', 'demo', '2.0.1', 'second');
    expect(moved.digest).not.toBe(pushed.digest);
    const third = await env.reconcile(name, ports);
    expect(third.release.status?.lastAttempted?.resolvedSource?.helm).toMatchObject({
      version: '2.0.1',
      digest: moved.digest,
    });
    expect(third.release.status?.lastSuccessful?.renderRef).not.toBe(
      second.release.status?.lastSuccessful?.renderRef,
    );
    expect((await deployed())?.['mark']).toBe('second');

    // Unchanged tag: the same digest and the same render (from the chart cache).
    const fourth = await env.reconcile(name, ports);
    expect(fourth.release.status?.lastAttempted?.resolvedSource?.helm?.digest).toBe(moved.digest);
    expect(fourth.release.status?.lastSuccessful?.renderRef).toBe(
      third.release.status?.lastSuccessful?.renderRef,
    );
  });

  it('registry requests per resolve: a first pull reads the manifest and the layer once; then an exact version or a digest costs one manifest HEAD, a range one tag list more', async () => {
    const cache = await mkdtemp(join(tmpdir(), 'convoy-oci-count-'));
    try {
      const count = async (input: { version?: string; digest?: string }) => {
        const requests: string[] = [];
        await fetchOciHelmChart(
          { repository: open.url('charts'), chart: 'demo', plainHttp: true, ...input },
          cache,
          {
            egress: env.egress,
            onRequest: (method, path) =>
              requests.push(`${method} ${path.replace(/sha256:[0-9a-f]{64}/, '<digest>')}`),
          },
        );
        return requests;
      };
      expect(await count({ version: '1.2.0' })).toEqual([
        'HEAD /v2/charts/demo/manifests/1.2.0',
        'GET /v2/charts/demo/manifests/<digest>',
        'GET /v2/charts/demo/blobs/<digest>',
      ]);
      expect(await count({ version: '1.2.0' })).toEqual(['HEAD /v2/charts/demo/manifests/1.2.0']);
      expect(await count({ digest: digests['1.2.0'] })).toEqual(['HEAD /v2/charts/demo/manifests/<digest>']);
      expect(await count({ version: '~1.2.0' })).toEqual([
        'GET /v2/charts/demo/tags/list',
        'HEAD /v2/charts/demo/manifests/1.2.3',
        'GET /v2/charts/demo/manifests/<digest>',
        'GET /v2/charts/demo/blobs/<digest>',
      ]);
      expect(await count({ version: '~1.2.0' })).toEqual([
        'GET /v2/charts/demo/tags/list',
        'HEAD /v2/charts/demo/manifests/1.2.3',
      ]);
    } finally {
      await rm(cache, { recursive: true, force: true });
    }
  });

  it('a chart layer over the size limit is refused before download, naming the limit', async () => {
    const cache = await mkdtemp(join(tmpdir(), 'convoy-oci-limit-'));
    const requests: string[] = [];
    try {
      await expect(
        fetchOciHelmChart(
          { repository: open.url('charts'), chart: 'demo', version: '1.3.0', plainHttp: true },
          cache,
          {
            egress: env.egress,
            maxChartBytes: 100,
            onRequest: (method, path) => requests.push(`${method} ${path}`),
          },
        ),
      ).rejects.toThrow(
        /^chart demo in 127\.0\.0\.1:\d+\/charts\/demo is \d+ bytes, over convoy's chart size limit of 100 bytes; nothing was downloaded$/,
      );
      expect(requests.filter((r) => r.includes('/blobs/'))).toEqual([]);
    } finally {
      await rm(cache, { recursive: true, force: true });
    }
  });

  it('nothing in range: SourceNotReady listing the newest tags, retried', async () => {
    const name = await release(
      { repository: open.url('charts'), version: '^9' },
      { syncPolicy: { retryBackoff: { initial: '5s' } } },
    );
    const result = await env.reconcile(name, ports);
    expect(applied(result.release)).toMatchObject({ status: 'False', reason: 'SourceNotReady' });
    expect(applied(result.release)?.message).toContain(
      `chart demo in ${open.host}/charts/demo has no tag matching "^9" (newest semver tags: 1.3.0, 1.2.3, 1.2.0)`,
    );
    expect(result.outcome.kind).toBe('retry');
  });

  it('auth failure: SourceNotReady naming the registry and 401, retried with backoff; no secret in the message', async () => {
    lockedDigest = (await locked.pushChart('charts', 'demo', '1.0.0')).digest;
    const name = await release(
      { repository: locked.url('charts'), version: '1.0.0' },
      { syncPolicy: { retryBackoff: { initial: '5s' } } },
    );
    const result = await env.reconcile(name, ports);
    const cond = applied(result.release);
    expect(cond).toMatchObject({ status: 'False', reason: 'SourceNotReady' });
    expect(cond?.message).toContain(`registry ${locked.host}`);
    expect(cond?.message).toContain('HTTP 401');
    expect(result.release.status?.lastAttempted?.failure?.stage).toBe('SourceResolution');
    expect(result.outcome.kind === 'retry' && result.outcome.policy).toEqual({
      initialMs: 5000,
      factor: 2,
      maxMs: 600000,
    });

    await core.createNamespacedSecret({
      namespace: env.ns.name,
      body: {
        metadata: { name: 'wrong-pull' },
        stringData: { username: 'puller', password: 'not-the-password' },
      },
    });
    const wrong = await release({
      repository: locked.url('charts'),
      version: '1.0.0',
      secretRef: { name: 'wrong-pull' },
    });
    const refused = await env.reconcile(wrong, ports);
    expect(applied(refused.release)?.reason).toBe('SourceNotReady');
    expect(applied(refused.release)?.message).toContain('HTTP 401');
    expect(applied(refused.release)?.message).toContain('spec.source.helm.secretRef');
    expect(JSON.stringify(refused.release.status)).not.toContain('not-the-password');
  });

  it('basic auth from a Secret: username/password keys, or type kubernetes.io/dockerconfigjson; read as the Release identity', async () => {
    await core.createNamespacedSecret({
      namespace: env.ns.name,
      body: { metadata: { name: 'pull' }, stringData: { username: 'puller', password: 'pull-secret-123' } },
    });
    const plain = await release({
      repository: locked.url('charts'),
      version: '1.0.0',
      secretRef: { name: 'pull' },
    });
    const withKeys = await env.reconcile(plain, ports);
    expect(applied(withKeys.release)?.status).toBe('True');
    expect(withKeys.release.status?.lastAttempted?.resolvedSource?.helm?.version).toBe('1.0.0');

    await core.createNamespacedSecret({
      namespace: env.ns.name,
      body: {
        metadata: { name: 'pull-docker' },
        type: 'kubernetes.io/dockerconfigjson',
        stringData: {
          '.dockerconfigjson': JSON.stringify({
            auths: { [locked.host]: { auth: Buffer.from('puller:pull-secret-123').toString('base64') } },
          }),
        },
      },
    });
    const docker = await release({
      repository: locked.url('charts'),
      version: '~1',
      secretRef: { name: 'pull-docker' },
    });
    const withDocker = await env.reconcile(docker, ports);
    expect(applied(withDocker.release)?.status).toBe('True');
    expect(withDocker.release.status?.lastAttempted?.resolvedSource?.helm?.version).toBe('1.0.0');
  });

  it('a private chart in the shared cache is not served to a Release without credentials: the digest is asked of the registry as that Release (401)', async () => {
    // The previous row pulled lockedDigest with the right credentials, so the chart is cached.
    const name = await release({ repository: locked.url('charts'), digest: lockedDigest });
    const result = await env.reconcile(name, ports);
    expect(applied(result.release)).toMatchObject({ status: 'False', reason: 'SourceNotReady' });
    expect(applied(result.release)?.message).toContain(
      `registry ${locked.host} refused the manifest ${lockedDigest} of ${locked.host}/charts/demo (HTTP 401 Unauthorized)`,
    );
    expect(result.release.status?.lastSuccessful).toBeUndefined();

    await core.createNamespacedSecret({
      namespace: env.ns.name,
      body: {
        metadata: { name: 'pull-again' },
        stringData: { username: 'puller', password: 'pull-secret-123' },
      },
    });
    const allowed = await release({
      repository: locked.url('charts'),
      digest: lockedDigest,
      secretRef: { name: 'pull-again' },
    });
    const ok = await env.reconcile(allowed, ports);
    expect(ok.release.status?.lastAttempted?.resolvedSource?.helm).toMatchObject({
      version: '1.0.0',
      digest: lockedDigest,
    });
  });

  it("a token-auth registry (WWW-Authenticate: Bearer realm=…, as Docker Hub, GHCR, Harbor): anonymous pull token for a public repository, the Secret's credentials for a private one, 401 without them", async () => {
    const publicChart = await tokenAuth.pushChart('public/charts', 'demo', '3.0.0');
    await tokenAuth.pushChart('private/charts', 'demo', '3.1.0');
    const pushed = tokenAuth.tokenRequests.length; // helm push's own token requests come first

    const anonymous = await release({ repository: tokenAuth.url('public/charts'), version: '~3.0' });
    const pub = await env.reconcile(anonymous, ports);
    expect(pub.release.status?.lastAttempted?.resolvedSource?.helm).toMatchObject({
      version: '3.0.0',
      digest: publicChart.digest,
    });
    expect(tokenAuth.tokenRequests.slice(pushed)).toContain('anonymous repository:public/charts/demo:pull');

    const refused = await env.reconcile(
      await release({ repository: tokenAuth.url('private/charts'), version: '3.1.0' }),
      ports,
    );
    expect(applied(refused.release)).toMatchObject({ status: 'False', reason: 'SourceNotReady' });
    expect(applied(refused.release)?.message).toContain(
      `registry ${tokenAuth.host} refused the manifest 3.1.0 of ${tokenAuth.host}/private/charts/demo (HTTP 401 Unauthorized)`,
    );

    await core.createNamespacedSecret({
      namespace: env.ns.name,
      body: {
        metadata: { name: 'robot-pull' },
        type: 'kubernetes.io/dockerconfigjson',
        stringData: {
          '.dockerconfigjson': JSON.stringify({
            auths: { [`http://${tokenAuth.host}`]: { username: 'robot', password: 'robot-secret-456' } },
          }),
        },
      },
    });
    const withToken = await env.reconcile(
      await release({
        repository: tokenAuth.url('private/charts'),
        version: '3.1.0',
        secretRef: { name: 'robot-pull' },
      }),
      ports,
    );
    expect(applied(withToken.release)?.status).toBe('True');
    expect(withToken.release.status?.lastAttempted?.resolvedSource?.helm?.version).toBe('3.1.0');
    expect(tokenAuth.tokenRequests.slice(pushed)).toContain('robot repository:private/charts/demo:pull');
    expect(JSON.stringify(withToken.release.status)).not.toContain('robot-secret-456');
  });

  it('insecure: true without the installation allowing the registry → SourceNotReady naming the setting; nothing is requested over plain HTTP', async () => {
    const name = await release({ repository: open.url('charts'), version: '1.2.0' });
    const result = await env.reconcile(name); // the env's own installation settings: no insecure registries
    expect(applied(result.release)).toMatchObject({ status: 'False', reason: 'SourceNotReady' });
    expect(applied(result.release)?.message).toContain(
      `the installation does not allow plain HTTP to registry ${open.host}`,
    );
    expect(applied(result.release)?.message).toContain('CONVOY_INSECURE_REGISTRIES');
  });

  it('a registry that hangs: each request times out, SourceNotReady naming the registry, retried', async () => {
    const sockets: Socket[] = [];
    const silent = createServer((socket) => {
      sockets.push(socket); // accepts and never answers
    });
    await new Promise<void>((ok) => silent.listen(0, '127.0.0.1', () => ok()));
    const address = silent.address();
    const host = `127.0.0.1:${typeof address === 'object' && address !== null ? address.port : 0}`;
    env.allowEgress(host);
    try {
      const hanging = env.ports({
        wiring: { tenancy: { ...env.tenancy, insecureRegistries: new Set([host]) }, ociTimeoutMs: 1000 },
      });
      const name = await release({ repository: `oci://${host}/charts`, version: '1.0.0' });
      const result = await env.reconcile(name, hanging);
      expect(applied(result.release)).toMatchObject({ status: 'False', reason: 'SourceNotReady' });
      expect(applied(result.release)?.message).toContain(
        `registry ${host} did not answer HEAD /v2/charts/demo/manifests/1.0.0 (timed out after at most 1 s per request)`,
      );
      expect(result.outcome.kind).toBe('retry');
    } finally {
      for (const s of sockets) s.destroy();
      await new Promise<void>((ok) => silent.close(() => ok()));
    }
  });

  it.each([
    ['oci://user:pass@reg.example.com/charts', 'an oci:// repository must be'],
    ['oci://reg.example.com/Charts', 'an oci:// repository must be'],
    ['oci://reg.example.com/charts:1.0.0', 'an oci:// repository must be'],
    ['oci://', 'an oci:// repository must be'],
  ])(
    'a malformed oci:// URL (%s) is rejected at admission by the CRD schema',
    async (repository, message) => {
      await expect(release({ repository, version: '1.0.0' })).rejects.toThrow(message);
    },
  );

  it('admission: digest and version together, and digest or insecure with an index.yaml repository, are rejected', async () => {
    await expect(
      release({ repository: open.url('charts'), version: '1.2.0', digest: digests['1.2.0'] }),
    ).rejects.toThrow('set version or digest, not both');
    await expect(
      release({ repository: 'https://charts.example.com', digest: digests['1.2.0'], insecure: undefined }),
    ).rejects.toThrow('digest is only allowed with an oci:// repository');
    await expect(release({ repository: 'https://charts.example.com', version: '1.0.0' })).rejects.toThrow(
      'insecure is only allowed with an oci:// repository',
    );
  });
});
