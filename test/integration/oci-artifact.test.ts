// Manifests and Kustomize from OCI artifacts — spec.source.oci — on the real apiserver
// and a real registry (distribution v3.1.2, test/harness/oci-registry.ts). Artifacts are written
// through the registry's HTTP API in the format `flux push artifact` writes
// (dev/oci-artifact-push.ts: config application/vnd.cncf.flux.config.v1+json, one layer
// application/vnd.cncf.flux.content.v1.tar+gzip), or as `oras push` writes a folder
// (application/vnd.oci.image.layer.v1.tar+gzip); hostile archives are written the same way.
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { CoreV1Api } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { Release } from '../../domain/api/objects.ts';
import type { ReconcilePorts } from '../../domain/reconcile/ports.ts';
import { fetchOciArtifact } from '../../adapters/source/oci-artifact.ts';
import { pushArtifact, tarGz, type TarInput } from '../../dev/oci-artifact-push.ts';
import { kubeConfigFor } from '../harness/kube.ts';
import { startOciRegistry, type OciRegistry } from '../harness/oci-registry.ts';
import { startReconcileEnv, type ReconcileEnv } from '../harness/reconcile-env.ts';

function applied(release: Release) {
  return release.status?.conditions?.find((c) => c.type === 'Applied');
}

const configMap = (name: string, data: Record<string, string>) =>
  `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\ndata:\n${Object.entries(data)
    .map(([k, v]) => `  ${k}: "${v}"`)
    .join('\n')}\n`;

