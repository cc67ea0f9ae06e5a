import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { render } from '../../../adapters/render/index.ts';
import type { RenderTools } from '../../../adapters/render/index.ts';
import { RenderError, UnsupportedRenderError } from '../../../domain/render/errors.ts';
import { renderTools } from './render-tools.ts';

let tools: RenderTools;
let root: string;
beforeAll(async () => {
  tools = await renderTools();
  root = await mkdtemp(join(tmpdir(), 'convoy-render-test-'));
  const put = async (path: string, text: string) => {
    await mkdir(dirname(join(root, path)), { recursive: true });
    await writeFile(join(root, path), text);
  };
  const cm = 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cfg}\ndata: {a: "1"}\n';
  await put('manifests/cfg.yaml', cm);
  await put('kustomize/kustomization.yaml', 'resources: [cfg.yaml]\ncommonLabels: {via: kustomize}\n');
  await put('kustomize/cfg.yaml', cm);
  await put('chart/Chart.yaml', 'apiVersion: v2\nname: c\nversion: 0.1.0\n');
  await put(
    'chart/templates/cfg.yaml',
    'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: {{ .Release.Name }}}\ndata: {a: {{ .Values.a | quote }}}\n',
  );
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

describe('render', () => {
  it('type Manifests reads the folder', async () => {
    const objects = await render({ type: 'Manifests', dir: join(root, 'manifests') }, tools);
    expect(objects).toEqual([
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cfg' }, data: { a: '1' } },
    ]);
  });

  it('type Kustomize runs kubectl kustomize', async () => {
    const objects = await render({ type: 'Kustomize', dir: join(root, 'kustomize') }, tools);
    expect(objects[0]?.metadata.labels).toEqual({ via: 'kustomize' });
  });

  it('type Helm runs helm template', async () => {
    const objects = await render(
      {
        type: 'Helm',
        dir: join(root, 'chart'),
        helm: { releaseName: 'rel', namespace: 'team-a', values: { a: 'x' } },
      },
      tools,
    );
    expect(objects).toEqual([
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'rel' }, data: { a: 'x' } },
    ]);
  });

  it('type Helm without Helm options is a RenderError', async () => {
    await expect(render({ type: 'Helm', dir: join(root, 'chart') }, tools)).rejects.toBeInstanceOf(
      RenderError,
    );
  });

  it('type Jsonnet is unsupported', async () => {
    const rendering = render({ type: 'Jsonnet', dir: root }, tools);
    await expect(rendering).rejects.toBeInstanceOf(UnsupportedRenderError);
    await expect(rendering).rejects.toMatchObject({
      feature: 'Jsonnet',
      field: 'spec.content.type',
      retryable: false,
    });
  });
});
