import { readFileSync } from 'node:fs';
import { createServer, type AddressInfo, type Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  ApiextensionsV1Api,
  CoreV1Api,
  KubeConfig,
  PatchStrategy,
  setHeaderOptions,
} from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { parseRelease, type Release } from '../../domain/api/objects.ts';
import { ApplyRejectedError, type TargetCluster } from '../../domain/reconcile/ports.ts';
import type { KubeObject } from '../../domain/render/kube-object.ts';
import { createClusterResolver, createManagementReaders } from '../../adapters/kube/cluster-resolver.ts';
import { fromClientNodeKubeConfig } from '../../adapters/kube/client-node-config.ts';
import { fromKubeconfigFile } from '../../adapters/kube/kubeconfig.ts';
import { createKubeRequest, createTargetCluster } from '../../adapters/kube/target-cluster.ts';
import { freshNamespace, kubeConfigFor, type FreshNamespace } from '../harness/kube.ts';
import { convoyApi, releaseSpec } from '../harness/releases.ts';

const kubeconfigPath = inject('kubeconfigPath');
const server = inject('server');
const kc = kubeConfigFor(kubeconfigPath);
const config = fromKubeconfigFile(kubeconfigPath);
const core = kc.makeApiClient(CoreV1Api);
const identity = { name: 'local', server };

let ns: FreshNamespace;
const cleanups: (() => Promise<unknown>)[] = [];

beforeAll(async () => {
  ns = await freshNamespace(kc, 'target-cluster');
  cleanups.push(ns.delete);
});

afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
});

const unique = (prefix: string): string => `${prefix}-${Math.random().toString(36).slice(2, 8)}`;

const configMap = (name: string, data: Record<string, string>, namespace = ns.name): KubeObject => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, namespace },
  data,
});

const deployment = (name: string, image = 'registry.example/app:1'): KubeObject => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name, namespace: ns.name, labels: { app: name } },
  spec: {
    replicas: 1,
    selector: { matchLabels: { app: name } },
    template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'app', image }] } },
  },
});

const managers = (live: Record<string, unknown> | undefined): string[] =>
  ((live?.metadata as { managedFields?: { manager: string }[] } | undefined)?.managedFields ?? []).map(
    (m) => m.manager,
  );

const resourceVersion = (live: Record<string, unknown> | undefined): string | undefined =>
  (live?.metadata as { resourceVersion?: string } | undefined)?.resourceVersion;

/** Waits until an object's resourceVersion stays the same for 1.5 s (its controllers are done with it). */
async function settled(obj: KubeObject): Promise<void> {
  const reader = createTargetCluster(config, identity);
  let last: string | undefined;
  let since = Date.now();
  for (const deadline = Date.now() + 30_000; Date.now() < deadline; await sleep(250)) {
    const now = resourceVersion(await reader.read(obj));
    if (now !== last) [last, since] = [now, Date.now()];
    else if (Date.now() - since >= 1_500) return;
  }
  throw new Error(`${obj.kind} ${obj.metadata.name} did not settle in 30 s`);
}

async function rejection(promise: Promise<unknown>): Promise<Error> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(error instanceof Error)) throw new Error(`expected a rejection, got ${String(error)}`);
  return error;
}

/** A ConfigMap merge patch by another field manager (an Update operation, like `kubectl edit`). */
async function editAs(manager: string, name: string, data: Record<string, string>): Promise<void> {
  await core.patchNamespacedConfigMap(
    { name, namespace: ns.name, body: { data }, fieldManager: manager },
    setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
  );
}

