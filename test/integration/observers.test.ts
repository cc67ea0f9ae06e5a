// The drift and health loops (ARCHITECTURE.md "The functions"; API.md InSync and
// Healthy reasons) through their real record handlers, on the real apiserver, a
// git server and fauxqs S3. Releases are applied by the real reconcile record
// handler; no kube-controller-manager runs, so workload /status is written here.
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createObserverTargetResolver, type RequestCounter } from '../../adapters/kube/observer-target.ts';
import { createStatusWriter } from '../../adapters/kube/status-writer.ts';
import { createKubeRequest } from '../../adapters/kube/target-cluster.ts';
import type { KubeRequest } from '../../adapters/kube/discovery.ts';
import type { Condition } from '../../domain/api/common.ts';
import type { Release } from '../../domain/api/objects.ts';
import type { Outcome } from '../../domain/runtime/outcome.ts';
import type { Loop } from '../../domain/runtime/queue-message.ts';
import { createDriftRecordHandler } from '../../functions/drift/drift-record.ts';
import { createHealthRecordHandler } from '../../functions/health/health-record.ts';
import { createReleaseSource } from '../../adapters/kube/release-source.ts';
import { createLogger } from '../../platform/logger.ts';
import type { RecordHandler } from '../../functions/runtime/sqs-batch-handler.ts';
import { kubeConfigFor } from '../harness/kube.ts';
import { FAIL_LABEL } from '../../dev/control-plane.ts';
import { startReconcileEnv, type ReconcileEnv } from '../harness/reconcile-env.ts';

type Obj = Record<string, unknown>;

/** `fail`: its pods crash-loop (KWOK's failure stage), so it never becomes available. */
const deploymentYaml = (
  name: string,
  opts: {
    image?: string;
    replicas?: number;
    wave?: number;
    fail?: boolean;
    progressDeadlineSeconds?: number;
  } = {},
) => `apiVersion: apps/v1
kind: Deployment
metadata:
  name: ${name}
${opts.wave === undefined ? '' : `  annotations: {convoy.dev/sync-wave: "${opts.wave}"}\n`}spec:
  replicas: ${opts.replicas ?? 2}
${opts.progressDeadlineSeconds === undefined ? '' : `  progressDeadlineSeconds: ${opts.progressDeadlineSeconds}\n`}  selector: {matchLabels: {app: ${name}}}
  template:
    metadata: {labels: {app: ${name}${opts.fail ? `, ${FAIL_LABEL}: "true"` : ''}}}
    spec: {containers: [{name: main, image: "${opts.image ?? 'registry.invalid/web:1'}"}]}
`;
const configMapYaml = (name: string, data: Record<string, string> = { greeting: 'hello' }, wave?: number) =>
  `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\n${wave === undefined ? '' : `  annotations: {convoy.dev/sync-wave: "${wave}"}\n`}data: ${JSON.stringify(data)}\n`;

const SECRET_VALUE = 'correct-horse-battery-staple';
const EDITED_SECRET_VALUE = 'tr0ub4dor-and-3';
const b64 = (text: string) => Buffer.from(text).toString('base64');

function conditionOf(release: Release, type: string): Condition | undefined {
  return release.status?.conditions?.find((c) => c.type === type);
}

interface ManagedFieldsEntry {
  manager: string;
  subresource?: string;
  fieldsV1?: { 'f:status'?: Record<string, unknown> };
}

/** manager → the status fields (`healthSummary`, `conditions[Healthy]`, …) it owns. */
function statusOwnership(obj: Obj): Map<string, string[]> {
  const owned = new Map<string, string[]>();
  const entries = ((obj['metadata'] as { managedFields?: ManagedFieldsEntry[] }).managedFields ?? []).filter(
    (e) => e.subresource === 'status',
  );
  for (const entry of entries) {
    const fields: string[] = [];
    for (const [key, value] of Object.entries(entry.fieldsV1?.['f:status'] ?? {})) {
      if (key === '.') continue;
      if (key === 'f:conditions') {
        for (const item of Object.keys(value as object)) {
          const type = /"type":"([^"]+)"/.exec(item)?.[1];
          if (type) fields.push(`conditions[${type}]`);
        }
      } else fields.push(key.replace(/^f:/, ''));
    }
    owned.set(entry.manager, [...(owned.get(entry.manager) ?? []), ...fields].sort());
  }
  return owned;
}

