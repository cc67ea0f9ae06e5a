// The Helm chart charts/convoy, checked by the real tools on every rendering: `helm lint --strict`
// with the same values, `helm template`, kubeconform (strict, schemas from the test apiserver's
// OpenAPI, config/crds and, for the ServiceMonitor, prometheus-operator's CRD vendored in
// test/harness/crds: test/harness/kubeconform.ts) and, for the default and every-knob renderings, a
// server-side dry run on the test kube-apiserver.
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { parse, parseAllDocuments, stringify } from 'yaml';
import { createToolLocator, type Tools } from '../../adapters/tools/binaries.ts';
import { PLACEHOLDER_QUEUE_URLS } from '../../infra/install-files.ts';
import { relayManifests } from '../../infra/relay-manifests.ts';
import { kubeConfigFor, freshNamespace, type FreshNamespace } from '../harness/kube.ts';
import { createKubeconform, type Kubeconform } from '../harness/kubeconform.ts';
import { until } from '../harness/runtime-env.ts';

const run = promisify(execFile);
const root = join(import.meta.dirname, '..', '..');
const chart = join(root, 'charts', 'convoy');
/** The relay image is not published: the chart has no default and must be told where the user pushed it. */
const IMAGE = '111111111111.dkr.ecr.eu-west-1.amazonaws.com/convoy-relay';
const QUEUES = {
  reconcile: 'https://sqs.eu-west-1.amazonaws.com/111111111111/convoy-reconcile',
  drift: 'https://sqs.eu-west-1.amazonaws.com/111111111111/convoy-drift',
  health: 'https://sqs.eu-west-1.amazonaws.com/111111111111/convoy-health',
};
const REQUIRED = { queues: QUEUES, image: { repository: IMAGE } };

/** Every knob of values.yaml set to something other than its default. */
const EVERY_KNOB = {
  ...REQUIRED,
  image: { repository: IMAGE, tag: 'abc123', pullPolicy: 'Always' },
  imagePullSecrets: [{ name: 'regcred' }],
  replicas: 3,
  aws: { region: 'eu-west-1' },
  renderBucket: 'renders',
  logLevel: 'debug',
  tenantNamespaces: ['team-a'],
  watchSecrets: true,
  serviceAccount: {
    annotations: { 'eks.amazonaws.com/role-arn': 'arn:aws:iam::111111111111:role/convoy-relay' },
  },
  resources: { requests: { cpu: '200m', memory: '300Mi' }, limits: { memory: '1Gi' } },
  podAnnotations: { 'secret.reloader.stakater.com/reload': 'convoy-relay-tls' },
  podLabels: { team: 'platform' },
  nodeSelector: { 'kubernetes.io/os': 'linux' },
  tolerations: [{ key: 'dedicated', operator: 'Equal', value: 'platform', effect: 'NoSchedule' }],
  affinity: {
    podAntiAffinity: {
      preferredDuringSchedulingIgnoredDuringExecution: [
        {
          weight: 100,
          podAffinityTerm: {
            topologyKey: 'topology.kubernetes.io/zone',
            labelSelector: { matchLabels: { 'app.kubernetes.io/name': 'convoy-relay' } },
          },
        },
      ],
    },
  },
  priorityClassName: 'system-cluster-critical',
  topologySpreadConstraints: [
    {
      maxSkew: 1,
      topologyKey: 'topology.kubernetes.io/zone',
      whenUnsatisfiable: 'DoNotSchedule',
      labelSelector: { matchLabels: { 'app.kubernetes.io/name': 'convoy-relay' } },
    },
  ],
  podDisruptionBudget: { enabled: true, maxUnavailable: '50%' },
  serviceMonitor: {
    enabled: true,
    labels: { release: 'kube-prometheus-stack' },
    interval: '30s',
    scrapeTimeout: '10s',
    relabelings: [{ targetLabel: 'cluster', replacement: 'management' }],
    metricRelabelings: [{ sourceLabels: ['__name__'], regex: 'nodejs_.*', action: 'drop' }],
  },
  settings: { CONVOY_CROSS_NAMESPACE_REFS: 'true', EXTRA_SETTING: 'on' },
};

interface Doc {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string> };
  spec?: Record<string, unknown>;
  data?: Record<string, string>;
}
interface PodTemplate {
  metadata: { labels: Record<string, string>; annotations: Record<string, string> };
  spec: Record<string, unknown> & {
    containers: { image: string; imagePullPolicy: string; resources: unknown }[];
  };
}