describe('TargetCluster: apply and dry run', () => {
  it('apply creates a ConfigMap and a Deployment owned by the field manager convoy', async () => {
    const target = createTargetCluster(config, identity);
    const cm = configMap(unique('cm'), { greeting: 'hello' });
    const deploy = deployment(unique('web'));
    const before = structuredClone([cm, deploy]);

    await target.apply(cm);
    await target.apply(deploy);

    expect([cm, deploy]).toEqual(before); // the caller's objects are not mutated
    const liveCm = await target.read(cm);
    const liveDeploy = await target.read(deploy);
    expect(liveCm?.data).toEqual({ greeting: 'hello' });
    expect(managers(liveCm)).toEqual(['convoy']);
    expect(managers(liveDeploy)).toContain('convoy');
    const entry = (
      liveDeploy?.metadata as { managedFields: { manager: string; operation: string }[] }
    ).managedFields.find((m) => m.manager === 'convoy');
    expect(entry?.operation).toBe('Apply');
  });

  it('user data with emoji, DEL, C1 controls and U+FEFF is applied and dry-run as is (the apply body escapes what the YAML reader refuses)', async () => {
    const target = createTargetCluster(config, identity);
    const data = {
      emoji: 'ship 🚢 ok',
      del: 'a\u007fb',
      c1: 'x\u0085\u009fy',
      bom: '\ufeffstart',
      tab: 'a\tb\nc',
      quote: 'say "\\U0001F600"',
    };
    const cm = configMap(unique('cm'), data);
    cm.metadata.annotations = { 'example.com/note': 'rocket 🚀' };
    await target.apply(cm);
    const live = await target.read(cm);
    expect(live?.data).toEqual(data);
    expect(
      (live?.metadata as { annotations?: Record<string, string> }).annotations?.['example.com/note'],
    ).toBe('rocket 🚀');
    expect(await createTargetCluster(config, identity).dryRun([cm])).toEqual([{ kind: 'unchanged' }]);
    expect(
      await createTargetCluster(config, identity).dryRun([
        configMap(cm.metadata.name, { ...data, emoji: 'ship 🛳 changed' }),
      ]),
    ).toEqual([{ kind: 'changed' }]);
  });

  it('dry run after apply: unchanged for both, without a write, in 2 requests per object', async () => {
    const counter = { count: 0 };
    const target = createTargetCluster(config, identity, { requestCounter: counter });
    const objects = [configMap(unique('cm'), { a: '1' }), deployment(unique('web'))];
    for (const obj of objects) await target.apply(obj);
    // The real Deployment controller writes the revision annotation and status right after the
    // apply; wait until it is done, so the versions below change only if convoy writes.
    await settled(objects[1]);
    const versions = await Promise.all(
      objects.map(async (o) => resourceVersion(await createTargetCluster(config, identity).read(o))),
    );

    counter.count = 0;
    expect(await target.dryRun(objects)).toEqual([{ kind: 'unchanged' }, { kind: 'unchanged' }]);
    expect(counter.count).toBe(2 * objects.length); // GET + dry-run PATCH; discovery is cached

    const after = await Promise.all(
      objects.map(async (o) => resourceVersion(await createTargetCluster(config, identity).read(o))),
    );
    expect(after).toEqual(versions);
  });

  it('apply costs one request per object once its apiVersion is discovered', async () => {
    const counter = { count: 0 };
    const target = createTargetCluster(config, identity, { requestCounter: counter });
    await target.apply(configMap(unique('cm'), { a: '1' }));
    expect(counter.count).toBe(2); // discovery of v1 + PATCH
    counter.count = 0;
    await target.apply(configMap(unique('cm'), { a: '1' }));
    expect(counter.count).toBe(1);
  });

  it('a changed field → changed', async () => {
    const target = createTargetCluster(config, identity);
    const cm = configMap(unique('cm'), { a: '1' });
    const deploy = deployment(unique('web'));
    await target.apply(cm);
    await target.apply(deploy);

    const verdicts = await target.dryRun([
      configMap(cm.metadata.name, { a: '2' }),
      deployment(deploy.metadata.name, 'registry.example/app:2'),
    ]);
    expect(verdicts).toEqual([{ kind: 'changed' }, { kind: 'changed' }]);
  });

  it('a field dropped from the render → changed', async () => {
    const target = createTargetCluster(config, identity);
    const cm = configMap(unique('cm'), { a: '1', b: '2' });
    await target.apply(cm);

    expect(await target.dryRun([configMap(cm.metadata.name, { a: '1' })])).toEqual([{ kind: 'changed' }]);
  });

  it('an object that does not exist → changed', async () => {
    const target = createTargetCluster(config, identity);
    expect(await target.dryRun([configMap(unique('absent'), { a: '1' })])).toEqual([{ kind: 'changed' }]);
  });

  it('a field convoy owns, edited by another manager → changed', async () => {
    const target = createTargetCluster(config, identity);
    const cm = configMap(unique('cm'), { a: '1' });
    await target.apply(cm);
    await editAs('kubectl-edit', cm.metadata.name, { a: 'edited' });

    expect(await target.dryRun([cm])).toEqual([{ kind: 'changed' }]);
  });

  it('a field convoy does not own, added by another manager → unchanged', async () => {
    const target = createTargetCluster(config, identity);
    const cm = configMap(unique('cm'), { a: '1' });
    await target.apply(cm);
    await editAs('someone-else', cm.metadata.name, { b: 'theirs' });

    expect(await target.dryRun([cm])).toEqual([{ kind: 'unchanged' }]);
  });

  it('an object created by another manager with the same content → changed (convoy takes ownership)', async () => {
    const target = createTargetCluster(config, identity);
    const cm = configMap(unique('cm'), { a: '1' });
    await core.createNamespacedConfigMap({ namespace: ns.name, body: cm, fieldManager: 'someone-else' });

    expect(await target.dryRun([cm])).toEqual([{ kind: 'changed' }]);
  });

  it('a bare Namespace applied by convoy → unchanged (an apply without fields records no managedFields)', async () => {
    const target = createTargetCluster(config, identity);
    const namespace: KubeObject = { apiVersion: 'v1', kind: 'Namespace', metadata: { name: unique('bare') } };
    await target.apply(namespace);
    cleanups.push(() => core.deleteNamespace({ name: namespace.metadata.name }));

    expect(await target.dryRun([namespace])).toEqual([{ kind: 'unchanged' }]);
  });

  it('verdicts come back in input order', async () => {
    const target = createTargetCluster(config, identity, { concurrency: 3 });
    const applied = Array.from({ length: 6 }, () => configMap(unique('cm'), { a: '1' }));
    for (const obj of applied) await target.apply(obj);
    const objects = applied.map((obj, i) => (i % 2 === 0 ? obj : configMap(obj.metadata.name, { a: 'new' })));

    const verdicts = await target.dryRun(objects);
    expect(verdicts.map((v) => v.kind)).toEqual([
      'unchanged',
      'changed',
      'unchanged',
      'changed',
      'unchanged',
      'changed',
    ]);
  });
});

