import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { RenderTools } from '../../../adapters/render/index.ts';
import { renderKustomize } from '../../../adapters/render/kustomize.ts';
import { RenderError } from '../../../domain/render/errors.ts';
import { renderTools } from './render-tools.ts';

let tools: RenderTools;
let root: string;
beforeAll(async () => {
  tools = await renderTools();
});
beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), 'convoy-kustomize-test-'));
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

async function put(path: string, text: string): Promise<void> {
  await mkdir(dirname(join(root, path)), { recursive: true });
  await writeFile(join(root, path), text);
}

async function writeBaseAndOverlay(): Promise<void> {
  await put('base/kustomization.yaml', 'resources: [deployment.yaml, service.yaml]\n');
  await put(
    'base/deployment.yaml',
    `apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 1
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: web, image: ghcr.io/org/web:1.0.0}]}
`,
  );
  await put(
    'base/service.yaml',
    'apiVersion: v1\nkind: Service\nmetadata: {name: web}\nspec: {selector: {app: web}, ports: [{port: 80}]}\n',
  );
  await put(
    'overlays/prod/kustomization.yaml',
    `resources: [../../base]
namespace: prod
namePrefix: prod-
images: [{name: ghcr.io/org/web, newTag: 1.1.0}]
configMapGenerator: [{name: settings, literals: [mode=prod]}]
patches:
  - target: {kind: Deployment, name: web}
    patch: |
      - op: replace
        path: /spec/replicas
        value: 3
`,
  );
}

describe('renderKustomize', () => {
  it('renders a base with an overlay', async () => {
    await writeBaseAndOverlay();
    // The base is in another folder of the checkout: the checkout root bounds the render.
    const objects = await renderKustomize(join(root, 'overlays/prod'), { kubectl: tools.kubectl, root });
    expect(objects.map((o) => `${o.kind}/${o.metadata.namespace}/${o.metadata.name}`).sort()).toEqual([
      expect.stringMatching(/^ConfigMap\/prod\/prod-settings-[a-z0-9]+$/),
      'Deployment/prod/prod-web',
      'Service/prod/prod-web',
    ]);
    expect(objects.find((o) => o.kind === 'Deployment')?.spec).toMatchObject({
      replicas: 3,
      template: { spec: { containers: [{ image: 'ghcr.io/org/web:1.1.0' }] } },
    });
    const base = await renderKustomize(join(root, 'base'), { kubectl: tools.kubectl });
    expect(base.map((o) => o.metadata.name).sort()).toEqual(['web', 'web']);
  });

  it("a broken kustomization is a RenderError with kubectl's message", async () => {
    await put('app/kustomization.yaml', 'resources: [missing.yaml]\n');
    const rendering = renderKustomize(join(root, 'app'), { kubectl: tools.kubectl });
    await expect(rendering).rejects.toBeInstanceOf(RenderError);
    await expect(rendering).rejects.toThrow(/^kubectl kustomize .*\/app failed: error: .*missing\.yaml/);
  });

  it('a folder without kustomization.yaml is a RenderError', async () => {
    await put('plain/a.yaml', 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n');
    await expect(renderKustomize(join(root, 'plain'), { kubectl: tools.kubectl })).rejects.toThrow(
      /unable to find one of 'kustomization\.yaml'/,
    );
  });

  it('files outside the kustomization root are refused by the load restrictor', async () => {
    await put('outside.yaml', 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n');
    await put('app/kustomization.yaml', 'resources: [../outside.yaml]\n');
    await expect(renderKustomize(join(root, 'app'), { kubectl: tools.kubectl, root })).rejects.toThrow(
      /security; file .* is not in or below/,
    );
  });

  it('a missing kubectl binary is a RenderError', async () => {
    await writeBaseAndOverlay();
    await expect(renderKustomize(join(root, 'base'), { kubectl: join(root, 'no-kubectl') })).rejects.toThrow(
      /cannot run .*no-kubectl \(ENOENT\)/,
    );
  });
});
