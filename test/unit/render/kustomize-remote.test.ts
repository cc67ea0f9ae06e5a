// Kustomize remote references, played as a Git author: every field kubectl's kustomize fetches a
// URL from (measured against the binary convoy ships, not its docs) names a loopback HTTP server
// this file starts. Each render is refused before kubectl starts, naming the kustomization (or the
// plugin config) and the field, and the server receives nothing. The tool's environment is the
// second wall: no git to clone with, and a proxy that refuses what a scan could miss (but loopback).
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { renderKustomize } from '../../../adapters/render/kustomize.ts';
import { runTool } from '../../../adapters/render/run-tool.ts';
import { withToolHome } from '../../../adapters/render/tool-sandbox.ts';
import { RenderError } from '../../../domain/render/errors.ts';
import {
  isRemoteReference,
  remoteReferences,
  remoteReferencesInText,
} from '../../../domain/render/kustomize-remote.ts';
import { renderTools } from './render-tools.ts';
import { countingTool } from './sandbox-tools.ts';

const CM = 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: app}\ndata: {a: b}\n';

describe('remoteReferences: the fields kustomize fetches from, at any depth, in any case', () => {
  it('finds every fetching field of a kustomization, with where it is', () => {
    const u = 'http://169.254.169.254/latest';
    const refs = remoteReferences({
      resources: ['app.yaml', `${u}/res`],
      bases: ['github.com/org/repo//base?ref=v1'],
      Components: ['git@github.com:org/repo.git'],
      crds: [`${u}/crds`],
      configurations: [`${u}/cfg`],
      patchesStrategicMerge: ['patch.yaml', `${u}/psm`],
      patches: [{ path: 'local.yaml' }, { path: `${u}/patch`, target: { kind: 'ConfigMap' } }],
      patchesJson6902: [{ path: `${u}/pj` }],
      replacements: [{ path: `${u}/repl` }],
      openapi: { path: `${u}/openapi` },
      configMapGenerator: [{ name: 'a', files: ['k=local.txt', `k=${u}/files`], ENVS: [`${u}/envs`] }],
      secretGenerator: [{ name: 's', env: `${u}/env` }],
      helmCharts: [{ name: 'x', repo: `${u}/charts` }],
    });
    expect(refs.map((r) => r.field)).toEqual([
      'resources',
      'bases',
      'Components',
      'crds',
      'configurations',
      'patchesStrategicMerge',
      'patches[1].path',
      'patchesJson6902[0].path',
      'replacements[0].path',
      'openapi.path',
      'configMapGenerator[0].files',
      'configMapGenerator[0].ENVS',
      'secretGenerator[0].env',
      'helmCharts[0].repo',
    ]);
  });

  it('finds them inside inline plugin configs (block or one-line flow YAML) and plugin config files', () => {
    const refs = remoteReferences({
      transformers: [
        'local-transformer.yaml',
        'apiVersion: builtin\nkind: PatchTransformer\nmetadata: {name: p}\npath: http://127.0.0.1:1/x\n',
      ],
      generators: [
        '{apiVersion: builtin, kind: ConfigMapGenerator, metadata: {name: g}, files: [https://10.0.0.1/f]}',
      ],
    });
    expect(refs).toEqual([
      { field: 'transformers (inline).path', value: 'http://127.0.0.1:1/x' },
      { field: 'generators (inline).files', value: 'https://10.0.0.1/f' },
    ]);
    const file = `apiVersion: builtin\nkind: ReplacementTransformer\nmetadata: {name: r}\nreplacements:\n- path: https://[::1]/r\n---\n${CM}`;
    expect(remoteReferencesInText(file, 'plugin config')).toEqual([
      { field: 'plugin config.replacements[0].path', value: 'https://[::1]/r' },
    ]);
    // Text convoy cannot parse is refused when anything in it looks remote.
    expect(remoteReferencesInText('path: [http://127.0.0.1/x\n', 'plugin config')).toHaveLength(1);
    expect(remoteReferencesInText('path: [local\n', 'plugin config')).toEqual([]);
  });

  it('leaves URLs alone where kustomize only copies them (annotations, literals, images, field specs)', () => {
    expect(
      remoteReferences({
        commonAnnotations: { docs: 'https://example.com/runbook' },
        labels: [{ pairs: { team: 'a' } }],
        configMapGenerator: [{ name: 'c', literals: ['URL=https://example.com'] }],
        images: [{ name: 'app', newName: 'ghcr.io/org/app' }],
        resources: ['./github.com/vendored/base', 'deploy.yaml'],
        patches: [{ patch: '- op: add\n  path: /metadata/annotations/x\n  value: https://example.com' }],
      }),
    ).toEqual([]);
  });

  it.each([
    ['http://127.0.0.1/x', true],
    [' HTTPS://10.0.0.1/x', true],
    ['http:127.0.0.1/x', true],
    ['git::https://host/repo', true],
    ['gh:org/repo', true],
    ['www.github.com/org/repo', true],
    ['bitbucket.org:org/repo', true],
    ['user@10.0.0.1:repo', true],
    ['foo@127.0.0.1/a/b', true],
    ['s3://bucket/x', true],
    ['../base', false],
    ['github.com.yaml', false],
    ['owner@example.yaml', false],
    ['host:a/b', false],
    // The machine's own disk, not the network: refused as a file:// repository (kustomize-refs.ts).
    ['file:///var/lib/repo', false],
    ['git::file:///var/lib/repo', false],
  ])('%j is remote: %s', (value, remote) => {
    expect(isRemoteReference(value)).toBe(remote);
  });
});

