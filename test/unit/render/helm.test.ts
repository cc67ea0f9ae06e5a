import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { renderHelmChart } from '../../../adapters/render/helm.ts';
import type { RenderTools } from '../../../adapters/render/index.ts';
import { RenderError, UnsupportedRenderError } from '../../../domain/render/errors.ts';
import { mergeValues } from '../../../domain/render/helm-values.ts';
import type { KubeObject } from '../../../domain/render/kube-object.ts';
import { parseManifests } from '../../../domain/render/manifest-parse.ts';
import { renderTools } from './render-tools.ts';

let tools: RenderTools;
let root: string;
beforeAll(async () => {
  tools = await renderTools();
});
beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), 'convoy-helm-test-'));
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

async function put(path: string, text: string): Promise<void> {
  await mkdir(dirname(join(root, path)), { recursive: true });
  await writeFile(join(root, path), text);
}

const CHART_VALUES = `replicaCount: 1
image:
  repository: nginx
  tag: "1.25"
debug:
  enabled: true
  level: info
tolerations:
  - key: a
extra: keep
`;

/** A chart whose ConfigMap shows the values helm computed, plus a Deployment, a CRD and a test hook. */
async function writeChart(dir: string, name = 'web', chartYamlExtra = ''): Promise<string> {
  await put(`${dir}/Chart.yaml`, `apiVersion: v2\nname: ${name}\nversion: 0.1.0\n${chartYamlExtra}`);
  await put(`${dir}/values.yaml`, CHART_VALUES);
  await put(
    `${dir}/templates/configmap.yaml`,
    `apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ .Release.Name }}-values
data:
  values.json: {{ .Values | toJson | quote }}
  namespace: {{ .Release.Namespace }}
`,
  );
  await put(
    `${dir}/templates/deployment.yaml`,
    `apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ .Release.Name }}
  labels: {app: {{ .Release.Name }}}
spec:
  replicas: {{ .Values.replicaCount }}
  selector: {matchLabels: {app: {{ .Release.Name }}}}
  template:
    metadata: {labels: {app: {{ .Release.Name }}}}
    spec:
      containers:
        - name: web
          image: "{{ .Values.image.repository }}:{{ .Values.image.tag }}"
`,
  );
  await put(
    `${dir}/templates/tests/test-connection.yaml`,
    `apiVersion: v1
kind: Pod
metadata:
  name: {{ .Release.Name }}-test
  annotations: {"helm.sh/hook": test}
spec: {containers: [{name: t, image: busybox}]}
`,
  );
  await put(
    `${dir}/crds/widgets.yaml`,
    `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.example.com}
spec:
  group: example.com
  scope: Namespaced
  names: {kind: Widget, plural: widgets}
  versions: [{name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: object}}}]
`,
  );
  return join(root, dir);
}

const find = (objects: KubeObject[], kind: string) => objects.find((o) => o.kind === kind);