describe('the drift and health loops', () => {
  let env: ReconcileEnv;
  let raw: KubeRequest;
  let n = 0;
  const logger = createLogger({ base: { test: 'observers' }, level: 'error' });

  beforeAll(async () => {
    env = await startReconcileEnv(kubeConfigFor(inject('kubeconfigPath')), 'observers');
    raw = createKubeRequest(env.config);
  });
  afterAll(() => env.close());

  const unique = (prefix: string) => `${prefix}-${++n}`;
  const ns = () => env.ns.name;

  /** A repo with `files` and a Release of it targeting the test namespace; returns the Release name. */
  async function release(files: Record<string, string>, spec: Obj = {}): Promise<string> {
    const name = unique('rel');
    const repo = await env.repo(name, files);
    await env.api.create('Release', ns(), name, {
      cluster: { name: 'local' },
      targetNamespace: ns(),
      source: { git: { url: repo.url, ref: { branch: 'main' } } },
      ...spec,
    });
    return name;
  }

  /** Reconciles until a render is applied (lastSuccessful set); returns the Release. */
  async function applied(name: string): Promise<Release> {
    for (let i = 0; i < 10; i++) {
      const { release: r } = await env.reconcile(name);
      if (
        r.status?.lastSuccessful?.renderRef !== undefined &&
        r.status.lastSuccessful.renderRef === r.status.lastAttempted?.renderRef
      )
        return r;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    throw new Error(`Release ${name} was not applied in 10 reconciles`);
  }

  async function invoke(handler: RecordHandler, loop: Loop, name: string): Promise<Outcome> {
    const current = await env.api.getRelease(ns(), name);
    return handler(
      {
        v: 1,
        loop,
        namespace: ns(),
        name,
        uid: current.metadata.uid ?? '',
        cause: 'test',
        sentAt: new Date().toISOString(),
      },
      { logger, receiveCount: 1, messageId: `test-${loop}`, record: {} as never },
    );
  }

  interface RunResult {
    outcome: Outcome;
    release: Release;
    requests: number;
    notified: Loop[];
  }

  async function drift(name: string, opts: { recentWriteWindowMs?: number } = {}): Promise<RunResult> {
    const counter: RequestCounter = { count: 0 };
    const notified: Loop[] = [];
    const handler = createDriftRecordHandler({
      releases: createReleaseSource(env.config),
      statusWriter: createStatusWriter(env.config),
      targets: createObserverTargetResolver({
        managementKubeConfig: env.config,
        requestCounter: counter,
        ...opts,
      }),
      renders: env.store,
      notify: (loop) => {
        notified.push(loop);
        return Promise.resolve();
      },
    });
    const outcome = await invoke(handler, 'drift', name);
    return { outcome, release: await env.api.getRelease(ns(), name), requests: counter.count, notified };
  }

  async function health(name: string): Promise<RunResult> {
    const counter: RequestCounter = { count: 0 };
    const handler = createHealthRecordHandler({
      releases: createReleaseSource(env.config),
      statusWriter: createStatusWriter(env.config),
      targets: createObserverTargetResolver({ managementKubeConfig: env.config, requestCounter: counter }),
      renders: env.store,
    });
    const outcome = await invoke(handler, 'health', name);
    return { outcome, release: await env.api.getRelease(ns(), name), requests: counter.count, notified: [] };
  }

  async function ok(response: { status: number; body: unknown }, what: string): Promise<Obj> {
    if (response.status < 200 || response.status > 299)
      throw new Error(`${what}: HTTP ${response.status}: ${JSON.stringify(response.body)}`);
    return Promise.resolve(response.body as Obj);
  }

  const deploymentPath = (name: string) => `/apis/apps/v1/namespaces/${ns()}/deployments/${name}`;

  /** Another field manager (as `kubectl scale` would) changes spec.replicas. */
  async function scaleByHand(deployment: string, replicas: number): Promise<void> {
    await ok(
      await raw({
        method: 'PATCH',
        path: deploymentPath(deployment),
        query: { fieldManager: 'kubectl-scale' },
        contentType: 'application/merge-patch+json',
        body: JSON.stringify({ spec: { replicas } }),
      }),
      `scale ${deployment}`,
    );
  }

  /** Waits until the Deployment controller reports the rollout finished (KWOK runs the pods). */
  async function rolledOut(deployment: string): Promise<void> {
    const deadline = Date.now() + 20_000;
    for (;;) {
      const live = await ok(
        await raw({ method: 'GET', path: deploymentPath(deployment) }),
        `read ${deployment}`,
      );
      const generation = (live['metadata'] as { generation: number }).generation;
      const replicas = (live['spec'] as { replicas: number }).replicas;
      const status = (live['status'] ?? {}) as {
        observedGeneration?: number;
        updatedReplicas?: number;
        availableReplicas?: number;
        replicas?: number;
      };
      if (
        status.observedGeneration === generation &&
        status.updatedReplicas === replicas &&
        status.availableReplicas === replicas &&
        status.replicas === replicas
      )
        return;
      if (Date.now() > deadline)
        throw new Error(`${deployment} did not finish its rollout: ${JSON.stringify(status)}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  describe('InSync', () => {
    it('True / InSync: every object of the applied render matches; a check costs objects + apiVersions requests', async () => {
      const web = unique('web');
      const name = await release({
        'deploy.yaml': deploymentYaml(web),
        'cm.yaml': configMapYaml(`${web}-cfg`),
      });
      await applied(name);

      // Right after the apply, convoy's own writes are too recent to prove a no-op: each is read once.
      const fresh = await drift(name);
      expect(conditionOf(fresh.release, 'InSync')).toMatchObject({ status: 'True', reason: 'InSync' });
      expect(fresh.requests).toBeLessThanOrEqual(2 * 2 + 2);

      // Steady state: one dry run per object plus one discovery GET per apiVersion (v1, apps/v1).
      await new Promise((resolve) => setTimeout(resolve, 2_500));
      const steady = await drift(name, { recentWriteWindowMs: 1_000 });
      const inSync = conditionOf(steady.release, 'InSync')!;
      expect(inSync).toMatchObject({
        status: 'True',
        reason: 'InSync',
        observedGeneration: steady.release.metadata.generation,
      });
      expect(inSync.message).toBe(
        `all 2 objects of render ${steady.release.status?.lastSuccessful?.renderRef} match the cluster`,
      );
      expect(steady.requests).toBe(2 + 2);
      expect(steady.outcome).toEqual({ kind: 'stop' });
      // Unchanged: the status is not written again.
      expect(steady.release.metadata.resourceVersion).toBe(fresh.release.metadata.resourceVersion);
    });

    it('False / Drifted: a Deployment scaled by another field manager is named with /spec/replicas', async () => {
      const web = unique('web');
      const name = await release({ 'deploy.yaml': deploymentYaml(web) });
      await applied(name);
      await scaleByHand(web, 5);
      const result = await drift(name);
      const inSync = conditionOf(result.release, 'InSync')!;
      expect(inSync).toMatchObject({ status: 'False', reason: 'Drifted' });
      expect(inSync.message).toBe(
        `1 of 1 objects of render ${result.release.status?.lastSuccessful?.renderRef} differ from the cluster: Deployment ${ns()}/${web}: /spec/replicas`,
      );
      // One dry run, one discovery GET (apps/v1), one GET of the drifted object.
      expect(result.requests).toBe(1 + 2);
      expect(result.outcome).toEqual({ kind: 'stop' });
      expect(result.notified).toEqual([]);
    });

    it('driftDetection.ignore /spec/replicas for Deployments → InSync True despite the scale', async () => {
      const web = unique('web');
      const name = await release(
        { 'deploy.yaml': deploymentYaml(web) },
        { driftDetection: { ignore: [{ kind: 'Deployment', jsonPointers: ['/spec/replicas'] }] } },
      );
      await applied(name);
      await scaleByHand(web, 5);
      const result = await drift(name);
      expect(conditionOf(result.release, 'InSync')).toMatchObject({ status: 'True', reason: 'InSync' });
    });

    it('mode Correct: a drifted Release is sent to the reconcile queue', async () => {
      const web = unique('web');
      const name = await release(
        { 'deploy.yaml': deploymentYaml(web) },
        { driftDetection: { mode: 'Correct' } },
      );
      await applied(name);
      await scaleByHand(web, 4);
      const result = await drift(name);
      expect(conditionOf(result.release, 'InSync')?.reason).toBe('Drifted');
      expect(result.notified).toEqual(['reconcile']);
    });

    it('Unknown / Pending: no render applied yet', async () => {
      const name = await release(
        { 'cm.yaml': configMapYaml(unique('cfg')) },
        { syncPolicy: { mode: 'Manual' } },
      );
      await env.reconcile(name);
      const result = await drift(name);
      expect(conditionOf(result.release, 'InSync')).toMatchObject({ status: 'Unknown', reason: 'Pending' });
      expect(result.requests).toBe(0);
    });
  });

  describe('Healthy', () => {
    it('True / Healthy once the workloads report a finished rollout; objects + apiVersions requests', async () => {
      const web = unique('web');
      const name = await release(
        { 'deploy.yaml': deploymentYaml(web), 'cm.yaml': configMapYaml(`${web}-cfg`) },
        { healthAssessment: { interval: '1m' } },
      );
      await applied(name);
      await rolledOut(web);
      const result = await health(name);
      const healthy = conditionOf(result.release, 'Healthy')!;
      const renderRef = result.release.status?.lastSuccessful?.renderRef;
      expect(healthy).toMatchObject({
        status: 'True',
        reason: 'Healthy',
        message: `all 2 objects of render ${renderRef} are healthy`,
      });
      expect(result.release.status?.healthSummary).toMatchObject({
        renderRef,
        total: 2,
        healthy: 2,
        objects: [],
      });
      expect(result.requests).toBe(2 + 2);
      expect(result.outcome).toEqual({ kind: 'stop' });
    });

    it('True / NotConfigured: no spec.healthAssessment (the summary still reports the objects)', async () => {
      const web = unique('web');
      const name = await release({ 'deploy.yaml': deploymentYaml(web, { fail: true }) });
      await applied(name);
      const result = await health(name);
      expect(conditionOf(result.release, 'Healthy')).toMatchObject({
        status: 'True',
        reason: 'NotConfigured',
      });
      expect(result.release.status?.healthSummary).toMatchObject({ total: 1, progressing: 1 });
      expect(result.outcome).toEqual({ kind: 'stop' });
    });

    it('Unknown / Pending: the new render waits at a sync wave (lastAttempted.renderRef is not lastSuccessful.renderRef)', async () => {
      const web = unique('web');
      const name = await release({ 'cm.yaml': configMapYaml(`${web}-cfg`) }, { healthAssessment: {} });
      const first = await applied(name);
      const appliedRef = first.status?.lastSuccessful?.renderRef;
      // The new render: a Deployment in wave 0 that never becomes healthy here, the ConfigMap in wave 1.
      await env.commit(name, {
        'deploy.yaml': deploymentYaml(web, { wave: 0, fail: true }),
        'cm.yaml': configMapYaml(`${web}-cfg`, { greeting: 'bonjour' }, 1),
      });
      const waiting = (await env.reconcile(name)).release;
      expect(conditionOf(waiting, 'Applied')?.reason).toBe('WaitingForWaveHealth');
      const newRef = waiting.status?.lastAttempted?.renderRef;
      expect(newRef).not.toBe(appliedRef);

      const result = await health(name);
      expect(conditionOf(result.release, 'Healthy')).toMatchObject({
        status: 'Unknown',
        reason: 'Pending',
        message: `render ${newRef} (status.lastAttempted.renderRef) is not applied yet (the applied render is ${appliedRef}); health is assessed once it is applied`,
      });
      expect(result.release.status?.healthSummary).toBeUndefined();
      expect(result.requests).toBe(0);
      // Drift waits too: the cluster holds parts of both renders.
      expect(conditionOf((await drift(name)).release, 'InSync')).toMatchObject({
        status: 'Unknown',
        reason: 'Pending',
      });
    });

    it('a render that changes while a check is Progressing is assessed against the new render (Flux kustomize-controller #701)', async () => {
      const web = unique('web');
      const name = await release(
        { 'deploy.yaml': deploymentYaml(web, { fail: true }) },
        { healthAssessment: {} },
      );
      const first = await applied(name);
      const firstRef = first.status?.lastSuccessful?.renderRef;
      const progressing = await health(name);
      expect(conditionOf(progressing.release, 'Healthy')).toMatchObject({
        status: 'False',
        reason: 'Progressing',
      });
      expect(progressing.outcome.kind).toBe('requeueAfter');
      expect(progressing.outcome.kind === 'requeueAfter' && progressing.outcome.delayMs).toBeLessThanOrEqual(
        10_000,
      );
      expect(progressing.release.status?.healthSummary?.renderRef).toBe(firstRef);

      await env.commit(name, { 'deploy.yaml': deploymentYaml(web, { image: 'registry.invalid/web:2' }) });
      const second = await applied(name);
      const secondRef = second.status?.lastSuccessful?.renderRef;
      expect(secondRef).not.toBe(firstRef);
      await rolledOut(web);
      const recheck = await health(name);
      expect(recheck.release.status?.healthSummary?.renderRef).toBe(secondRef);
      expect(conditionOf(recheck.release, 'Healthy')).toMatchObject({
        status: 'True',
        reason: 'Healthy',
        message: `all 1 objects of render ${secondRef} are healthy`,
      });
    });

    it('False / Degraded: a healthAssessment check that does not compile is named checks[0]', async () => {
      const name = await release(
        { 'cm.yaml': configMapYaml(unique('cfg')) },
        { healthAssessment: { checks: [{ apiVersion: 'v1', kind: 'ConfigMap', healthy: 'object.data.(' }] } },
      );
      await applied(name);
      const result = await health(name);
      const healthy = conditionOf(result.release, 'Healthy')!;
      expect(healthy).toMatchObject({ status: 'False', reason: 'Degraded' });
      expect(healthy.message).toMatch(/^spec\.healthAssessment\.checks\[0\] \(v1 ConfigMap\): healthy: /);
    });
  });

  it('False / Degraded: pods that crash-loop leave the Deployment at 0 available; the Deployment controller marks its progress deadline exceeded', async () => {
    const web = unique('web');
    const name = await release(
      { 'deploy.yaml': deploymentYaml(web, { fail: true, progressDeadlineSeconds: 2 }) },
      { healthAssessment: {} },
    );
    await applied(name);
    const progressing = await health(name);
    expect(conditionOf(progressing.release, 'Healthy')).toMatchObject({
      status: 'False',
      reason: 'Progressing',
    });
    // No hand-written status: kube-controller-manager sets Progressing=False/ProgressDeadlineExceeded.
    const deadline = Date.now() + 20_000;
    let result = progressing;
    while (conditionOf(result.release, 'Healthy')?.reason !== 'Degraded' && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 500));
      result = await health(name);
    }
    const healthy = conditionOf(result.release, 'Healthy')!;
    expect(healthy).toMatchObject({ status: 'False', reason: 'Degraded' });
    expect(healthy.message).toContain(`Deployment ${ns()}/${web}`);
    expect(healthy.message).toContain('exceeded its progress deadline');
    const live = await ok(await raw({ method: 'GET', path: deploymentPath(web) }), `read ${web}`);
    expect((live['status'] as { availableReplicas?: number }).availableReplicas ?? 0).toBe(0);
  });

  it('deleting an object: drift names it "missing" and Healthy is False / Missing', async () => {
    const web = unique('web');
    const name = await release(
      { 'deploy.yaml': deploymentYaml(web), 'cm.yaml': configMapYaml(`${web}-cfg`) },
      { healthAssessment: {} },
    );
    await applied(name);
    await ok(await raw({ method: 'DELETE', path: deploymentPath(web) }), `delete ${web}`);
    const drifted = await drift(name);
    expect(conditionOf(drifted.release, 'InSync')?.message).toBe(
      `1 of 2 objects of render ${drifted.release.status?.lastSuccessful?.renderRef} differ from the cluster: Deployment ${ns()}/${web}: missing`,
    );
    const result = await health(name);
    const healthy = conditionOf(result.release, 'Healthy')!;
    expect(healthy).toMatchObject({ status: 'False', reason: 'Missing' });
    expect(healthy.message).toContain(`Deployment ${ns()}/${web} is Missing`);
    expect(result.release.status?.healthSummary).toMatchObject({ total: 2, missing: 1, healthy: 1 });
  });

  it('convoy-health never touches Applied or InSync; convoy-observe never touches Healthy', async () => {
    const web = unique('web');
    const name = await release({ 'deploy.yaml': deploymentYaml(web) }, { healthAssessment: {} });
    await applied(name);
    await scaleByHand(web, 3);
    await drift(name);
    await health(name);
    const obj = await env.api.get('Release', ns(), name);
    const owned = statusOwnership(obj);
    expect(owned.get('convoy-health')).toEqual(['conditions[Healthy]', 'healthSummary']);
    expect(owned.get('convoy-observe')).toEqual(['conditions[InSync]']);
    expect(owned.get('convoy-release')).toContain('conditions[Applied]');
    expect(owned.get('convoy-release')).not.toContain('conditions[Healthy]');
    expect(owned.get('convoy-release')).not.toContain('conditions[InSync]');
    const types = ((obj['status'] as { conditions: Condition[] }).conditions ?? []).map((c) => c.type).sort();
    expect(types).toEqual(['Applied', 'Healthy', 'InSync']);
  });

  it('an object whose kind the target no longer serves is Missing, without a crash', async () => {
    const group = `${ns()}.observers.test`;
    const crd = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.${group}}
spec:
  group: ${group}
  scope: Namespaced
  names: {plural: widgets, singular: widget, kind: Widget, listKind: WidgetList}
  versions:
    - name: v1
      served: true
      storage: true
      schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}
`;
    const widget = `apiVersion: ${group}/v1\nkind: Widget\nmetadata:\n  name: gizmo\n  annotations: {convoy.dev/sync-wave: "1"}\nspec: {size: 3}\n`;
    const name = await release({ 'crd.yaml': crd, 'widget.yaml': widget }, { healthAssessment: {} });
    await applied(name);
    expect(conditionOf((await health(name)).release, 'Healthy')).toMatchObject({
      status: 'True',
      reason: 'Healthy',
    });

    const crdPath = `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.${group}`;
    await ok(await raw({ method: 'DELETE', path: crdPath }), 'delete the CRD');
    for (let i = 0; i < 100 && (await raw({ method: 'GET', path: crdPath })).status !== 404; i++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const result = await health(name);
    expect(conditionOf(result.release, 'Healthy')).toMatchObject({ status: 'False', reason: 'Missing' });
    expect(result.release.status?.healthSummary).toMatchObject({ total: 2, missing: 2 });
    const drifted = await drift(name);
    expect(conditionOf(drifted.release, 'InSync')?.message).toContain(`Widget ${ns()}/gizmo: missing`);
  });

  it('Unknown / ClusterNotReady: the Cluster cannot be found', async () => {
    const name = await release({ 'cm.yaml': configMapYaml(unique('cfg')) }, { healthAssessment: {} });
    await applied(name);
    await env.api.patchMerge('Release', ns(), name, { spec: { cluster: { name: 'nowhere' } } });
    const drifted = await drift(name);
    expect(conditionOf(drifted.release, 'InSync')).toMatchObject({
      status: 'Unknown',
      reason: 'ClusterNotReady',
      message: `Cluster ${ns()}/nowhere does not exist`,
    });
    expect(drifted.outcome).toEqual({ kind: 'stop' });
    const result = await health(name);
    expect(conditionOf(result.release, 'Healthy')).toMatchObject({
      status: 'Unknown',
      reason: 'ClusterNotReady',
    });
    expect(result.outcome).toEqual({ kind: 'stop' });
  });

  it('Unknown / Pending: the applied render is missing from the render store', async () => {
    const name = await release({ 'cm.yaml': configMapYaml(unique('cfg')) }, { healthAssessment: {} });
    const r = await applied(name);
    const renderRef = r.status!.lastSuccessful!.renderRef!;
    await env.store.delete(ns(), name, renderRef);
    const drifted = await drift(name);
    expect(conditionOf(drifted.release, 'InSync')).toMatchObject({ status: 'Unknown', reason: 'Pending' });
    expect(conditionOf(drifted.release, 'InSync')?.message).toContain(
      `render ${renderRef} is not in the render store`,
    );
    const result = await health(name);
    expect(conditionOf(result.release, 'Healthy')).toMatchObject({ status: 'Unknown', reason: 'Pending' });
  });

  it('Secret data never appears in any condition message or summary', async () => {
    const web = unique('web');
    const secret = `apiVersion: v1\nkind: Secret\nmetadata: {name: ${web}-creds}\ndata: {password: ${b64(SECRET_VALUE)}}\n`;
    const name = await release(
      { 'deploy.yaml': deploymentYaml(web), 'secret.yaml': secret },
      { healthAssessment: {} },
    );
    await applied(name);
    await ok(
      await raw({
        method: 'PATCH',
        path: `/api/v1/namespaces/${ns()}/secrets/${web}-creds`,
        query: { fieldManager: 'someone-else' },
        contentType: 'application/merge-patch+json',
        body: JSON.stringify({ data: { password: b64(EDITED_SECRET_VALUE) } }),
      }),
      'edit the Secret',
    );
    const drifted = await drift(name);
    expect(conditionOf(drifted.release, 'InSync')?.message).toContain(
      `Secret ${ns()}/${web}-creds: /data/password`,
    );
    const result = await health(name);
    const status = JSON.stringify(result.release.status);
    for (const value of [SECRET_VALUE, EDITED_SECRET_VALUE, b64(SECRET_VALUE), b64(EDITED_SECRET_VALUE)]) {
      expect(status).not.toContain(value);
    }
    expect(result.release.status?.healthSummary?.total).toBe(2);
  });
});
