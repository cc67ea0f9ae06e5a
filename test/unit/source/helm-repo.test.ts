import { createHash } from 'node:crypto';
import { mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml, stringify as stringifyYaml } from 'yaml';
import { SourceNotReadyError, UnsupportedSourceError } from '../../../adapters/source/errors.ts';
import {
  fetchHelmChart as fetchThrough,
  type HelmChartInput,
  type HelmChartOptions,
} from '../../../adapters/source/helm-repo.ts';
import { createEgress, type Egress } from '../../../adapters/egress/client.ts';
import { parseEgressAllow } from '../../../domain/egress/policy.ts';
import { startHelmRepo } from '../../harness/helm-repo.ts';
import type { HelmRepo } from '../../harness/helm-repo.ts';

const PASSWORD = 'chart-pa55word';
const VERSIONS = ['6.6.0', '6.7.0', '6.7.1', '7.0.0-rc.1'];

let work: string;
let repo: HelmRepo;
let secured: HelmRepo;
let absolute: HelmRepo;

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'convoy-helm-test-'));
  const charts = [
    ...VERSIONS.map((version) => ({ name: 'podinfo', version })),
    { name: 'redis', version: '1.0.0' },
  ];
  [repo, secured, absolute] = await Promise.all([
    startHelmRepo({ charts }),
    startHelmRepo({
      charts: [{ name: 'podinfo', version: '6.7.1' }],
      auth: { username: 'convoy', password: PASSWORD },
    }),
    startHelmRepo({ charts: [{ name: 'podinfo', version: '6.7.1' }], absoluteUrls: true }),
  ]);
  for (const r of [repo, secured, absolute]) allow(r);
}, 60_000);

// Loopback is refused by the egress policy: this file's repositories are allowed (pushed as each starts).
const allowed: ReturnType<typeof parseEgressAllow> = [];
const allow = (repo: HelmRepo) => allowed.push(...parseEgressAllow(new URL(repo.url).host, 'test'));
const egress: Egress = createEgress({ allow: allowed, clusterNetworks: [] });
const fetchHelmChart = (input: HelmChartInput, cacheDir: string, options: HelmChartOptions = {}) =>
  fetchThrough(input, cacheDir, { egress, ...options });

afterAll(async () => {
  await Promise.all([repo?.stop(), secured?.stop(), absolute?.stop()]);
  await rm(work, { recursive: true, force: true });
});

async function cacheDir(): Promise<string> {
  return mkdtemp(join(work, 'cache-'));
}

async function rejection(promise: Promise<unknown>): Promise<Error> {
  try {
    await promise;
  } catch (err) {
    if (err instanceof Error) return err;
    throw new Error(`rejected with a non-Error: ${String(err)}`);
  }
  throw new Error('expected a rejection');
}

async function chartVersion(chartDir: string): Promise<string> {
  return (parseYaml(await readFile(join(chartDir, 'Chart.yaml'), 'utf8')) as { version: string }).version;
}

