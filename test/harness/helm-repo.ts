/**
 * A Helm chart repository for tests: charts packaged with `helm package`, indexed with
 * `helm repo index`, served by a static node:http server on 127.0.0.1 (optionally behind basic auth).
 *
 * A chart is either an existing chart directory (`{dir}`) or generated from `{name, version}` with
 * optional extra files (`templates/…`, `values.yaml`, …).
 */
import { execFile } from 'node:child_process';
import { timingSafeEqual } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { mkdir, mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, normalize, sep } from 'node:path';
import { promisify } from 'node:util';
import { createToolLocator } from '../../adapters/tools/binaries.ts';

const execFileAsync = promisify(execFile);

export type HelmChartSpec =
  { dir: string } | { name: string; version: string; appVersion?: string; files?: Record<string, string> };

export interface HelmRepoOptions {
  charts: HelmChartSpec[];
  auth?: { username: string; password: string };
  /** Write absolute chart URLs into index.yaml (`helm repo index --url`); default relative URLs. */
  absoluteUrls?: boolean;
  /** helm binary; default found with the tool locator. */
  helm?: string;
}

export interface HelmRepoRequest {
  method: string;
  path: string;
  status: number;
}

export interface HelmRepo {
  /** Repository URL, `http://127.0.0.1:<port>/charts` (no trailing slash). */
  url: string;
  /** The served folder (index.yaml and the .tgz files); tests may edit it. */
  dir: string;
  readonly requests: readonly HelmRepoRequest[];
  stop(): Promise<void>;
}

const CONTENT_TYPES: Record<string, string> = {
  '.yaml': 'application/x-yaml',
  '.tgz': 'application/gzip',
};

function safeEqual(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}

async function generateChart(root: string, chart: Extract<HelmChartSpec, { name: string }>): Promise<string> {
  const dir = join(root, `${chart.name}-${chart.version}`, chart.name);
  const files: Record<string, string> = {
    'Chart.yaml':
      `apiVersion: v2\nname: ${chart.name}\nversion: ${chart.version}\n` +
      `appVersion: "${chart.appVersion ?? chart.version}"\ntype: application\n`,
    'values.yaml': 'replicaCount: 1\n',
    'templates/configmap.yaml':
      'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}\n' +
      'data:\n  replicas: "{{ .Values.replicaCount }}"\n',
    ...chart.files,
  };
  for (const [path, content] of Object.entries(files)) {
    await mkdir(dirname(join(dir, path)), { recursive: true });
    await writeFile(join(dir, path), content);
  }
  return dir;
}

export async function startHelmRepo(options: HelmRepoOptions): Promise<HelmRepo> {
  const helm = options.helm ?? (await createToolLocator().locate()).helm;
  const work = await mkdtemp(join(tmpdir(), 'convoy-helm-repo-'));
  const served = join(work, 'charts');
  await mkdir(served, { recursive: true });
  const helmEnv = {
    ...process.env,
    HELM_CACHE_HOME: join(work, 'helm', 'cache'),
    HELM_CONFIG_HOME: join(work, 'helm', 'config'),
    HELM_DATA_HOME: join(work, 'helm', 'data'),
  };

  const requests: HelmRepoRequest[] = [];
  const server = createServer((req, res) => {
    const method = req.method ?? 'GET';
    const path = decodeURIComponent((req.url ?? '/').split('?')[0]);
    const done = (status: number, headers: Record<string, string> = {}, body = '') => {
      requests.push({ method, path, status });
      res.writeHead(status, headers);
      res.end(body);
    };
    if (options.auth) {
      const header = req.headers.authorization ?? '';
      const decoded = header.startsWith('Basic ')
        ? Buffer.from(header.slice(6), 'base64').toString('utf8')
        : '';
      const expected = `${options.auth.username}:${options.auth.password}`;
      if (!safeEqual(decoded, expected)) {
        done(401, { 'www-authenticate': 'Basic realm="convoy-charts"' }, 'authentication required\n');
        return;
      }
    }
    if (method !== 'GET' && method !== 'HEAD') return done(405, { allow: 'GET, HEAD' });
    if (!path.startsWith('/charts/')) return done(404);
    const file = normalize(join(served, path.slice('/charts/'.length)));
    if (!file.startsWith(served + sep)) return done(404);
    stat(file).then(
      (info) => {
        if (!info.isFile()) return done(404);
        const ext = file.slice(file.lastIndexOf('.'));
        requests.push({ method, path, status: 200 });
        res.writeHead(200, {
          'content-type': CONTENT_TYPES[ext] ?? 'application/octet-stream',
          'content-length': String(info.size),
        });
        if (method === 'HEAD') return res.end();
        createReadStream(file).pipe(res);
      },
      () => done(404),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/charts`;

  const stop = async () => {
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
    await rm(work, { recursive: true, force: true });
  };

  try {
    for (const chart of options.charts) {
      const dir = 'dir' in chart ? chart.dir : await generateChart(join(work, 'src'), chart);
      await execFileAsync(helm, ['package', dir, '--destination', served], { env: helmEnv });
    }
    await execFileAsync(helm, ['repo', 'index', served, ...(options.absoluteUrls ? ['--url', url] : [])], {
      env: helmEnv,
    });
  } catch (err) {
    await stop();
    throw err;
  }

  return { url, dir: served, requests, stop };
}