describe('manifests and Kustomize from OCI artifacts (spec.source.oci)', () => {
  let env: ReconcileEnv;
  let core: CoreV1Api;
  let registry: OciRegistry;
  let locked: OciRegistry;
  let ports: ReconcilePorts;
  let cacheDir: string;
  let n = 0;

  beforeAll(async () => {
    env = await startReconcileEnv(kubeConfigFor(inject('kubeconfigPath')), 'oci-artifact');
    core = env.kc.makeApiClient(CoreV1Api);
    registry = await startOciRegistry();
    locked = await startOciRegistry({ users: [{ username: 'puller', password: 'pull-secret-789' }] });
    cacheDir = await mkdtemp(join(tmpdir(), 'convoy-oci-artifact-cache-'));
    env.allowEgress(registry.host, locked.host); // on 127.0.0.1: the egress allow list opens exactly these
    ports = env.ports({
      wiring: {
        cacheDir,
        tenancy: { ...env.tenancy, insecureRegistries: new Set([registry.host, locked.host]) },
      },
    });
  });
  afterAll(async () => {
    await registry?.stop();
    await locked?.stop();
    await env?.close();
    if (cacheDir) await rm(cacheDir, { recursive: true, force: true });
  });

  const push = (
    repository: string,
    tag: string,
    entries: TarInput[],
    options: Parameters<typeof pushArtifact>[2] = {},
  ) => pushArtifact({ registry: registry.host, repository, tag, plainHttp: true }, tarGz(entries), options);

  async function release(oci: Record<string, unknown>, extra: Record<string, unknown> = {}) {
    const name = `art-${++n}`;
    await env.api.create('Release', env.ns.name, name, {
      cluster: { name: 'local' },
      targetNamespace: env.ns.name,
      source: { oci: { insecure: true, ...oci } },
      content: { type: 'Manifests' },
      ...extra,
    });
    return name;
  }
  const cm = async (name: string) => {
    try {
      return (await core.readNamespacedConfigMap({ namespace: env.ns.name, name })).data;
    } catch {
      return undefined;
    }
  };

  it('a manifests artifact deploys like a Git folder, and a new tag that drops an object prunes it; resolvedSource.oci names url, digest and tag', async () => {
    const v1 = await push('apps/plain', '1.0.0', [
      { name: 'deploy', type: 'directory' },
      { name: 'deploy/a.yaml', content: configMap('plain-a', { v: '1' }) },
      { name: 'deploy/b.yaml', content: configMap('plain-b', { v: '1' }) },
    ]);
    const name = await release({ url: registry.url('apps/plain'), ref: { tag: '1.0.0' }, path: 'deploy' });
    const first = await env.reconcile(name, ports);
    expect(applied(first.release)).toMatchObject({ status: 'True', reason: 'Applied' });
    expect(first.release.status?.lastAttempted?.resolvedSource).toEqual({
      oci: { url: registry.url('apps/plain'), digest: v1.digest, tag: '1.0.0' },
    });
    expect(await cm('plain-a')).toEqual({ v: '1' });
    expect(await cm('plain-b')).toEqual({ v: '1' });

    await push('apps/plain', '1.0.0', [{ name: 'deploy/a.yaml', content: configMap('plain-a', { v: '2' }) }]);
    const second = await env.reconcile(name, ports);
    expect(applied(second.release)?.status).toBe('True');
    expect(await cm('plain-a')).toEqual({ v: '2' });
    expect(await cm('plain-b')).toBeUndefined();
  });

  it('a Kustomize artifact (a base and an overlay, as oras push writes a folder) deploys and prunes like its Git equivalent', async () => {
    const files = (prefix: string, withExtra: boolean): TarInput[] => [
      {
        name: 'site/base/kustomization.yaml',
        content: `resources: [cm.yaml${withExtra ? ', extra.yaml' : ''}]\n`,
      },
      { name: 'site/base/cm.yaml', content: configMap('kz', { from: 'base' }) },
      ...(withExtra
        ? [{ name: 'site/base/extra.yaml', content: configMap('kz-extra', { from: 'base' }) }]
        : []),
      { name: 'site/overlay/kustomization.yaml', content: `namePrefix: ${prefix}-\nresources: [../base]\n` },
    ];
    const oras = {
      layerMediaType: 'application/vnd.oci.image.layer.v1.tar+gzip',
      configMediaType: 'application/vnd.oci.empty.v1+json',
      layerAnnotations: { 'org.opencontainers.image.title': 'site', 'io.deis.oras.content.unpack': 'true' },
    };
    await push('apps/kz', 'v1', files('prod', true), oras);
    const name = await release(
      { url: registry.url('apps/kz'), ref: { tag: 'v1' }, path: 'site/overlay' },
      { content: { type: 'Kustomize' } },
    );
    const first = await env.reconcile(name, ports);
    expect(applied(first.release)).toMatchObject({ status: 'True', reason: 'Applied' });
    expect(await cm('prod-kz')).toEqual({ from: 'base' });
    expect(await cm('prod-kz-extra')).toEqual({ from: 'base' });

    await push('apps/kz', 'v1', files('prod', false), oras);
    const second = await env.reconcile(name, ports);
    expect(applied(second.release)?.status).toBe('True');
    expect(await cm('prod-kz-extra')).toBeUndefined();
    expect(await cm('prod-kz')).toEqual({ from: 'base' });
  });

  it('ref.semver picks the highest tag in range; ref.digest that manifest; a moved tag is a new digest and a new render, an unchanged one the same render', async () => {
    const digests: Record<string, string> = {};
    for (const version of ['1.0.0', '1.1.0', 'v1.2.0', '2.0.0']) {
      digests[version] = (
        await push('apps/versions', version, [
          { name: 'cm.yaml', content: configMap('versions', { version }) },
        ])
      ).digest;
    }
    await push('apps/versions', 'latest', [
      { name: 'cm.yaml', content: configMap('versions', { version: 'latest' }) },
    ]);
    const ranged = await release({ url: registry.url('apps/versions'), ref: { semver: '1.x' } });
    const byRange = await env.reconcile(ranged, ports);
    expect(byRange.release.status?.lastAttempted?.resolvedSource?.oci).toEqual({
      url: registry.url('apps/versions'),
      digest: digests['v1.2.0'],
      tag: 'v1.2.0',
    });
    expect(await cm('versions')).toEqual({ version: 'v1.2.0' });

    const pinned = await release({ url: registry.url('apps/versions'), ref: { digest: digests['1.0.0'] } });
    const byDigest = await env.reconcile(pinned, ports);
    expect(byDigest.release.status?.lastAttempted?.resolvedSource?.oci).toEqual({
      url: registry.url('apps/versions'),
      digest: digests['1.0.0'],
    });
    expect(await cm('versions')).toEqual({ version: '1.0.0' });

    const moving = await release({ url: registry.url('apps/moving'), ref: { tag: 'stable' } });
    const a = await push('apps/moving', 'stable', [
      { name: 'cm.yaml', content: configMap('moving', { mark: 'first' }) },
    ]);
    const first = await env.reconcile(moving, ports);
    expect(first.release.status?.lastAttempted?.resolvedSource?.oci?.digest).toBe(a.digest);
    const b = await push('apps/moving', 'stable', [
      { name: 'cm.yaml', content: configMap('moving', { mark: 'second' }) },
    ]);
    expect(b.digest).not.toBe(a.digest);
    const second = await env.reconcile(moving, ports);
    expect(second.release.status?.lastAttempted?.resolvedSource?.oci?.digest).toBe(b.digest);
    expect(second.release.status?.lastSuccessful?.renderRef).not.toBe(
      first.release.status?.lastSuccessful?.renderRef,
    );
    expect(await cm('moving')).toEqual({ mark: 'second' });
    const third = await env.reconcile(moving, ports);
    expect(third.release.status?.lastSuccessful?.renderRef).toBe(
      second.release.status?.lastSuccessful?.renderRef,
    );
  });

  it('registry requests per resolve: a first pull reads the manifest and the layer once; then a tag or a digest costs one manifest HEAD, a range one tag list more', async () => {
    const pushed = await push('apps/count', '3.0.0', [
      { name: 'cm.yaml', content: configMap('count', { v: '3' }) },
    ]);
    const cache = await mkdtemp(join(tmpdir(), 'convoy-oci-artifact-count-'));
    try {
      const count = async (ref: { tag?: string; semver?: string; digest?: string }) => {
        const requests: string[] = [];
        const t = performance.now();
        await fetchOciArtifact({ url: registry.url('apps/count'), ref, plainHttp: true }, cache, {
          egress: env.egress,
          onRequest: (method, path) =>
            requests.push(`${method} ${path.replace(/sha256:[0-9a-f]{64}/, '<digest>')}`),
        });
        timings.push(
          `${JSON.stringify(ref).replace(/sha256:[0-9a-f]{64}/, '<digest>')} ${requests.length} requests ${(performance.now() - t).toFixed(1)} ms`,
        );
        return requests;
      };
      const timings: string[] = [];
      expect(await count({ tag: '3.0.0' })).toEqual([
        'HEAD /v2/apps/count/manifests/3.0.0',
        'GET /v2/apps/count/manifests/<digest>',
        'GET /v2/apps/count/blobs/<digest>',
      ]);
      expect(await count({ tag: '3.0.0' })).toEqual(['HEAD /v2/apps/count/manifests/3.0.0']);
      expect(await count({ digest: pushed.digest })).toEqual(['HEAD /v2/apps/count/manifests/<digest>']);
      expect(await count({ semver: '^3' })).toEqual([
        'GET /v2/apps/count/tags/list',
        'HEAD /v2/apps/count/manifests/3.0.0',
      ]);
      process.stderr.write(`oci-artifact resolve (local registry): ${timings.join('; ')}\n`);
    } finally {
      await rm(cache, { recursive: true, force: true });
    }
  });

  it('a tar with a ../ entry, or a link out of the folder, is refused (Unsupported, naming the entry) and nothing is written outside — nor kept inside', async () => {
    const marker = `escaped-${process.pid}-${Date.now()}.yaml`;
    const cases: { repo: string; entries: TarInput[]; message: RegExp }[] = [
      {
        repo: 'evil/dotdot',
        entries: [
          { name: 'ok.yaml', content: configMap('ok', { a: 'b' }) },
          { name: `../../${marker}`, content: 'x' },
        ],
        message: /entry "\.\.\/\.\.\/escaped-[^"]+" contains a "\.\." segment; nothing was written/,
      },
      {
        repo: 'evil/absolute',
        entries: [{ name: `/tmp/${marker}`, content: 'x' }],
        message: /entry "\/tmp\/escaped-[^"]+" is an absolute path; nothing was written/,
      },
      {
        repo: 'evil/symlink',
        entries: [
          { name: 'out', type: 'symlink', target: '../../..' },
          { name: `out/${marker}`, content: 'x' },
        ],
        message: /entry "out" is a symbolic link that leads outside the artifact; nothing was written/,
      },
      {
        repo: 'evil/hardlink',
        entries: [{ name: 'h.yaml', type: 'hardlink', target: '/etc/passwd' }],
        message: /entry "h\.yaml" is a hard link whose target is an absolute path/,
      },
      {
        repo: 'evil/chain',
        // Each link looks fine on its own; together they lead out: caught once written, then removed.
        entries: [
          { name: 'd', type: 'directory' },
          { name: 'd/l', type: 'symlink', target: '..' },
          { name: 'e', type: 'symlink', target: 'd/l/..' },
        ],
        message:
          /entry "e" is a symbolic link that, through other links, leads outside the artifact; nothing was kept/,
      },
    ];
    for (const c of cases) {
      await push(c.repo, '1.0.0', c.entries);
      const name = await release({ url: registry.url(c.repo), ref: { tag: '1.0.0' } });
      const result = await env.reconcile(name, ports);
      expect(applied(result.release)).toMatchObject({ status: 'False', reason: 'Unsupported' });
      expect(applied(result.release)?.message).toMatch(c.message);
      expect(applied(result.release)?.message).toContain(`artifact ${registry.host}/${c.repo}@sha256:`);
    }
    const artifacts = join(cacheDir, 'oci-artifacts');
    for (const dir of [artifacts, dirname(artifacts), cacheDir, dirname(cacheDir), tmpdir(), '/tmp']) {
      expect(existsSync(join(dir, marker))).toBe(false);
    }
    // Only the good artifacts of the earlier rows are kept; no work folder is left behind.
    const kept = await readdir(artifacts);
    expect(kept.filter((d) => d.startsWith('.tmp-'))).toEqual([]);
    for (const c of cases) {
      const digest =
        (
          await fetch(`http://${registry.host}/v2/${c.repo}/manifests/1.0.0`, {
            method: 'HEAD',
            headers: { accept: 'application/vnd.oci.image.manifest.v1+json' },
          })
        ).headers.get('docker-content-digest') ?? '';
      expect(kept.some((d) => d.startsWith(`artifact-${digest.slice('sha256:'.length)}`))).toBe(false);
    }
  });

  it('a content layer over the size limit is refused before download, naming the limit', async () => {
    await push('apps/big', '1.0.0', [
      { name: 'cm.yaml', content: configMap('big', { blob: 'x'.repeat(5000) }) },
    ]);
    const limited = env.ports({
      wiring: {
        cacheDir,
        tenancy: { ...env.tenancy, insecureRegistries: new Set([registry.host]) },
        ociMaxArtifactBytes: 100,
      },
    });
    const name = await release({ url: registry.url('apps/big'), ref: { tag: '1.0.0' } });
    const result = await env.reconcile(name, limited);
    expect(applied(result.release)).toMatchObject({ status: 'False', reason: 'Unsupported' });
    expect(applied(result.release)?.message).toMatch(
      /the content layer of 127\.0\.0\.1:\d+\/apps\/big@sha256:[0-9a-f]{64} is \d+ bytes, over convoy's artifact size limit of 100 bytes \(CONVOY_OCI_MAX_ARTIFACT_BYTES\); nothing was downloaded/,
    );

    const requests: string[] = [];
    const cache = await mkdtemp(join(tmpdir(), 'convoy-oci-artifact-limit-'));
    try {
      await expect(
        fetchOciArtifact({ url: registry.url('apps/big'), ref: { tag: '1.0.0' }, plainHttp: true }, cache, {
          egress: env.egress,
          maxArtifactBytes: 100,
          onRequest: (m, p) => requests.push(`${m} ${p}`),
        }),
      ).rejects.toThrow(/over convoy's artifact size limit of 100 bytes/);
      expect(requests.filter((r) => r.includes('/blobs/'))).toEqual([]);
    } finally {
      await rm(cache, { recursive: true, force: true });
    }
  });

  it('a manifest without a content layer (a Helm chart) is Unsupported naming the media types found; an index names its media type', async () => {
    await registry.pushChart('apps', 'achart', '1.0.0');
    const chart = await release({ url: registry.url('apps/achart'), ref: { tag: '1.0.0' } });
    const result = await env.reconcile(chart, ports);
    expect(applied(result.release)).toMatchObject({ status: 'False', reason: 'Unsupported' });
    expect(applied(result.release)?.message).toContain(
      'it has layers of media type application/vnd.cncf.helm.chart.content.v1.tar+gzip; it is a Helm chart: use spec.source.helm',
    );

    const pushed = await push('apps/selected', '1.0.0', [{ name: 'cm.yaml', content: 'x' }]);
    const wrongType = await release({
      url: registry.url('apps/selected'),
      ref: { digest: pushed.digest },
      layerSelector: { mediaType: 'application/yaml' },
    });
    const refused = await env.reconcile(wrongType, ports);
    expect(applied(refused.release)).toMatchObject({ status: 'False', reason: 'Unsupported' });
    expect(applied(refused.release)?.message).toContain(
      'has no layer of media type application/yaml (spec.source.oci.layerSelector.mediaType); it has layers of media type application/vnd.cncf.flux.content.v1.tar+gzip',
    );
  });

  it('layerSelector operation copy: a single YAML file pushed as ORAS writes one (title annotation) is rendered as Manifests', async () => {
    const yaml = new TextEncoder().encode(configMap('copied', { how: 'copy' }));
    await pushArtifact(
      { registry: registry.host, repository: 'apps/file', tag: '1.0.0', plainHttp: true },
      yaml,
      {
        layerMediaType: 'application/yaml',
        configMediaType: 'application/vnd.oci.empty.v1+json',
        layerAnnotations: { 'org.opencontainers.image.title': 'copied.yaml' },
      },
    );
    const name = await release({
      url: registry.url('apps/file'),
      ref: { tag: '1.0.0' },
      layerSelector: { mediaType: 'application/yaml', operation: 'copy' },
    });
    const result = await env.reconcile(name, ports);
    expect(applied(result.release)).toMatchObject({ status: 'True', reason: 'Applied' });
    expect(await cm('copied')).toEqual({ how: 'copy' });
  });

  it('registry errors: SourceNotReady naming the registry and the HTTP status, retried; a missing tag says which; credentials from a Secret work', async () => {
    await pushArtifact(
      {
        registry: locked.host,
        repository: 'private/app',
        tag: '1.0.0',
        plainHttp: true,
        credentials: { username: 'puller', password: 'pull-secret-789' },
      },
      tarGz([{ name: 'cm.yaml', content: configMap('private', { v: '1' }) }]),
    );
    const anonymous = await release(
      { url: locked.url('private/app'), ref: { tag: '1.0.0' } },
      { syncPolicy: { retryBackoff: { initial: '5s' } } },
    );
    const refused = await env.reconcile(anonymous, ports);
    expect(applied(refused.release)).toMatchObject({ status: 'False', reason: 'SourceNotReady' });
    expect(applied(refused.release)?.message).toContain(
      `registry ${locked.host} refused the manifest 1.0.0 of ${locked.host}/private/app (HTTP 401 Unauthorized): the registry needs credentials; set spec.source.oci.secretRef (will retry)`,
    );
    expect(refused.outcome.kind).toBe('retry');

    const missing = await release({ url: registry.url('apps/versions'), ref: { tag: '9.9.9' } });
    const notFound = await env.reconcile(missing, ports);
    expect(applied(notFound.release)).toMatchObject({ status: 'False', reason: 'SourceNotReady' });
    expect(applied(notFound.release)?.message).toBe(
      `artifact ${registry.host}/apps/versions has no tag 9.9.9 (HTTP 404); push it or change spec.source.oci.ref (will retry)`,
    );

    await core.createNamespacedSecret({
      namespace: env.ns.name,
      body: {
        metadata: { name: 'oci-pull' },
        stringData: { username: 'puller', password: 'pull-secret-789' },
      },
    });
    const withSecret = await release({
      url: locked.url('private/app'),
      ref: { tag: '1.0.0' },
      secretRef: { name: 'oci-pull' },
    });
    const ok = await env.reconcile(withSecret, ports);
    expect(applied(ok.release)).toMatchObject({ status: 'True', reason: 'Applied' });
    expect(await cm('private')).toEqual({ v: '1' });
    expect(JSON.stringify(ok.release.status)).not.toContain('pull-secret-789');
  });

  it('insecure: true without the installation allowing the registry → SourceNotReady naming the setting', async () => {
    const name = await release({ url: registry.url('apps/versions'), ref: { semver: '1.x' } });
    const result = await env.reconcile(name); // the env's own installation settings: no insecure registries
    expect(applied(result.release)).toMatchObject({ status: 'False', reason: 'SourceNotReady' });
    expect(applied(result.release)?.message).toContain(
      `spec.source.oci.insecure: the installation does not allow plain HTTP to registry ${registry.host}`,
    );
  });

  it.each([
    [
      'oci://user:pass@reg.example.com/apps',
      /url must be oci:\/\/\S*host\[:port\]\S*lower-case repository path\S*, without credentials, query, tag or digest/,
    ],
    ['oci://reg.example.com/Apps', /url must be oci:\/\//],
    ['oci://reg.example.com/apps:1.0.0', /url must be oci:\/\//],
    ['oci://reg.example.com', /url must be oci:\/\//],
    ['https://reg.example.com/apps', /url must be oci:\/\//],
  ])('a malformed url (%s) is rejected at admission by the CRD', async (url, message) => {
    await expect(release({ url, ref: { tag: '1' } })).rejects.toThrow(message);
  });

  it('admission: exactly one of tag, semver and digest; a digest must be sha256; one source only; operation extract or copy', async () => {
    await expect(release({ url: registry.url('apps/x'), ref: {} })).rejects.toThrow(
      /exactly one of tag, semver, digest must be set/,
    );
    await expect(release({ url: registry.url('apps/x'), ref: { tag: '1', semver: '1.x' } })).rejects.toThrow(
      /exactly one of tag, semver, digest must be set/,
    );
    await expect(release({ url: registry.url('apps/x'), ref: { digest: 'sha256:abc' } })).rejects.toThrow(
      /spec\.source\.oci\.ref\.digest/,
    );
    await expect(
      release({ url: registry.url('apps/x'), ref: { tag: '1' }, layerSelector: { operation: 'unpack' } }),
    ).rejects.toThrow(/spec\.source\.oci\.layerSelector\.operation: Unsupported value: \\*"unpack/);
    await expect(release({ url: registry.url('apps/x'), ref: { tag: '1' }, path: '../x' })).rejects.toThrow(
      /must be a relative path without '\.\.' segments/,
    );
    await expect(
      env.api.create('Release', env.ns.name, 'art-two', {
        cluster: { name: 'local' },
        source: {
          oci: { url: registry.url('apps/x'), ref: { tag: '1' } },
          git: { url: 'https://git.example.invalid/a.git', ref: { branch: 'main' } },
        },
      }),
    ).rejects.toThrow(/exactly one of git, gitRepositoryRef, helm, oci must be set/);
  });
});