describe('helm repository source', () => {
  it('exact version: fetches and extracts that version', async () => {
    const result = await fetchHelmChart(
      { repository: repo.url, chart: 'podinfo', version: '6.7.0' },
      await cacheDir(),
    );
    expect(result.resolved).toMatchObject({ repository: repo.url, chart: 'podinfo', version: '6.7.0' });
    expect(await chartVersion(result.chartDir)).toBe('6.7.0');
    expect((await readdir(join(result.chartDir, 'templates'))).length).toBeGreaterThan(0);
  });

  it('range: picks the highest matching version', async () => {
    const result = await fetchHelmChart(
      { repository: repo.url, chart: 'podinfo', version: '6.7.x' },
      await cacheDir(),
    );
    expect(result.resolved.version).toBe('6.7.1');
    expect(await chartVersion(result.chartDir)).toBe('6.7.1');
  });

  it('range: pre-releases are skipped unless the range names one', async () => {
    const stable = await fetchHelmChart(
      { repository: repo.url, chart: 'podinfo', version: '>=6.0.0' },
      await cacheDir(),
    );
    expect(stable.resolved.version).toBe('6.7.1');
    const pre = await fetchHelmChart(
      { repository: repo.url, chart: 'podinfo', version: '>=7.0.0-0' },
      await cacheDir(),
    );
    expect(pre.resolved.version).toBe('7.0.0-rc.1');
  });

  it('no version: the newest stable version', async () => {
    const result = await fetchHelmChart({ repository: repo.url, chart: 'podinfo' }, await cacheDir());
    expect(result.resolved.version).toBe('6.7.1');
  });

  it('digest: records sha256 of the chart archive', async () => {
    const result = await fetchHelmChart(
      { repository: repo.url, chart: 'podinfo', version: '6.6.0' },
      await cacheDir(),
    );
    const archive = await readFile(join(repo.dir, 'podinfo-6.6.0.tgz'));
    expect(result.resolved.digest).toBe(`sha256:${createHash('sha256').update(archive).digest('hex')}`);
  });

  it('cache: a second fetch of the same version reads index.yaml only', async () => {
    const cache = await cacheDir();
    const first = await fetchHelmChart({ repository: repo.url, chart: 'podinfo', version: '6.7.1' }, cache);
    const before = repo.requests.length;
    const second = await fetchHelmChart({ repository: repo.url, chart: 'podinfo', version: '6.7.1' }, cache);
    expect(second.cacheHit).toBe(true);
    expect(second.chartDir).toBe(first.chartDir);
    expect(second.resolved).toEqual(first.resolved);
    expect(repo.requests.slice(before).map((r) => r.path)).toEqual(['/charts/index.yaml']);
  });

  it('absolute chart URLs in the index are followed', async () => {
    const result = await fetchHelmChart(
      { repository: absolute.url, chart: 'podinfo', version: '6.7.1' },
      await cacheDir(),
    );
    expect(await chartVersion(result.chartDir)).toBe('6.7.1');
  });

  it('missing chart → SourceNotReadyError naming spec.source.helm.chart', async () => {
    const err = await rejection(
      fetchHelmChart({ repository: repo.url, chart: 'nginx', version: '1.0.0' }, await cacheDir()),
    );
    expect(err).toBeInstanceOf(SourceNotReadyError);
    expect((err as SourceNotReadyError).field).toBe('spec.source.helm.chart');
    expect(err.message).toContain('"nginx"');
  });

  it('missing version → SourceNotReadyError naming spec.source.helm.version and listing versions', async () => {
    const err = await rejection(
      fetchHelmChart({ repository: repo.url, chart: 'podinfo', version: '5.x' }, await cacheDir()),
    );
    expect(err).toBeInstanceOf(SourceNotReadyError);
    expect((err as SourceNotReadyError).field).toBe('spec.source.helm.version');
    expect(err.message).toContain('6.7.1');
  });

  it('invalid version range → UnsupportedSourceError', async () => {
    const err = await rejection(
      fetchHelmChart({ repository: repo.url, chart: 'podinfo', version: 'latest please' }, await cacheDir()),
    );
    expect(err).toBeInstanceOf(UnsupportedSourceError);
    expect((err as UnsupportedSourceError).field).toBe('spec.source.helm.version');
  });

  it('repository without index.yaml → SourceNotReadyError', async () => {
    const err = await rejection(
      fetchHelmChart(
        { repository: `${repo.url}/nowhere`, chart: 'podinfo', version: '6.7.1' },
        await cacheDir(),
      ),
    );
    expect(err).toBeInstanceOf(SourceNotReadyError);
    expect(err.message).toContain('404');
  });

  it('unreachable repository → SourceNotReadyError', async () => {
    const err = await rejection(
      fetchHelmChart(
        { repository: 'http://127.0.0.1:1/charts', chart: 'podinfo', version: '6.7.1' },
        await cacheDir(),
      ),
    );
    expect(err).toBeInstanceOf(SourceNotReadyError);
  });

  it('oci:// repository → UnsupportedSourceError: an OCI registry is read by fetchOciHelmChart, not as an index.yaml repository', async () => {
    const err = await rejection(
      fetchHelmChart(
        { repository: 'oci://ghcr.io/stefanprodan/charts', chart: 'podinfo', version: '6.7.1' },
        await cacheDir(),
      ),
    );
    expect(err).toBeInstanceOf(UnsupportedSourceError);
    expect((err as UnsupportedSourceError).field).toBe('spec.source.helm.repository');
    expect(err.message).toMatch(/oci:\/\/.*is an OCI registry, not an index\.yaml chart repository/);
  });

  it('basic auth: accepted with the right credentials', async () => {
    const result = await fetchHelmChart(
      {
        repository: secured.url,
        chart: 'podinfo',
        version: '6.7.1',
        auth: { username: 'convoy', password: PASSWORD },
      },
      await cacheDir(),
    );
    expect(result.resolved.version).toBe('6.7.1');
  });

  it('basic auth: missing or wrong credentials → SourceNotReadyError without the password', async () => {
    const missing = await rejection(
      fetchHelmChart({ repository: secured.url, chart: 'podinfo', version: '6.7.1' }, await cacheDir()),
    );
    expect(missing).toBeInstanceOf(SourceNotReadyError);
    expect((missing as SourceNotReadyError).field).toBe('spec.source.helm.secretRef');
    const wrong = await rejection(
      fetchHelmChart(
        {
          repository: secured.url,
          chart: 'podinfo',
          version: '6.7.1',
          auth: { username: 'convoy', password: 'wr0ng-one' },
        },
        await cacheDir(),
      ),
    );
    expect(wrong).toBeInstanceOf(SourceNotReadyError);
    expect(wrong.message).not.toContain('wr0ng-one');
    expect(wrong.message).not.toContain(PASSWORD);
  });

  it('credentials embedded in the repository URL are used but never reported', async () => {
    const repository = secured.url.replace('http://', `http://convoy:${PASSWORD}@`);
    const result = await fetchHelmChart({ repository, chart: 'podinfo', version: '6.7.1' }, await cacheDir());
    expect(result.resolved.repository).toBe(secured.url);
  });

  it('digest mismatch between index and archive → SourceNotReadyError', async () => {
    const tampered = await startHelmRepo({ charts: [{ name: 'podinfo', version: '1.0.0' }] });
    allow(tampered);
    try {
      const indexPath = join(tampered.dir, 'index.yaml');
      const index = parseYaml(await readFile(indexPath, 'utf8')) as {
        entries: Record<string, { digest: string }[]>;
      };
      index.entries.podinfo[0].digest = '0'.repeat(64);
      await writeFile(indexPath, stringifyYaml(index));
      const err = await rejection(
        fetchHelmChart({ repository: tampered.url, chart: 'podinfo', version: '1.0.0' }, await cacheDir()),
      );
      expect(err).toBeInstanceOf(SourceNotReadyError);
      expect(err.message).toContain('digest');
    } finally {
      await tampered.stop();
    }
  });
});