describe('TargetCluster: deferred objects', () => {
  it('a Namespace and a ConfigMap in that new namespace → the ConfigMap is deferred', async () => {
    const target = createTargetCluster(config, identity);
    const name = unique('newns');
    const verdicts = await target.dryRun([
      { apiVersion: 'v1', kind: 'Namespace', metadata: { name } },
      configMap('settings', { a: '1' }, name),
    ]);
    expect(verdicts[0]).toEqual({ kind: 'changed' });
    expect(verdicts[1]).toMatchObject({ kind: 'deferred' });
    expect((verdicts[1] as { why: string }).why).toContain(name);
    expect(await target.read({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } })).toBeUndefined();
  });

  it('a CRD and an instance of it → the instance is deferred; once the CRD is served and unchanged, it is dry-run', async () => {
    const group = `${unique('g')}.convoy.test`;
    const crd: KubeObject = {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: `widgets.${group}` },
      spec: {
        group,
        scope: 'Namespaced',
        names: { kind: 'Widget', plural: 'widgets', singular: 'widget', listKind: 'WidgetList' },
        versions: [
          {
            name: 'v1',
            served: true,
            storage: true,
            schema: {
              openAPIV3Schema: {
                type: 'object',
                properties: { spec: { type: 'object', properties: { size: { type: 'integer' } } } },
              },
            },
          },
        ],
      },
    };
    const widget: KubeObject = {
      apiVersion: `${group}/v1`,
      kind: 'Widget',
      metadata: { name: 'w', namespace: ns.name },
      spec: { size: 1 },
    };
    const target = createTargetCluster(config, identity);

    const verdicts = await target.dryRun([crd, widget]);
    expect(verdicts[0]).toEqual({ kind: 'changed' });
    expect(verdicts[1]).toMatchObject({ kind: 'deferred' });
    expect((verdicts[1] as { why: string }).why).toContain(`widgets.${group}`);

    await target.apply(crd);
    cleanups.push(() =>
      kc.makeApiClient(ApiextensionsV1Api).deleteCustomResourceDefinition({ name: `widgets.${group}` }),
    );
    await waitForServed(`/apis/${group}/v1`);

    const served = createTargetCluster(config, identity);
    expect(await served.dryRun([crd, widget])).toEqual([{ kind: 'unchanged' }, { kind: 'changed' }]);
    await served.apply(widget);
    expect(await served.dryRun([crd, widget])).toEqual([{ kind: 'unchanged' }, { kind: 'unchanged' }]);
    // The schema is enforced: an unknown field in the instance is refused (fieldValidation=Strict).
    const bad = await rejection(served.dryRun([crd, { ...widget, spec: { size: 1, colour: 'red' } }]));
    expect(bad).toBeInstanceOf(ApplyRejectedError);
    expect(bad.message).toContain(`Widget ${ns.name}/w`);
  });
});