describe('Helm chart charts/convoy', () => {
  let tools: Tools;
  let ns: FreshNamespace;
  let dir: string;
  let kubeconform: Kubeconform;
  let files = 0;
  const kubeconfig = inject('kubeconfigPath');

  beforeAll(async () => {
    tools = await createToolLocator().locate();
    ns = await freshNamespace(kubeConfigFor(kubeconfig), 'chart');
    dir = await mkdtemp(join(tmpdir(), 'convoy-chart-'));
    kubeconform = await createKubeconform({ kubectl: tools.kubectl, kubeconfig, workDir: dir });
  });
  afterAll(async () => {
    await ns?.delete();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  const valuesFile = async (values: unknown) => {
    const file = join(dir, `values-${++files}.json`);
    await writeFile(file, JSON.stringify(values));
    return file;
  };

  /** helm lint --strict and helm template with the same values; kubeconform on the rendering. */
  async function render(values: unknown, extra: string[] = []): Promise<{ text: string; docs: Doc[] }> {
    const file = await valuesFile(values);
    const lint = await run(tools.helm, ['lint', '--strict', chart, '-f', file, ...extra]);
    expect(lint.stdout).toContain('1 chart(s) linted, 0 chart(s) failed');
    const { stdout: text } = await run(
      tools.helm,
      ['template', 'convoy', chart, '-n', ns.name, '--include-crds', '-f', file, ...extra],
      { maxBuffer: 16 << 20 },
    );
    const checked = await kubeconform.validate(text);
    expect(checked.skipped).toEqual([]);
    const docs = parseAllDocuments(text)
      .map((d) => d.toJS() as Doc | null)
      .filter((d): d is Doc => d !== null);
    expect(checked.valid).toHaveLength(docs.length);
    return { text, docs };
  }

  /**
   * helm template must refuse these values; returns helm's message and what `helm lint --strict` said.
   * Lint fails on a schema violation; a missing `required` value is only a warning to lint (Helm's
   * lint renders leniently), so the required-value tests look at template's refusal.
   */
  async function refused(values: unknown, extra: string[] = []): Promise<{ template: string; lint: string }> {
    const file = await valuesFile(values);
    const lint = await run(tools.helm, ['lint', '--strict', chart, '-f', file, ...extra]).then(
      ({ stdout, stderr }) => `${stdout}${stderr}`,
      (error: unknown) => {
        const e = error as { stdout?: string; stderr?: string };
        return `${e.stdout ?? ''}${e.stderr ?? String(error)}`;
      },
    );
    const template = await run(tools.helm, ['template', 'convoy', chart, '-f', file, ...extra]).then(
      () => 'rendered',
      (error: unknown) => String((error as { stderr?: string }).stderr ?? error),
    );
    return { template, lint };
  }

  /** Refused by the schema: helm template fails with `message` and lint --strict fails with it too. */
  async function refusedBySchema(values: unknown, message: RegExp, extra: string[] = []): Promise<void> {
    const { template, lint } = await refused(values, extra);
    expect(template).toMatch(/values don't meet the specifications of the schema/);
    expect(template).toMatch(message);
    expect(lint).toContain('1 chart(s) linted, 1 chart(s) failed');
    expect(lint).toMatch(message);
  }

  const only = (docs: Doc[], kind: string) => docs.filter((d) => d.kind === kind);
  const podTemplate = (docs: Doc[]) =>
    (only(docs, 'Deployment')[0]?.spec as { template: PodTemplate }).template;

  async function serverDryRun(text: string): Promise<string> {
    const file = join(dir, `dry-run-${++files}.yaml`);
    await writeFile(file, text);
    const { stdout } = await run(
      tools.kubectl,
      [
        '--kubeconfig',
        kubeconfig,
        'apply',
        '--server-side',
        '--dry-run=server',
        '--force-conflicts',
        '-f',
        file,
      ],
      { maxBuffer: 16 << 20 },
    );
    return stdout;
  }

  it('defaults: every object of relayManifests() but the Namespace, lint --strict and kubeconform clean, accepted by a server-side dry run', async () => {
    const { text, docs } = await render({
      ...REQUIRED,
      renderBucket: 'renders',
      settings: { EXTRA_SETTING: 'on' },
    });
    const expected = relayManifests({ queueUrls: PLACEHOLDER_QUEUE_URLS, region: 'r' }).filter(
      (m) => m.kind !== 'Namespace',
    );
    expect(docs.map((d) => d.kind).sort()).toEqual(expected.map((m) => m.kind).sort());
    const config = only(docs, 'ConfigMap')[0];
    expect(config?.metadata.namespace).toBe(ns.name);
    expect(config?.data).toMatchObject({
      CONVOY_NAMESPACE: ns.name,
      CONVOY_RENDER_BUCKET: 'renders',
      EXTRA_SETTING: 'on',
      AWS_REGION: 'us-east-1',
    });
    // The generated Deployment's scheduling, unchanged by the knobs' defaults.
    const generated = relayManifests({ queueUrls: PLACEHOLDER_QUEUE_URLS, region: 'r' }).find(
      (m) => m.kind === 'Deployment',
    ) as unknown as { spec: { template: PodTemplate } };
    const pod = podTemplate(docs);
    expect(pod.spec['topologySpreadConstraints']).toEqual(
      generated.spec.template.spec['topologySpreadConstraints'],
    );
    for (const field of ['imagePullSecrets', 'priorityClassName', 'nodeSelector', 'tolerations', 'affinity'])
      expect(pod.spec).not.toHaveProperty(field);
    expect(only(docs, 'ServiceMonitor')).toEqual([]);
    const applied = await serverDryRun(text);
    expect(applied).toMatch(/deployment\.apps\/convoy-relay serverside-applied \(server dry run\)/);
    expect(applied).toMatch(/poddisruptionbudget\.policy\/convoy-relay serverside-applied/);
  });

  it('every knob set: each reaches its object, lint --strict and kubeconform clean (the ServiceMonitor too), accepted by a server-side dry run (the ServiceMonitor aside)', async () => {
    const { text, docs } = await render(EVERY_KNOB);
    const pod = podTemplate(docs);
    expect(pod.metadata.labels).toMatchObject({ 'app.kubernetes.io/name': 'convoy-relay', team: 'platform' });
    expect(pod.metadata.annotations).toMatchObject({
      'secret.reloader.stakater.com/reload': 'convoy-relay-tls',
    });
    expect(pod.metadata.annotations['checksum/config']).toMatch(/^[0-9a-f]{64}$/);
    expect(pod.spec).toMatchObject({
      imagePullSecrets: EVERY_KNOB.imagePullSecrets,
      priorityClassName: EVERY_KNOB.priorityClassName,
      nodeSelector: EVERY_KNOB.nodeSelector,
      tolerations: EVERY_KNOB.tolerations,
      affinity: EVERY_KNOB.affinity,
      topologySpreadConstraints: EVERY_KNOB.topologySpreadConstraints,
    });
    expect(pod.spec.containers[0]).toMatchObject({
      image: `${IMAGE}:abc123`,
      imagePullPolicy: 'Always',
      resources: EVERY_KNOB.resources,
    });
    expect(only(docs, 'Deployment')[0]?.spec).toMatchObject({ replicas: 3 });
    expect(only(docs, 'PodDisruptionBudget')[0]?.spec).toEqual({
      maxUnavailable: '50%',
      selector: { matchLabels: { 'app.kubernetes.io/name': 'convoy-relay' } },
    });
    expect(only(docs, 'ServiceAccount')[0]?.metadata).toMatchObject({
      annotations: EVERY_KNOB.serviceAccount.annotations,
    });
    expect(only(docs, 'ConfigMap')[0]?.data).toMatchObject({
      AWS_REGION: 'eu-west-1',
      CONVOY_LOG_LEVEL: 'debug',
      CONVOY_RENDER_BUCKET: 'renders',
      CONVOY_WATCH_SECRETS: 'true',
      CONVOY_TENANT_NAMESPACES: 'team-a',
      CONVOY_CROSS_NAMESPACE_REFS: 'true',
      EXTRA_SETTING: 'on',
    });
    expect(only(docs, 'RoleBinding').map((b) => b.metadata.namespace)).toContain('team-a');
    expect(only(docs, 'ServiceMonitor')).toHaveLength(1);
    // The API server has no ServiceMonitor kind (prometheus-operator's CRD): everything else goes to the dry run.
    await run(tools.kubectl, ['--kubeconfig', kubeconfig, 'create', 'namespace', 'team-a']).catch(
      (error: unknown) => {
        if (!String(error).includes('AlreadyExists')) throw error;
      },
    );
    const withoutMonitor = parseAllDocuments(text)
      .filter((d) => (d.toJS() as Doc | null)?.kind !== 'ServiceMonitor')
      .map((d) => d.toString())
      .join('---\n');
    const applied = await serverDryRun(withoutMonitor);
    expect(applied).toMatch(/deployment\.apps\/convoy-relay serverside-applied \(server dry run\)/);
    expect(applied).toMatch(/poddisruptionbudget\.policy\/convoy-relay serverside-applied/);
  });

  it('kubeconform here refuses what the apiserver refuses: an unknown field, a wrong type; int-or-string takes both', async () => {
    const { docs } = await render(REQUIRED);
    const deployment = structuredClone(only(docs, 'Deployment')[0]) as Doc & {
      spec: { replicas: unknown; template: PodTemplate };
    };
    deployment.spec.replicas = 'two';
    (deployment.spec.template.spec.containers[0] as unknown as Record<string, unknown>)['imagePullPolcy'] =
      'Always';
    const refusal = kubeconform.validate(stringify(deployment));
    await expect(refusal).rejects.toThrow(
      /Deployment convoy-relay: statusInvalid .*replicas.*got string, want integer/s,
    );
    await expect(refusal).rejects.toThrow(/imagePullPolcy/);
    const service = structuredClone(only(docs, 'Service')[0]) as Doc & {
      spec: { ports: { targetPort: unknown }[] };
    };
    service.spec.ports = [
      { ...service.spec.ports[0], targetPort: 8080 },
      { ...service.spec.ports[1], targetPort: 'https' },
    ] as { targetPort: unknown }[];
    expect((await kubeconform.validate(stringify(service))).valid).toEqual(['Service/convoy-relay']);
  });

  it("the ServiceMonitor is checked against prometheus-operator's CRD schema, strictly: every knob passes; an unknown field, a wrong type are refused", async () => {
    const { docs } = await render(EVERY_KNOB);
    const [monitor] = only(docs, 'ServiceMonitor');
    expect((await kubeconform.validate(stringify(monitor))).valid).toEqual(['ServiceMonitor/convoy-relay']);
    type Monitor = Doc & {
      spec: { endpoints: Record<string, unknown>[]; selector: Record<string, unknown> };
    };
    const misspelt = structuredClone(monitor) as Monitor;
    misspelt.spec.endpoints[0] = { ...misspelt.spec.endpoints[0], scrapeIntervall: '30s' };
    await expect(kubeconform.validate(stringify(misspelt))).rejects.toThrow(
      /ServiceMonitor convoy-relay: statusInvalid .*scrapeIntervall/s,
    );
    const wrongType = structuredClone(monitor) as Monitor;
    wrongType.spec.endpoints[0] = { ...wrongType.spec.endpoints[0], honorLabels: 'always' };
    await expect(kubeconform.validate(stringify(wrongType))).rejects.toThrow(
      /ServiceMonitor convoy-relay: statusInvalid .*honorLabels.*got string, want boolean/s,
    );
    const badEnum = structuredClone(monitor) as Monitor;
    badEnum.spec.endpoints[0] = { ...badEnum.spec.endpoints[0], scheme: 'gopher' };
    await expect(kubeconform.validate(stringify(badEnum))).rejects.toThrow(
      /ServiceMonitor convoy-relay: statusInvalid .*scheme/s,
    );
  });

  it('values.schema.json refuses an unknown key, naming it, at every level', async () => {
    await refusedBySchema({ ...REQUIRED, replica: 3 }, /additional properties 'replica' not allowed/);
    await refusedBySchema(
      { ...REQUIRED, image: { repository: IMAGE, tags: 'x' } },
      /at '\/image': additional properties 'tags' not allowed/,
    );
    await refusedBySchema(
      { ...REQUIRED, serviceMonitor: { enable: true } },
      /at '\/serviceMonitor': additional properties 'enable' not allowed/,
    );
    await refusedBySchema(
      { ...REQUIRED, podDisruptionBudget: { minAvailible: 1 } },
      /at '\/podDisruptionBudget': additional properties 'minAvailible' not allowed/,
    );
  });

  it("values.schema.json refuses a wrong type: replicas=two, a string for a boolean, a bad enum, the chart's own label or annotation", async () => {
    await refusedBySchema(REQUIRED, /at '\/replicas': got string, want integer/, ['--set', 'replicas=two']);
    await refusedBySchema(
      { ...REQUIRED, watchSecrets: 'yes' },
      /at '\/watchSecrets': got string, want boolean/,
    );
    await refusedBySchema(
      { ...REQUIRED, image: { repository: IMAGE, pullPolicy: 'Sometimes' } },
      /at '\/image\/pullPolicy'/,
    );
    await refusedBySchema(
      { ...REQUIRED, tolerations: { key: 'x' } },
      /at '\/tolerations': got object, want array/,
    );
    await refusedBySchema(
      { ...REQUIRED, podLabels: { 'app.kubernetes.io/name': 'other' } },
      /at '\/podLabels'/,
    );
    await refusedBySchema(
      { ...REQUIRED, podAnnotations: { 'checksum/config': 'x' } },
      /at '\/podAnnotations'/,
    );
  });

  it('a settings change changes checksum/config (so helm upgrade rolls the relay); a change outside the ConfigMap does not', async () => {
    const checksum = async (values: unknown) =>
      podTemplate((await render(values)).docs).metadata.annotations['checksum/config'];
    const base = await checksum(REQUIRED);
    expect(await checksum(REQUIRED)).toBe(base);
    expect(await checksum({ ...REQUIRED, logLevel: 'debug' })).not.toBe(base);
    expect(
      await checksum({ ...REQUIRED, settings: { CONVOY_DEFAULT_SERVICE_ACCOUNT: 'convoy-deployer' } }),
    ).not.toBe(base);
    expect(await checksum({ ...REQUIRED, queues: { ...QUEUES, health: `${QUEUES.health}-2` } })).not.toBe(
      base,
    );
    expect(await checksum({ ...REQUIRED, replicas: 3, podLabels: { team: 'a' } })).toBe(base);
  });

  it('applied to the apiserver, a settings change rolls the relay: the Deployment controller starts a new ReplicaSet; the same values again start none', async () => {
    // Applied the way Argo CD applies a chart (its helm template output, server-side); the
    // cluster-scoped RBAC is left out: its fixed names are shared by the whole test run.
    const apply = async (values: unknown) => {
      const { docs } = await render(values);
      const namespaced = docs.filter(
        (d) => !d.kind.startsWith('Cluster') && d.kind !== 'CustomResourceDefinition',
      );
      const file = join(dir, `apply-${++files}.yaml`);
      await writeFile(file, namespaced.map((d) => stringify(d)).join('---\n'));
      await run(tools.kubectl, [
        '--kubeconfig',
        kubeconfig,
        'apply',
        '--server-side',
        '--field-manager',
        'chart-test',
        '-n',
        ns.name,
        '-f',
        file,
      ]);
      return podTemplate(docs).metadata.annotations['checksum/config'];
    };
    const get = async <T>(...args: string[]): Promise<T> =>
      JSON.parse(
        (await run(tools.kubectl, ['--kubeconfig', kubeconfig, '-n', ns.name, 'get', ...args, '-o', 'json']))
          .stdout,
      ) as T;
    type Deployment = { metadata: { generation: number }; status?: { observedGeneration?: number } };
    type ReplicaSets = {
      items: {
        metadata: { name: string; annotations: Record<string, string> };
        spec: { replicas: number; template: PodTemplate };
      }[];
    };
    /** The ReplicaSets once the Deployment controller has acted on the Deployment's current generation. */
    const replicaSets = async () => {
      await until(
        'the Deployment controller observed the current generation',
        async () => {
          const d = await get<Deployment>('deployment', 'convoy-relay');
          return d.status?.observedGeneration === d.metadata.generation;
        },
        { timeoutMs: 60_000 },
      );
      return (await get<ReplicaSets>('replicasets', '-l', 'app.kubernetes.io/name=convoy-relay')).items;
    };
    const values = { ...REQUIRED, replicas: 1 };
    const first = await apply(values);
    const [original] = await replicaSets();
    expect(original?.spec.template.metadata.annotations['checksum/config']).toBe(first);
    const generation = (await get<Deployment>('deployment', 'convoy-relay')).metadata.generation;

    expect(await apply(values)).toBe(first);
    expect((await get<Deployment>('deployment', 'convoy-relay')).metadata.generation).toBe(generation);
    expect((await replicaSets()).map((r) => r.metadata.name)).toEqual([original?.metadata.name]);

    const changed = await apply({ ...values, logLevel: 'debug' });
    expect(changed).not.toBe(first);
    const after = await replicaSets();
    expect(after).toHaveLength(2);
    const rolled = after.find((r) => r.metadata.name !== original?.metadata.name);
    expect(rolled?.spec.template.metadata.annotations['checksum/config']).toBe(changed);
    expect(rolled?.spec.replicas).toBe(1);
  });

  it('the PodDisruptionBudget: present at 2 replicas (minAvailable 1), absent at 1 replica and when disabled', async () => {
    const pdbs = async (values: unknown) => only((await render(values)).docs, 'PodDisruptionBudget');
    expect((await pdbs(REQUIRED))[0]?.spec).toMatchObject({ minAvailable: 1 });
    expect(await pdbs({ ...REQUIRED, replicas: 1 })).toEqual([]);
    expect(await pdbs({ ...REQUIRED, replicas: 3, podDisruptionBudget: { enabled: false } })).toEqual([]);
  });

  it('the ServiceMonitor only when enabled: it selects the relay Service and scrapes /metrics on its http port', async () => {
    expect(only((await render(REQUIRED)).docs, 'ServiceMonitor')).toEqual([]);
    const { docs } = await render({
      ...REQUIRED,
      serviceMonitor: { enabled: true, labels: { release: 'prom' } },
    });
    const [monitor] = only(docs, 'ServiceMonitor');
    const [service] = only(docs, 'Service');
    expect(monitor?.apiVersion).toBe('monitoring.coreos.com/v1');
    expect(monitor?.metadata).toMatchObject({ namespace: ns.name, labels: { release: 'prom' } });
    const spec = monitor?.spec as {
      selector: { matchLabels: Record<string, string> };
      namespaceSelector: { matchNames: string[] };
      endpoints: Record<string, unknown>[];
    };
    for (const [label, value] of Object.entries(spec.selector.matchLabels))
      expect(service?.metadata.labels?.[label]).toBe(value);
    expect(spec.namespaceSelector.matchNames).toEqual([ns.name]);
    expect(spec.endpoints).toEqual([{ port: 'http', path: '/metrics', scheme: 'http' }]);
    // The Service port named http reaches the container port that serves /metrics (relay/http/app.ts, probe app).
    const ports = (service?.spec as { ports: { name: string; targetPort: string }[] }).ports;
    expect(ports.find((p) => p.name === 'http')?.targetPort).toBe('http');
    const container = podTemplate(docs).spec.containers[0] as unknown as {
      ports: { name: string; containerPort: number }[];
    };
    expect(container.ports.find((p) => p.name === 'http')?.containerPort).toBe(8080);
  });

  it('without image.repository helm refuses, saying how to build and push the image', async () => {
    const { template, lint } = await refused({ queues: QUEUES });
    expect(lint).toMatch(/missing required values.*image\.repository: the relay image is not published/);
    expect(template).toMatch(
      /image\.repository: the relay image is not published; build it \(npm run image, or docker build -f image\/Dockerfile\) and push it to a registry of yours/,
    );
  });

  it('the relay runs image.repository at the chart appVersion unless image.tag says otherwise', async () => {
    const image = async (values: unknown) =>
      podTemplate((await render(values)).docs).spec.containers[0]?.image;
    const { appVersion } = parse(await readFile(join(chart, 'Chart.yaml'), 'utf8')) as { appVersion: string };
    expect(await image(REQUIRED)).toBe(`${IMAGE}:${appVersion}`);
    expect(await image({ ...REQUIRED, image: { repository: IMAGE, tag: 'abc123' } })).toBe(`${IMAGE}:abc123`);
  });

  it('NOTES names the image the relay runs and how to build and push another', async () => {
    const file = await valuesFile(REQUIRED);
    const { stdout } = await run(
      tools.helm,
      ['install', 'convoy', chart, '-n', ns.name, '--dry-run=client', '-f', file],
      { maxBuffer: 16 << 20 },
    );
    const notes = stdout.slice(stdout.indexOf('NOTES:'));
    const { appVersion } = parse(await readFile(join(chart, 'Chart.yaml'), 'utf8')) as { appVersion: string };
    expect(notes).toContain(`Image: ${IMAGE}:${appVersion}`);
    expect(notes).toContain('npm run image');
    expect(notes).toContain(`crane push .convoy/image/oci ${IMAGE}:<tag>`);
    expect(notes).toContain('docker build -f image/Dockerfile');
    expect(notes).toContain(`kubectl -n ${ns.name} rollout status deployment/convoy-relay`);
  });

  it('without queue URLs helm refuses, naming the value', async () => {
    const { template, lint } = await refused({ image: { repository: IMAGE } });
    expect(template).toMatch(/queues\.reconcile: the URL of the reconcile SQS queue is required/);
    expect(lint).toMatch(
      /missing required values.*queues\.reconcile: the URL of the reconcile SQS queue is required/,
    );
  });
});
