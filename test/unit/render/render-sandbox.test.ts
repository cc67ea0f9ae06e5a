// The render sandbox through the real adapters (adapters/render/content-check.ts, tool-sandbox.ts):
// a chart, a kustomization or a values file can read nothing outside its checkout, refusals come
// before any tool starts and name the file, and the tools run with a private home and an
// environment of their own.
import { execFileSync } from 'node:child_process';
import { link, mkdir, mkdtemp, readdir, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { readCheckoutFile } from '../../../adapters/render/content-check.ts';
import { renderHelmChart } from '../../../adapters/render/helm.ts';
import { render, type RenderTools } from '../../../adapters/render/index.ts';
import { renderKustomize } from '../../../adapters/render/kustomize.ts';
import { NO_NETWORK_PROXY, toolEnvironment } from '../../../adapters/render/tool-sandbox.ts';
import { RenderError } from '../../../domain/render/errors.ts';
import { renderTools } from './render-tools.ts';
import { countingTool, recordingTool } from './sandbox-tools.ts';
import { tgzBytes } from './tar-fixture.ts';

const SECRET = `admin-client-key-${Math.random().toString(36).slice(2)}`;
let tools: RenderTools;
let base: string;
/** The repository checkout. */
let checkout: string;
/** A file outside it: what the attacker wants. */
let secretFile: string;

beforeAll(async () => {
  tools = await renderTools();
});
beforeEach(async () => {
  base = await mkdtemp(join(tmpdir(), 'convoy-sandbox-'));
  checkout = join(base, 'checkout');
  await mkdir(join(base, 'outside'), { recursive: true });
  secretFile = join(base, 'outside', 'kubeconfig');
  await writeFile(secretFile, SECRET);
  await writeFile(
    join(base, 'outside', 'cm.yaml'),
    `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: stolen}\ndata: {k: ${SECRET}}\n`,
  );
});
afterEach(async () => {
  await rm(base, { recursive: true, force: true });
});

async function put(path: string, text: string | Buffer): Promise<void> {
  await mkdir(dirname(join(checkout, path)), { recursive: true });
  await writeFile(join(checkout, path), text);
}
async function link_(path: string, target: string): Promise<void> {
  await mkdir(dirname(join(checkout, path)), { recursive: true });
  await symlink(target, join(checkout, path));
}

const CHART = 'apiVersion: v2\nname: app\nversion: 0.1.0\n';
const FILES_GET = (file: string) =>
  `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: leak}\ndata: {k: {{ .Files.Get "${file}" | b64enc | quote }}}\n`;

async function helm(dir: string, helmBinary = tools.helm) {
  return renderHelmChart(join(checkout, dir), {
    helm: helmBinary,
    releaseName: 'r',
    namespace: 'team-a',
    values: {},
    root: checkout,
  });
}

/** Expects a refusal naming `file`, before helm started, with no trace of the secret. */
async function expectRefusedBeforeHelm(
  dir: string,
  file: string,
  why: RegExp,
  named = file,
): Promise<RenderError> {
  const counter = await countingTool(base, tools.helm);
  const error = await helm(dir, counter.path).then(
    () => expect.fail('the render should have been refused'),
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(RenderError);
  const refusal = error as RenderError;
  expect(refusal.message.startsWith(`${named}: `), refusal.message).toBe(true);
  expect(refusal.message).toMatch(why);
  expect(refusal.file).toBe(file);
  expect(refusal.message).not.toContain(SECRET);
  expect(refusal.message).not.toContain(base); // no machine path either
  expect(await counter.starts()).toBe(0);
  return refusal;
}

describe('Helm: the sandbox refuses what leads outside the checkout, before helm runs', () => {
  it('the reported attack: kubeconfig.txt -> an absolute path, read by .Files.Get | b64enc', async () => {
    await put('Chart.yaml', CHART);
    await put('templates/cm.yaml', FILES_GET('kubeconfig.txt'));
    await link_('kubeconfig.txt', secretFile);
    await expectRefusedBeforeHelm('.', 'kubeconfig.txt', /symbolic link to an absolute path/);
  });

  it('the same through a relative link that climbs out, from a chart in a subfolder', async () => {
    await put('charts-src/app/Chart.yaml', CHART);
    await put('charts-src/app/templates/cm.yaml', FILES_GET('files/kubeconfig.txt'));
    await link_('charts-src/app/files/kubeconfig.txt', '../../../../outside/kubeconfig');
    await expectRefusedBeforeHelm(
      'charts-src/app',
      'charts-src/app/files/kubeconfig.txt',
      /leads outside the repository checkout/,
    );
  });

  it('a template that is itself a link to a file outside', async () => {
    await put('Chart.yaml', CHART);
    await link_('templates/cm.yaml', join(base, 'outside', 'cm.yaml'));
    await expectRefusedBeforeHelm('.', 'templates/cm.yaml', /absolute path/);
  });

  it('a chain: a link inside that points at a link out', async () => {
    await put('Chart.yaml', CHART);
    await put('templates/cm.yaml', FILES_GET('a.txt'));
    await link_('a.txt', 'b.txt');
    await link_('b.txt', '../outside/kubeconfig');
    // a.txt comes first: its real path is outside (b.txt would be refused as well).
    await expectRefusedBeforeHelm('.', 'a.txt', /leads outside/);
  });

  it('a folder link out (templates -> outside) and a subchart folder link out', async () => {
    await put('Chart.yaml', CHART);
    await link_('templates', join(base, 'outside'));
    await expectRefusedBeforeHelm('.', 'templates', /absolute path/);
    await rm(join(checkout, 'templates'));
    await mkdir(join(checkout, 'charts'));
    await link_('charts/sub', '../../outside');
    await expectRefusedBeforeHelm('.', 'charts/sub', /leads outside/);
  });

  it('a link inside a folder that the chart reaches through an allowed link', async () => {
    await put('chart/Chart.yaml', CHART);
    await put('library/Chart.yaml', 'apiVersion: v2\nname: library\nversion: 0.1.0\n');
    await link_('library/templates/evil.yaml', '../../../outside/cm.yaml');
    await link_('chart/charts/library', '../../library');
    await expectRefusedBeforeHelm('chart', 'library/templates/evil.yaml', /leads outside/);
  });

  it('a hard link to a file outside', async () => {
    await put('Chart.yaml', CHART);
    await put('templates/cm.yaml', FILES_GET('kubeconfig.txt'));
    await link(secretFile, join(checkout, 'kubeconfig.txt'));
    await expectRefusedBeforeHelm('.', 'kubeconfig.txt', /is a hard link \(a file with 2 names/);
  });

  it('a FIFO (which would hold helm until its timeout)', async () => {
    await put('Chart.yaml', CHART);
    execFileSync('mkfifo', [join(checkout, 'values.yaml')]);
    await expectRefusedBeforeHelm('.', 'values.yaml', /device, FIFO or socket/);
  });

  it('a link loop (helm would walk it until the path is too long), and a link that leads nowhere', async () => {
    await put('Chart.yaml', CHART);
    await link_('templates/loop', '..');
    await expectRefusedBeforeHelm('.', 'templates/loop', /a folder that contains it \(a loop\)/);
    await rm(join(checkout, 'templates/loop'));
    await link_('templates/gone.yaml', 'missing.yaml');
    await expectRefusedBeforeHelm('.', 'templates/gone.yaml', /leads nowhere/);
  });

  it('links that multiply the paths helm would visit are bounded', async () => {
    await put('Chart.yaml', CHART);
    // 16 levels of two links each: 2^16 paths for helm, 16 folders for the walk.
    for (let level = 0; level < 16; level++) {
      await put(`l${level}/file.txt`, 'x');
      if (level > 0) {
        await link_(`l${level - 1}/a`, `../l${level}`);
        await link_(`l${level - 1}/b`, `../l${level}`);
      }
    }
    await expectRefusedBeforeHelm(
      '.',
      '.',
      /more than 20000 files and folders once symbolic links are followed/,
    );
  });

  it('a vendored chart archive with a link, an absolute or a ".." entry', async () => {
    await put('Chart.yaml', `${CHART}dependencies: [{name: sub, version: 0.1.0}]\n`);
    const sub = [
      { name: 'sub/Chart.yaml', content: 'apiVersion: v2\nname: sub\nversion: 0.1.0\n' },
      { name: 'sub/templates/cm.yaml', content: FILES_GET('k.txt') },
    ];
    const cases = [
      [{ name: 'sub/k.txt', type: 'symlink' as const, linkName: secretFile }, /is a symbolic link/],
      [{ name: 'sub/k.txt', type: 'hardlink' as const, linkName: 'sub/Chart.yaml' }, /is a hard link/],
      [{ name: '/sub/k.txt', content: 'x' }, /is an absolute path/],
      [{ name: 'sub/../../k.txt', content: 'x' }, /contains a "\.\." segment/],
    ] as const;
    for (const [entry, why] of cases) {
      await put('charts/sub-0.1.0.tgz', tgzBytes([...sub, entry]));
      await expectRefusedBeforeHelm(
        '.',
        'charts/sub-0.1.0.tgz',
        why,
        `charts/sub-0.1.0.tgz (entry ${JSON.stringify(entry.name)})`,
      );
    }
    // The archive nested in an archive is checked too.
    const inner = tgzBytes([...sub, { name: 'sub/k.txt', type: 'symlink', linkName: '/etc/passwd' }]);
    await put(
      'charts/outer-0.1.0.tgz',
      tgzBytes([
        { name: 'outer/Chart.yaml', content: CHART },
        { name: 'outer/charts/sub-0.1.0.tgz', content: inner },
      ]),
    );
    await put('charts/sub-0.1.0.tgz', tgzBytes(sub));
    await expectRefusedBeforeHelm(
      '.',
      'charts/outer-0.1.0.tgz',
      /symbolic link/,
      'charts/outer-0.1.0.tgz (entry "outer/charts/sub-0.1.0.tgz") (entry "sub/k.txt")',
    );
  });
});

describe('Helm: links that stay inside the checkout still render', () => {
  it('a linked template, a linked values.yaml and a library chart linked into charts/', async () => {
    await put('chart/Chart.yaml', `${CHART}dependencies: [{name: library, version: 0.1.0}]\n`);
    await put('chart/defaults.yaml', 'greeting: hello\n');
    await link_('chart/values.yaml', 'defaults.yaml');
    await put(
      'shared/cm.yaml',
      'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: shared}\ndata: {g: {{ .Values.greeting }}, f: {{ .Files.Get "notes.txt" | quote }}}\n',
    );
    await link_('chart/templates/cm.yaml', '../../shared/cm.yaml');
    await put('shared/notes.txt', 'inside');
    await link_('chart/notes.txt', '../shared/notes.txt');
    await put('library/Chart.yaml', 'apiVersion: v2\nname: library\nversion: 0.1.0\n');
    await put('library/templates/lib.yaml', 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: lib}\n');
    await link_('chart/charts/library', '../../library');
    const objects = await helm('chart');
    expect(objects.map((o) => o.metadata.name).sort()).toEqual(['lib', 'shared']);
    expect(objects.find((o) => o.metadata.name === 'shared')).toMatchObject({
      data: { g: 'hello', f: 'inside' },
    });
  });

  it('a template asking .Files.Get for a path outside gets nothing (helm reads only the chart)', async () => {
    await put('Chart.yaml', CHART);
    await put('templates/cm.yaml', FILES_GET(secretFile));
    await put('templates/cm2.yaml', FILES_GET('../outside/kubeconfig').replace('name: leak', 'name: leak2'));
    const objects = await helm('.');
    expect(objects.map((o) => (o as { data?: { k?: string } }).data?.k)).toEqual(['', '']);
  });
});

describe('the tools run with a private home and an environment of their own', () => {
  const planted = {
    AWS_SECRET_ACCESS_KEY: 'planted-aws',
    AWS_SESSION_TOKEN: 'planted-token',
    KUBECONFIG: '/root/.kube/config',
    KUBERNETES_SERVICE_HOST: '10.0.0.1',
    HELM_REPOSITORY_CONFIG: '/root/repos.yaml',
    GITHUB_TOKEN: 'planted-gh',
  };
  let saved: Record<string, string | undefined>;
  beforeEach(() => {
    saved = Object.fromEntries(Object.keys(planted).map((k) => [k, process.env[k]]));
    Object.assign(process.env, planted);
  });
  afterEach(() => {
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  });

  it('helm: HOME, cwd and every config/cache/data home are one private folder, removed afterwards; nothing inherited, no PATH', async () => {
    await put('Chart.yaml', CHART);
    const temp = join(base, 'temp');
    await mkdir(temp);
    const fake = await recordingTool(base);
    await renderHelmChart(checkout, {
      helm: fake.path,
      releaseName: 'r',
      namespace: 'n',
      values: {},
      tempDir: temp,
    });
    const { env, cwd } = await fake.seen();
    expect(cwd).toMatch(new RegExp(`^${temp}/convoy-render-`));
    expect(Object.keys(env).sort()).toEqual(Object.keys(toolEnvironment(cwd)).concat(['PWD']).sort());
    for (const value of Object.values(env)) {
      expect(value.startsWith(cwd) || ['1', '0', '/dev/null', NO_NETWORK_PROXY].includes(value), value).toBe(
        true,
      );
    }
    expect(JSON.stringify(env)).not.toMatch(/planted|10\.0\.0\.1|\/root/);
    expect(await readdir(temp)).toEqual([]);
  });

  it('kubectl kustomize: the same — no PATH (no git to clone a remote base with), a proxy that refuses every connection', async () => {
    await put('kustomization.yaml', 'resources: []\n');
    const fake = await recordingTool(base);
    await renderKustomize(checkout, { kubectl: fake.path });
    const { env, cwd } = await fake.seen();
    expect(env.HOME).toBe(cwd);
    expect(env.KUBECONFIG).toBe(join(cwd, 'no-kubeconfig'));
    expect(env.PATH).toBeUndefined();
    expect(env.HTTPS_PROXY).toBe(NO_NETWORK_PROXY);
    expect(env.GIT_CONFIG_GLOBAL).toBe('/dev/null');
    expect(Object.keys(env).sort()).toEqual(Object.keys(toolEnvironment(cwd)).concat(['PWD']).sort());
    expect(JSON.stringify(env)).not.toMatch(/planted|10\.0\.0\.1/);
    await expect(stat(cwd)).rejects.toThrow(/ENOENT/);
  });
});

describe('Kustomize: bases and components stay inside the checkout', () => {
  const cm = (name: string) => `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: ${name}}\n`;

  async function expectRefused(dir: string, file: RegExp, why: RegExp) {
    const counter = await countingTool(base, tools.kubectl);
    const error = await renderKustomize(join(checkout, dir), { kubectl: counter.path, root: checkout }).then(
      () => expect.fail('the render should have been refused'),
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(RenderError);
    expect((error as Error).message).toMatch(file);
    expect((error as Error).message).toMatch(why);
    expect((error as Error).message).not.toContain(SECRET);
    expect(await counter.starts()).toBe(0);
  }

  it('a base that climbs out of the checkout (another checkout in the cache, say)', async () => {
    await mkdir(join(base, 'other-tenant'), { recursive: true });
    await writeFile(join(base, 'other-tenant', 'kustomization.yaml'), 'resources: [cm.yaml]\n');
    await writeFile(join(base, 'other-tenant', 'cm.yaml'), cm(SECRET));
    await put('app/kustomization.yaml', 'resources: [../../other-tenant]\n');
    await expectRefused(
      'app',
      /^app\/kustomization\.yaml \(resources: "\.\.\/\.\.\/other-tenant"\): /,
      /leads outside the repository checkout/,
    );
  });

  it('field names as Go matches them (case-insensitively) are followed too', async () => {
    await put('app/kustomization.yaml', 'Components: [../../outside]\n');
    await expectRefused('app', /\(Components: /, /leads outside/);
  });

  it('an absolute base, and a file:// repository', async () => {
    await put('app/kustomization.yaml', `resources: [${join(base, 'outside')}]\n`);
    await expectRefused('app', /\(resources: /, /absolute path/);
    await put('app/kustomization.yaml', `resources: ["file://${join(base, 'outside')}"]\n`);
    await expectRefused('app', /\(resources: /, /file:\/\/ repository/);
  });

  it('a base folder inside the checkout that is a link out', async () => {
    await link_('base', join(base, 'outside'));
    await put('app/kustomization.yaml', 'resources: [../base]\n');
    await expectRefused(
      'app',
      /^app\/kustomization\.yaml \(resources: "\.\.\/base"\): /,
      /leads through a symbolic link outside/,
    );
  });

  it('a kustomization.yaml (or a file it reads) that is a link out', async () => {
    await link_('app/kustomization.yaml', '../../outside/kustomization.yaml');
    await expectRefused('app', /^app\/kustomization\.yaml: /, /leads outside/);
  });

  it('a nested base: the graph is followed', async () => {
    await put('app/kustomization.yaml', 'resources: [../base]\n');
    await put('base/kustomization.yaml', 'resources: [../../outside]\n');
    await expectRefused('app', /^base\/kustomization\.yaml /, /leads outside/);
  });

  it('a base elsewhere in the checkout renders, and a link between folders of the checkout too', async () => {
    await put('base/kustomization.yaml', 'resources: [cm.yaml]\n');
    await put('base/cm.yaml', cm('from-base'));
    await link_('linked-base', 'base');
    await put('overlays/prod/kustomization.yaml', 'resources: [../../linked-base]\nnamePrefix: prod-\n');
    const objects = await render(
      { type: 'Kustomize', dir: join(checkout, 'overlays/prod'), root: checkout },
      tools,
    );
    expect(objects.map((o) => o.metadata.name)).toEqual(['prod-from-base']);
  });
});

describe('readCheckoutFile (values layers from a GitRepository)', () => {
  it('reads a file, or a link inside; a missing file is undefined', async () => {
    await put('values/prod.yaml', 'a: 1\n');
    await link_('values/current.yaml', 'prod.yaml');
    await expect(readCheckoutFile(checkout, 'values/prod.yaml')).resolves.toBe('a: 1\n');
    await expect(readCheckoutFile(checkout, 'values/current.yaml')).resolves.toBe('a: 1\n');
    await expect(readCheckoutFile(checkout, 'values/none.yaml')).resolves.toBeUndefined();
  });

  it.each([
    [
      'a link to an absolute path',
      'values.yaml',
      async () => link_('values.yaml', secretFile),
      /symbolic link to an absolute path/,
    ],
    [
      'a relative link out',
      'values.yaml',
      async () => link_('values.yaml', '../outside/kubeconfig'),
      /leads outside/,
    ],
    ['a folder link out', 'v/values.yaml', async () => link_('v', '../outside'), /leads outside/],
    [
      'a hard link',
      'values.yaml',
      async () => {
        await mkdir(checkout, { recursive: true });
        await link(secretFile, join(checkout, 'values.yaml'));
      },
      /hard link/,
    ],
    ['a ".." path', '../outside/kubeconfig', async () => mkdir(checkout, { recursive: true }), /"\.\."/],
    ['an absolute path', '/etc/passwd', async () => mkdir(checkout, { recursive: true }), /absolute/],
  ])('%s is refused, naming the path', async (_name, path, arrange, why) => {
    await arrange();
    const error = await readCheckoutFile(checkout, path).then(
      () => expect.fail('should be refused'),
      (e: unknown) => e as Error,
    );
    expect(error).toBeInstanceOf(RenderError);
    expect(error.message.startsWith(`${path}: `)).toBe(true);
    expect(error.message).toMatch(why);
    expect(error.message).not.toContain(SECRET);
  });
});