async function waitForServed(path: string): Promise<void> {
  const request = createKubeRequest(config);
  for (let i = 0; i < 100; i++) {
    if ((await request({ method: 'GET', path })).status === 200) return;
    await sleep(100);
  }
  throw new Error(`${path} was not served within 10 s`);
}

describe('TargetCluster: rejections', () => {
  it('a Deployment with an unknown field spec.bogus → ApplyRejectedError naming the object, from dry run and apply', async () => {
    const target = createTargetCluster(config, identity);
    const name = unique('bogus');
    const bad = deployment(name);
    (bad.spec as Record<string, unknown>).bogus = true;

    const dry = await rejection(target.dryRun([configMap(unique('ok'), { a: '1' }), bad]));
    expect(dry).toBeInstanceOf(ApplyRejectedError);
    expect(dry.message).toContain(`Deployment ${ns.name}/${name}`);
    expect(dry.message).toContain('.spec.bogus: field not declared in schema');

    const applied = await rejection(target.apply(bad));
    expect(applied).toBeInstanceOf(ApplyRejectedError);
    expect(await target.read(bad)).toBeUndefined();
  });

  it('a Service with an invalid port → ApplyRejectedError naming the object and the server message', async () => {
    const target = createTargetCluster(config, identity);
    const service: KubeObject = {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'bad-port', namespace: ns.name },
      spec: { ports: [{ port: 70000 }] },
    };
    const error = await rejection(target.dryRun([service]));
    expect(error).toBeInstanceOf(ApplyRejectedError);
    expect(error.message).toContain(`Service ${ns.name}/bad-port`);
    expect(error.message).toContain('must be between 1 and 65535');
  });

  it('a kind the server does not serve → ApplyRejectedError; read → undefined; prune → absent', async () => {
    const target = createTargetCluster(config, identity);
    const gadget: KubeObject = {
      apiVersion: 'nowhere.convoy.test/v1',
      kind: 'Gadget',
      metadata: { name: 'g', namespace: ns.name },
    };
    const unknownCoreKind: KubeObject = {
      apiVersion: 'v1',
      kind: 'Gizmo',
      metadata: { name: 'g', namespace: ns.name },
    };

    for (const obj of [gadget, unknownCoreKind]) {
      const error = await rejection(target.dryRun([obj]));
      expect(error).toBeInstanceOf(ApplyRejectedError);
      expect(error.message).toContain(`${obj.kind} ${ns.name}/g`);
      expect(error.message).toContain('does not serve');
      expect(await rejection(target.apply(obj))).toBeInstanceOf(ApplyRejectedError);
      expect(await target.read(obj)).toBeUndefined();
      expect(await target.prune(obj)).toBe('absent');
    }
  });

  it('a namespace that neither exists nor is in the render → ApplyRejectedError', async () => {
    const target = createTargetCluster(config, identity);
    const error = await rejection(target.dryRun([configMap('c', { a: '1' }, unique('missing'))]));
    expect(error).toBeInstanceOf(ApplyRejectedError);
    expect(error.message).toMatch(/namespaces ".*" not found/);
  });

  it('a refused Secret: the message names it and holds none of its data', async () => {
    const target = createTargetCluster(config, identity);
    const secret: KubeObject = {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'creds', namespace: ns.name },
      stringData: { password: 'hunter2-very-secret' },
      data: { token: Buffer.from('token-very-secret').toString('base64') },
      type: 'Opaque',
      bogus: 'hunter2-very-secret',
    };
    const error = await rejection(target.dryRun([secret]));
    expect(error).toBeInstanceOf(ApplyRejectedError);
    expect(error.message).toContain(`Secret ${ns.name}/creds`);
    expect(error.message).not.toContain('hunter2');
    expect(error.message).not.toContain('token-very-secret');
    expect(error.message).not.toContain(Buffer.from('token-very-secret').toString('base64'));
  });

  it('an unreachable server → a transient error, not ApplyRejectedError', async () => {
    const unreachable = new KubeConfig();
    unreachable.loadFromOptions({
      clusters: [{ name: 'c', server: 'https://127.0.0.1:1', skipTLSVerify: true }],
      users: [{ name: 'u', token: 't' }],
      contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
      currentContext: 'x',
    });
    const target = createTargetCluster(fromClientNodeKubeConfig(unreachable), { name: 'gone' });
    const error = await rejection(target.dryRun([configMap('c', { a: '1' })]));
    expect(error).not.toBeInstanceOf(ApplyRejectedError);
    expect((error as { retryable?: boolean }).retryable).toBeUndefined();
    expect(error.message).toContain('https://127.0.0.1:1');
  });
});