describe('renderHelmChart', () => {
  it('renders a chart with three values layers and inline values merged over the chart defaults', async () => {
    const chart = await writeChart('web');
    const values = mergeValues([
      { replicaCount: 2, image: { tag: '1.26' } },
      { debug: null, tolerations: [{ key: 'b' }] },
      { replicaCount: 3, debug: { level: 'trace' } },
      { image: { repository: 'mirror/nginx' } },
    ]);
    const objects = await renderHelmChart(chart, {
      helm: tools.helm,
      releaseName: 'shop',
      namespace: 'team-a',
      values,
    });

    expect(objects.map((o) => `${o.kind}/${o.metadata.name}`).sort()).toEqual([
      'ConfigMap/shop-values',
      'CustomResourceDefinition/widgets.example.com',
      'Deployment/shop',
    ]);
    const data = find(objects, 'ConfigMap')?.data as { 'values.json': string; namespace: string };
    expect(JSON.parse(data['values.json'])).toEqual({
      replicaCount: 3,
      image: { repository: 'mirror/nginx', tag: '1.26' },
      // null deleted debug, then a later layer set debug.level again: as with helm -f, the
      // chart's defaults for debug apply again below it.
      debug: { enabled: true, level: 'trace' },
      tolerations: [{ key: 'b' }],
      extra: 'keep',
    });
    expect(data.namespace).toBe('team-a');
    expect(find(objects, 'Deployment')?.spec).toMatchObject({
      replicas: 3,
      template: { spec: { containers: [{ image: 'mirror/nginx:1.26' }] } },
    });
  });

  it('merges layers exactly as helm template -f layer1 -f layer2 … does', async () => {
    const chart = await writeChart('web');
    const layers = [
      { replicaCount: 2, image: { tag: '1.26' }, list: [1, 2] },
      { debug: null, tolerations: [{ key: 'b' }], list: [3] },
      { debug: { level: 'trace' }, extra: null },
      { image: { repository: 'mirror/nginx' }, nested: { a: { b: null } } },
    ];
    const files = await Promise.all(
      layers.map(async (layer, i) => {
        const file = join(root, `layer${i}.json`);
        await writeFile(file, JSON.stringify(layer));
        return file;
      }),
    );
    const helmHome = join(root, 'helm-home');
    const direct = execFileSync(tools.helm, ['template', 'shop', chart, ...files.flatMap((f) => ['-f', f])], {
      env: {
        PATH: process.env.PATH,
        HOME: helmHome,
        HELM_CACHE_HOME: helmHome,
        HELM_CONFIG_HOME: helmHome,
        HELM_DATA_HOME: helmHome,
      },
      encoding: 'utf8',
    });
    const ours = await renderHelmChart(chart, {
      helm: tools.helm,
      releaseName: 'shop',
      namespace: 'default',
      values: mergeValues(layers),
    });
    const valuesOf = (objects: KubeObject[]) =>
      JSON.parse(
        (find(objects, 'ConfigMap')?.data as Record<string, string>)['values.json'] ?? '',
      ) as unknown;
    const helmValues = valuesOf(parseManifests(direct, { file: 'helm' }));
    expect(valuesOf(ours)).toEqual(helmValues);
    expect(helmValues).toMatchObject({ debug: { enabled: true, level: 'trace' }, list: [3] });
    expect(helmValues).not.toHaveProperty('extra');
  });

  it('a null in the last layer deletes the chart default', async () => {
    const chart = await writeChart('web');
    const objects = await renderHelmChart(chart, {
      helm: tools.helm,
      releaseName: 'shop',
      namespace: 'team-a',
      values: mergeValues([{ debug: { level: 'x' } }, { debug: null, extra: null }]),
    });
    const values = JSON.parse(
      (find(objects, 'ConfigMap')?.data as Record<string, string>)['values.json'] ?? '{}',
    ) as object;
    expect(values).not.toHaveProperty('debug');
    expect(values).not.toHaveProperty('extra');
  });

  it('leaves no temporary files behind', async () => {
    const chart = await writeChart('web');
    const temp = join(root, 'temp');
    await mkdir(temp);
    await renderHelmChart(chart, {
      helm: tools.helm,
      releaseName: 'r',
      namespace: 'n',
      values: { secret: 'x' },
      tempDir: temp,
    });
    await expect(readdir(temp)).resolves.toEqual([]);
    await put('web/templates/fail.yaml', '{{ fail "no" }}\n');
    await expect(
      renderHelmChart(chart, {
        helm: tools.helm,
        releaseName: 'r',
        namespace: 'n',
        values: {},
        tempDir: temp,
      }),
    ).rejects.toThrow(RenderError);
    await expect(readdir(temp)).resolves.toEqual([]);
  });

  it("a chart that fails to template is a RenderError with helm's message", async () => {
    const chart = await writeChart('web');
    await put(
      'web/templates/fail.yaml',
      '{{ required "databaseHost is required: set it in the values" .Values.databaseHost }}\n',
    );
    const rendering = renderHelmChart(chart, {
      helm: tools.helm,
      releaseName: 'shop',
      namespace: 'team-a',
      values: {},
    });
    await expect(rendering).rejects.toBeInstanceOf(RenderError);
    await expect(rendering).rejects.toThrow(
      /^helm template shop failed: Error: .*databaseHost is required: set it in the values/,
    );
  });

  it("a template with a syntax error is a RenderError naming helm's template file", async () => {
    const chart = await writeChart('web');
    await put('web/templates/broken.yaml', 'kind: {{ .Values.oops \n');
    await expect(
      renderHelmChart(chart, { helm: tools.helm, releaseName: 'shop', namespace: 'n', values: {} }),
    ).rejects.toThrow(/helm template shop failed: .*web\/templates\/broken\.yaml/);
  });

  it('a template that renders an invalid object names the template source', async () => {
    const chart = await writeChart('web');
    await put(
      'web/templates/nameless.yaml',
      'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  labels: {a: b}\n',
    );
    await expect(
      renderHelmChart(chart, { helm: tools.helm, releaseName: 'shop', namespace: 'n', values: {} }),
    ).rejects.toThrow(
      /^helm template shop: document \d+ \(line \d+\) \(Source: web\/templates\/nameless\.yaml\): missing metadata\.name$/,
    );
  });

  it('a missing vendored dependency is a RenderError naming it and saying to vendor it', async () => {
    const chart = await writeChart(
      'web',
      'web',
      'dependencies:\n  - name: redis\n    version: 18.x.x\n    repository: https://charts.example.com\n',
    );
    const rendering = renderHelmChart(chart, {
      helm: tools.helm,
      releaseName: 'shop',
      namespace: 'n',
      values: {},
    });
    await expect(rendering).rejects.toBeInstanceOf(RenderError);
    await expect(rendering).rejects.toThrow(
      'Helm chart "web": dependency "redis" (version 18.x.x) is not vendored under charts/; run "helm dependency build" ' +
        'in the chart folder and commit charts/ (convoy does not download dependencies)',
    );
  });

  it('renders vendored dependencies, as a folder or as a packaged .tgz', async () => {
    const deps =
      'dependencies:\n  - name: redis\n    version: 18.x.x\n    repository: https://charts.example.com\n  - name: cache\n    version: 1.0.0\n    repository: file://../cache\n';
    const chart = await writeChart('web', 'web', deps);
    await put('web/charts/redis/Chart.yaml', 'apiVersion: v2\nname: redis\nversion: 18.1.0\n');
    await put(
      'web/charts/redis/templates/svc.yaml',
      'apiVersion: v1\nkind: Service\nmetadata: {name: redis}\nspec: {ports: [{port: 6379}]}\n',
    );
    await writeChart('cache-src', 'cache');
    execFileSync(tools.helm, ['package', join(root, 'cache-src'), '-d', join(root, 'web/charts')], {
      env: {
        PATH: process.env.PATH,
        HOME: root,
        HELM_CACHE_HOME: join(root, 'h'),
        HELM_CONFIG_HOME: join(root, 'h'),
        HELM_DATA_HOME: join(root, 'h'),
      },
    });
    expect(await readdir(join(root, 'web/charts'))).toContain('cache-0.1.0.tgz');
    const objects = await renderHelmChart(chart, {
      helm: tools.helm,
      releaseName: 'shop',
      namespace: 'n',
      values: {},
      dependencyMode: 'Vendored',
    });
    expect(objects.filter((o) => o.kind === 'Service').map((o) => o.metadata.name)).toEqual(['redis']);
    expect(objects.filter((o) => o.kind === 'Deployment')).toHaveLength(2); // the chart's and the packaged subchart's (same release name)
  });

  it('dependencyMode Resolve is unsupported', async () => {
    const chart = await writeChart('web');
    const rendering = renderHelmChart(chart, {
      helm: tools.helm,
      releaseName: 'shop',
      namespace: 'n',
      values: {},
      dependencyMode: 'Resolve',
    });
    await expect(rendering).rejects.toBeInstanceOf(UnsupportedRenderError);
    await expect(rendering).rejects.toMatchObject({ feature: 'HelmDependencyResolve', retryable: false });
  });

  it('a folder without Chart.yaml is a RenderError', async () => {
    await put('empty/values.yaml', 'a: 1\n');
    await expect(
      renderHelmChart(join(root, 'empty'), {
        helm: tools.helm,
        releaseName: 'x',
        namespace: 'n',
        values: {},
      }),
    ).rejects.toThrow(/holds no Chart\.yaml/);
  });

  it('passes --kube-version to Capabilities', async () => {
    const chart = await writeChart('web');
    await put(
      'web/templates/kv.yaml',
      'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: kv}\ndata: {v: "{{ .Capabilities.KubeVersion.Version }}"}\n',
    );
    const objects = await renderHelmChart(chart, {
      helm: tools.helm,
      releaseName: 'x',
      namespace: 'n',
      values: {},
      kubeVersion: 'v1.31.2',
    });
    expect(objects.find((o) => o.metadata.name === 'kv')?.data).toEqual({ v: 'v1.31.2' });
  });
});