describe('a Git author names a remote location in a kustomization: refused before kubectl starts, nothing fetched', () => {
  let server: Server;
  let requests: string[];
  let url: string;
  let kubectl: string;
  let base: string;
  let checkout: string;

  beforeAll(async () => {
    kubectl = (await renderTools()).kubectl;
    requests = [];
    server = createServer((req, res) => {
      requests.push(req.url ?? '');
      res.end(CM);
    });
    await new Promise<void>((ok) => server.listen(0, '127.0.0.1', () => ok()));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((ok) => server.close(ok));
  });
  beforeEach(async () => {
    base = await mkdtemp(join(tmpdir(), 'convoy-kremote-'));
    checkout = join(base, 'checkout');
    await mkdir(checkout);
  });
  afterEach(async () => {
    await rm(base, { recursive: true, force: true });
  });

  async function put(files: Record<string, string>): Promise<void> {
    for (const [path, text] of Object.entries(files)) {
      await mkdir(dirname(join(checkout, path)), { recursive: true });
      await writeFile(join(checkout, path), text);
    }
  }

  async function expectRefused(dir: string, named: string): Promise<string> {
    const counter = await countingTool(base, kubectl);
    const error = await renderKustomize(join(checkout, dir), { kubectl: counter.path, root: checkout }).then(
      () => expect.fail('the render should have been refused'),
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(RenderError);
    const message = (error as Error).message;
    expect(message.startsWith(named), message).toBe(true);
    expect(message).toContain(
      "names a remote location, which kustomize would fetch itself, outside the installation's egress policy",
    );
    expect(message).toContain('deploy it as a Release of its own');
    expect(await counter.starts()).toBe(0);
    return message;
  }

  // One kustomization per field that fetched from the recording server when kubectl ran it.
  const FIELDS: [string, (u: string) => string][] = [
    ['resources', (u) => `resources:\n- ${u}/res.yaml\n`],
    ['bases', (u) => `bases:\n- ${u}/bases.yaml\n`],
    ['crds', (u) => `crds:\n- ${u}/crds.yaml\n`],
    ['configurations', (u) => `configurations:\n- ${u}/cfg.yaml\n`],
    ['patchesStrategicMerge', (u) => `patchesStrategicMerge:\n- ${u}/psm.yaml\n`],
    ['patches[0].path', (u) => `patches:\n- path: ${u}/patch.yaml\n`],
    [
      'patchesJson6902[0].path',
      (u) => `patchesJson6902:\n- path: ${u}/pj.yaml\n  target: {kind: ConfigMap, name: app}\n`,
    ],
    ['replacements[0].path', (u) => `replacements:\n- path: ${u}/repl.yaml\n`],
    ['openapi.path', (u) => `openapi:\n  path: ${u}/openapi.json\n`],
    ['configMapGenerator[0].files', (u) => `configMapGenerator:\n- name: a\n  files:\n  - k=${u}/files\n`],
    ['configMapGenerator[0].ENVS', (u) => `configMapGenerator:\n- name: a\n  ENVS:\n  - ${u}/envs\n`],
    ['secretGenerator[0].env', (u) => `secretGenerator:\n- name: a\n  env: ${u}/env\n`],
    ['components', (u) => `components:\n- ${u}/repo.git//c?ref=main\n`],
    [
      'transformers (inline).path',
      (u) =>
        `transformers:\n- |-\n  apiVersion: builtin\n  kind: PatchTransformer\n  metadata: {name: p}\n  path: ${u}/inline.yaml\n`,
    ],
  ];

  it.each(FIELDS)('%s', async (field, kustomization) => {
    await put({ 'app/kustomization.yaml': kustomization(url), 'app/cm.yaml': CM });
    const message = await expectRefused('app', `app/kustomization.yaml (${field}: "`);
    expect(message).toContain(url);
    expect(requests).toEqual([]);
  });

  it('the metadata address, a loopback git base, and the github shorthand, from a base reached by a local path', async () => {
    for (const remote of [
      'http://169.254.169.254/latest/meta-data/iam/security-credentials/',
      `${url}/org/repo.git//deploy?ref=main`,
      'github.com/org/repo//deploy?ref=v1',
    ]) {
      await put({
        'overlays/prod/kustomization.yaml': 'resources:\n- ../../bases/app\n',
        'bases/app/kustomization.yaml': `resources:\n- cm.yaml\n- ${remote}\n`,
        'bases/app/cm.yaml': CM,
      });
      await expectRefused('overlays/prod', `bases/app/kustomization.yaml (resources: "${remote}`);
    }
    expect(requests).toEqual([]);
  });

  it('a transformer config file, and the objects of a kustomization folder used as transformers', async () => {
    const patch = `apiVersion: builtin\nkind: PatchTransformer\nmetadata: {name: p}\npath: ${url}/patch.yaml\n`;
    await put({
      'app/kustomization.yaml': 'resources: [cm.yaml]\ntransformers: [patch.yaml]\n',
      'app/cm.yaml': CM,
      'app/patch.yaml': patch,
    });
    await expectRefused('app', `app/patch.yaml (plugin config.path: "${url}/patch.yaml")`);
    await rm(join(checkout, 'app'), { recursive: true });
    await put({
      'app/kustomization.yaml': 'resources: [cm.yaml]\ntransformers: [../plugins]\n',
      'app/cm.yaml': CM,
      'plugins/kustomization.yaml': 'resources: [patch.yaml]\n',
      'plugins/patch.yaml': patch,
    });
    await expectRefused('app', `plugins/patch.yaml (plugin config.path: "${url}/patch.yaml")`);
    expect(requests).toEqual([]);
  });

  it('control: the same shapes with local files render, and URLs kustomize only copies stay', async () => {
    await put({
      'app/kustomization.yaml':
        'resources: [cm.yaml]\ntransformers: [patch.yaml]\ncommonAnnotations: {docs: "https://example.com/runbook"}\n',
      'app/cm.yaml': CM,
      'app/patch.yaml':
        'apiVersion: builtin\nkind: PatchTransformer\nmetadata: {name: p}\npatch: |-\n  apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: app}\n  data: {a: patched}\n',
    });
    const objects = await renderKustomize(join(checkout, 'app'), { kubectl, root: checkout });
    expect(objects).toMatchObject([
      {
        kind: 'ConfigMap',
        metadata: { annotations: { docs: 'https://example.com/runbook' } },
        data: { a: 'patched' },
      },
    ]);
  });

  it('second wall, should a scan miss a field: kubectl gets no git and a refusing proxy for every address but loopback', async () => {
    const port = (server.address() as AddressInfo).port;
    const run = (text: string) =>
      withToolHome({}, async (home) => {
        await writeFile(join(home.dir, 'kustomization.yaml'), text);
        return runTool(kubectl, ['kustomize', '--', home.dir], { what: 'kubectl kustomize', home });
      });
    // Straight to kubectl, past the scan: a name (even one for loopback) goes to the refusing proxy.
    await expect(run(`resources:\n- http://localhost.:${port}/named.yaml\n`)).rejects.toThrow(/proxyconnect/);
    await expect(run('resources:\n- git@github.com:org/repo.git\n')).rejects.toThrow(/no 'git' program/);
    expect(requests).toEqual([]);
    // What the proxy cannot cover (Go never proxies a loopback literal): why the scan comes first.
    await run(`resources:\n- http://127.0.0.1:${port}/loopback.yaml\n`);
    expect(requests).toEqual(['/loopback.yaml']);
  });
});