describe('TargetCluster: prune', () => {
  it('deletes an object convoy applied', async () => {
    const target = createTargetCluster(config, identity);
    const cm = configMap(unique('mine'), { a: '1' });
    await target.apply(cm);
    expect(await target.prune(cm)).toBe('deleted');
    expect(await target.read(cm)).toBeUndefined();
  });

  it('skips an object created by another manager', async () => {
    const target = createTargetCluster(config, identity);
    const cm = configMap(unique('theirs'), { a: '1' });
    await core.createNamespacedConfigMap({ namespace: ns.name, body: cm, fieldManager: 'someone-else' });
    expect(await target.prune(cm)).toBe('skipped');
    expect(await target.read(cm)).toBeDefined();
  });

  it('skips an object annotated convoy.dev/prune: disabled', async () => {
    const target = createTargetCluster(config, identity);
    const cm = configMap(unique('keep'), { a: '1' });
    cm.metadata.annotations = { 'convoy.dev/prune': 'disabled' };
    await target.apply(cm);
    expect(await target.prune(cm)).toBe('skipped');
    expect(await target.read(cm)).toBeDefined();
  });

  it('absent for an object that does not exist', async () => {
    const target = createTargetCluster(config, identity);
    expect(await target.prune(configMap(unique('never'), { a: '1' }))).toBe('absent');
  });
});

const tokenKubeconfig = (url: string, token: string): string =>
  [
    'apiVersion: v1',
    'kind: Config',
    `clusters: [{name: c, cluster: {server: "${url}", insecure-skip-tls-verify: true}}]`,
    `users: [{name: u, user: {token: ${token}}}]`,
    'contexts: [{name: x, context: {cluster: c, user: u}}]',
    'current-context: x',
  ].join('\n');

describe('ClusterResolver', () => {
  const clusters = () => convoyApi(kc);
  const releaseFor = (clusterName: string): Release => {
    const parsed = parseRelease({
      apiVersion: 'convoy.dev/v1alpha1',
      kind: 'Release',
      metadata: { name: 'app', namespace: ns.name },
      spec: releaseSpec({ cluster: { name: clusterName } }),
    });
    if (!parsed.ok) throw new Error(parsed.error);
    return parsed.value;
  };
  const resolver = () =>
    createClusterResolver({ managementKubeConfig: config, ...createManagementReaders(config) });
  const kubeconfigSecret = async (name: string, data: Record<string, string>) =>
    core.createNamespacedSecret({ namespace: ns.name, body: { metadata: { name }, stringData: data } });

  it('inCluster: true → the management cluster, with its identity and kubernetesVersion', async () => {
    const name = unique('local');
    const created = await clusters().create('Cluster', ns.name, name, { inCluster: true });
    const target: TargetCluster = await resolver().resolve(releaseFor(name));

    expect(target.identity).toEqual({
      name,
      uid: (created.metadata as { uid: string }).uid,
      server,
      kubernetesVersion: expect.stringMatching(/^v1\.34\.\d+$/) as unknown,
    });
    expect(
      await target.read({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns.name } }),
    ).toBeDefined();
  });

  it('a missing Cluster → error naming it', async () => {
    const error = await rejection(resolver().resolve(releaseFor('nope')));
    expect(error.message).toBe(`Cluster ${ns.name}/nope does not exist`);
  });

  it('kubeConfig from a Secret (default key value) → that cluster', async () => {
    const name = unique('remote');
    await kubeconfigSecret(`${name}-kc`, { value: readFileSync(kubeconfigPath, 'utf8') });
    await clusters().create('Cluster', ns.name, name, { kubeConfig: { secretRef: { name: `${name}-kc` } } });
    const target = await resolver().resolve(releaseFor(name));
    expect(target.identity.server).toBe(server);
    expect(target.identity.kubernetesVersion).toMatch(/^v1\.34\.\d+$/);
  });

  it('kubeConfig Secret with an unreachable server → error naming the Cluster and the server', async () => {
    const name = unique('unreachable');
    await kubeconfigSecret(`${name}-kc`, {
      custom: tokenKubeconfig('https://127.0.0.1:1', 's3cr3t-token-value'),
    });
    await clusters().create('Cluster', ns.name, name, {
      kubeConfig: { secretRef: { name: `${name}-kc`, key: 'custom' } },
    });

    const error = await rejection(resolver().resolve(releaseFor(name)));
    // Refused at once, not given up after the probe timeout: the reason says which.
    expect(error.message).toBe(
      `Cluster ${ns.name}/${name} is unreachable at https://127.0.0.1:1: ECONNREFUSED`,
    );
    expect(error.message).not.toContain('s3cr3t');
  });

  it('kubeConfig Secret with a server that refuses connections or never answers → error within the probe timeout', async () => {
    const accepted: Socket[] = [];
    const silent = createServer((socket) => accepted.push(socket)); // accepts, never speaks TLS
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    cleanups.push(async () => {
      for (const socket of accepted) socket.destroy();
      await new Promise((resolve) => silent.close(resolve));
    });
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const closedPort = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));

    const cases = [
      { url: `https://127.0.0.1:${closedPort}`, reason: 'ECONNREFUSED' },
      {
        url: `https://127.0.0.1:${(silent.address() as AddressInfo).port}`,
        reason: 'no answer within 0.5 s',
      },
    ];
    for (const { url, reason } of cases) {
      const name = unique('dead');
      await kubeconfigSecret(`${name}-kc`, { value: tokenKubeconfig(url, 'x') });
      await clusters().create('Cluster', ns.name, name, {
        kubeConfig: { secretRef: { name: `${name}-kc` } },
      });
      const quick = createClusterResolver({
        managementKubeConfig: config,
        ...createManagementReaders(config),
        probeTimeoutMs: 500,
      });
      const started = Date.now();
      const error = await rejection(quick.resolve(releaseFor(name)));
      // The reason says which limit ended the probe; without one the silent server would hold it
      // until the test's own timeout, so this bound (30× the probe timeout) is only a safety net.
      expect(Date.now() - started).toBeLessThan(15_000);
      expect(error.message).toBe(`Cluster ${ns.name}/${name} is unreachable at ${url}: ${reason}`);
    }
  });

  it('kubeConfig Secret without the key → error naming the Secret and key', async () => {
    const name = unique('nokey');
    await kubeconfigSecret(`${name}-kc`, { other: 'x' });
    await clusters().create('Cluster', ns.name, name, { kubeConfig: { secretRef: { name: `${name}-kc` } } });
    const error = await rejection(resolver().resolve(releaseFor(name)));
    expect(error.message).toContain(`Secret ${ns.name}/${name}-kc`);
    expect(error.message).toContain('"value"');
  });

  it('kubeConfig Secret that does not exist → error naming the Secret', async () => {
    const name = unique('nosecret');
    await clusters().create('Cluster', ns.name, name, { kubeConfig: { secretRef: { name: `${name}-kc` } } });
    const error = await rejection(resolver().resolve(releaseFor(name)));
    expect(error.message).toContain(`Secret ${ns.name}/${name}-kc does not exist`);
  });

  it('a stored kubeconfig that would run a command → refused, nothing run', async () => {
    const name = unique('exec');
    const kubeconfig = [
      'apiVersion: v1',
      'kind: Config',
      `clusters: [{name: c, cluster: {server: "${server}", insecure-skip-tls-verify: true}}]`,
      'users: [{name: u, user: {exec: {apiVersion: client.authentication.k8s.io/v1, command: /bin/sh, args: ["-c", "touch /tmp/pwned"]}}}]',
      'contexts: [{name: x, context: {cluster: c, user: u}}]',
      'current-context: x',
    ].join('\n');
    await kubeconfigSecret(`${name}-kc`, { value: kubeconfig });
    await clusters().create('Cluster', ns.name, name, { kubeConfig: { secretRef: { name: `${name}-kc` } } });
    const error = await rejection(resolver().resolve(releaseFor(name)));
    expect(error.message).toContain('users[].user.exec');
  });
});
