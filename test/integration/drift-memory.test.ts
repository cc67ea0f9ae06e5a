// Lean at rest: the drift function's container remembers, per object, the
// resourceVersion of its last clean check and then reads the object's metadata instead of
// dry-running it. On the real apiserver, as the shipped functions identity acting as the tenant's
// ServiceAccount: a warm check costs one metadata GET per object (Cluster list and discovery
// shared by the container), and still detects a change that only touches metadata.labels (no
// generation bump), a change made while the memory says the object is unchanged, a deletion,
// and a tenant that lost its access.
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { RbacAuthorizationV1Api, AuthorizationV1Api } from '@kubernetes/client-node';
import { cachedClusterReader } from '../../adapters/kube/cluster-resolver.ts';
import { createObserverTargetResolver, type RequestCounter } from '../../adapters/kube/observer-target.ts';
import { createStatusWriter } from '../../adapters/kube/status-writer.ts';
import { createKubeRequest } from '../../adapters/kube/target-cluster.ts';
import type { KubeRequest } from '../../adapters/kube/discovery.ts';
import { createObserverCaches, type ObserverCaches } from '../../adapters/reconcile/port-caches.ts';
import type { Condition } from '../../domain/api/common.ts';
import type { Release } from '../../domain/api/objects.ts';
import { createDriftRecordHandler } from '../../functions/drift/drift-record.ts';
import { createReleaseSource } from '../../adapters/kube/release-source.ts';
import { createLogger } from '../../platform/logger.ts';
import type { RecordHandler } from '../../functions/runtime/sqs-batch-handler.ts';
import { kubeConfigFor } from '../harness/kube.ts';
import { startReconcileEnv, type ReconcileEnv } from '../harness/reconcile-env.ts';
import { TENANT_DEPLOYER } from '../harness/tenant-deployer.ts';
import { untilDeploymentRolledOut } from '../harness/deployment-rollout.ts';

type Obj = Record<string, unknown>;

const deploymentYaml = (name: string) => `apiVersion: apps/v1
kind: Deployment
metadata:
  name: ${name}
  labels: {app: ${name}, tier: web}
spec:
  replicas: 1
  selector: {matchLabels: {app: ${name}}}
  template:
    metadata: {labels: {app: ${name}}}
    spec: {containers: [{name: main, image: "registry.invalid/web:1"}]}
`;
const configMapYaml = (name: string) =>
  `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\ndata: {greeting: hello}\n`;

const inSyncOf = (release: Release): Condition | undefined =>
  release.status?.conditions?.find((c) => c.type === 'InSync');

describe('drift with the container memory of clean checks', () => {
  let env: ReconcileEnv;
  let raw: KubeRequest;
  let n = 0;
  const logger = createLogger({ base: { test: 'drift-memory' }, level: 'error' });

  beforeAll(async () => {
    env = await startReconcileEnv(kubeConfigFor(inject('kubeconfigPath')), 'drift-memory');
    raw = createKubeRequest(env.config);
  });
  afterAll(() => env.close());

  const ns = () => env.ns.name;

  /** One warm drift container: its caches and target resolver live across checks, as in a Lambda container. */
  function container(): {
    check(name: string): Promise<{ release: Release; requests: number }>;
    caches: ObserverCaches;
  } {
    const caches = createObserverCaches();
    const counter: RequestCounter = { count: 0 };
    const handler: RecordHandler = createDriftRecordHandler({
      releases: createReleaseSource(env.functionsConfig),
      statusWriter: createStatusWriter(env.functionsConfig),
      targets: createObserverTargetResolver({
        managementKubeConfig: env.functionsConfig,
        readers: cachedClusterReader(env.functionsConfig, caches.clusters),
        discovery: caches.discovery,
        tenancy: env.tenancy,
        requestCounter: counter,
        // The dry run proves a no-op for writes older than 1 s (with the default 60 s every cold check reads every object too).
        recentWriteWindowMs: 1_000,
      }),
      renders: env.store,
      notify: () => Promise.resolve(),
      memory: caches.drift,
    });
    return {
      caches,
      async check(name) {
        const current = await env.api.getRelease(ns(), name);
        const before = counter.count;
        await handler(
          {
            v: 1,
            loop: 'drift',
            namespace: ns(),
            name,
            uid: current.metadata.uid ?? '',
            cause: 'timer: drift interval',
            sentAt: new Date().toISOString(),
          },
          { logger, receiveCount: 1, messageId: `drift-${++n}`, record: {} as never },
        );
        return { release: await env.api.getRelease(ns(), name), requests: counter.count - before };
      },
    };
  }

  async function appliedRelease(web: string): Promise<string> {
    const name = `rel-${web}`;
    const repo = await env.repo(name, {
      'deploy.yaml': deploymentYaml(web),
      'cm.yaml': configMapYaml(`${web}-cfg`),
    });
    await env.api.create('Release', ns(), name, {
      cluster: { name: 'local' },
      targetNamespace: ns(),
      source: { git: { url: repo.url, ref: { branch: 'main' } } },
    });
    for (let i = 0; i < 10; i++) {
      const { release } = await env.reconcile(name);
      if (
        release.status?.lastSuccessful?.renderRef !== undefined &&
        release.status.lastSuccessful.renderRef === release.status.lastAttempted?.renderRef
      ) {
        // The checks below count requests on objects nobody writes between them: the Deployment
        // controller writes the Deployment's status until its rollout is over (each write a new
        // resourceVersion, which the memory rightly takes as a change), so wait for that first.
        await untilDeploymentRolledOut(env.kc, ns(), web);
        return name;
      }
    }
    throw new Error(`Release ${name} was not applied in 10 reconciles`);
  }

  async function patch(path: string, body: Obj, what: string): Promise<Obj> {
    const response = await raw({
      method: 'PATCH',
      path,
      query: { fieldManager: 'kubectl-edit' },
      contentType: 'application/merge-patch+json',
      body: JSON.stringify(body),
    });
    if (response.status < 200 || response.status > 299)
      throw new Error(`${what}: HTTP ${response.status}: ${JSON.stringify(response.body)}`);
    return response.body as Obj;
  }

  it('a warm check reads each object metadata-only; a label-only change (no generation bump) is still Drifted', async () => {
    const web = 'labels';
    const name = await appliedRelease(web);
    const drift = container();

    const cold = await drift.check(name);
    expect(inSyncOf(cold.release)).toMatchObject({ status: 'True', reason: 'InSync' });
    // Cold (requests to the target): discovery of v1 and apps/v1, a dry run per object, and a
    // read of each object convoy wrote within the last second.
    expect(cold.requests).toBeGreaterThanOrEqual(2 + 2);
    expect(cold.requests).toBeLessThanOrEqual(2 + 2 * 2);
    expect(drift.caches.drift.size).toBe(2);

    const warm = await drift.check(name);
    expect(inSyncOf(warm.release)).toMatchObject({ status: 'True', reason: 'InSync' });
    // Warm: one metadata GET per object, nothing else (no dry run, no discovery, no Cluster read).
    expect(warm.requests).toBe(2);

    const before = await patch(`/apis/apps/v1/namespaces/${ns()}/deployments/${web}`, {}, 'read generation');
    const edited = await patch(
      `/apis/apps/v1/namespaces/${ns()}/deployments/${web}`,
      { metadata: { labels: { tier: 'edited-by-hand' } } },
      'label edit',
    );
    expect((edited['metadata'] as { generation: number }).generation).toBe(
      (before['metadata'] as { generation: number }).generation,
    );

    const after = await drift.check(name);
    const inSync = inSyncOf(after.release);
    expect(inSync).toMatchObject({ status: 'False', reason: 'Drifted' });
    expect(inSync?.message).toContain(`Deployment ${ns()}/${web}: /metadata/labels/tier`);
    // The drifted object is not remembered: the next check is a full one again, and still Drifted.
    const again = await drift.check(name);
    expect(inSyncOf(again.release)).toMatchObject({ status: 'False', reason: 'Drifted' });
  });

  it('a change made while the memory says unchanged is Drifted at the next check; undone, InSync; a deletion is Missing', async () => {
    const web = 'edits';
    const name = await appliedRelease(web);
    const drift = container();
    await drift.check(name);
    const warm = await drift.check(name);
    expect(inSyncOf(warm.release)).toMatchObject({ status: 'True', reason: 'InSync' });
    expect(warm.requests).toBe(2);

    // The memory holds both objects as clean; someone edits the ConfigMap's data.
    const configMapPath = `/api/v1/namespaces/${ns()}/configmaps/${web}-cfg`;
    await patch(configMapPath, { data: { greeting: 'changed' } }, 'data edit');
    const edited = await drift.check(name);
    expect(inSyncOf(edited.release)).toMatchObject({ status: 'False', reason: 'Drifted' });
    expect(inSyncOf(edited.release)?.message).toContain(`ConfigMap ${ns()}/${web}-cfg: /data/greeting`);

    // Undone by hand: a full check finds it in sync, and the check after it is warm again.
    await patch(configMapPath, { data: { greeting: 'hello' } }, 'undo the edit');
    const undone = await drift.check(name);
    expect(inSyncOf(undone.release)).toMatchObject({ status: 'True', reason: 'InSync' });
    expect((await drift.check(name)).requests).toBe(2);

    // Deleted while the Deployment is remembered as clean.
    const deleted = await raw({
      method: 'DELETE',
      path: `/apis/apps/v1/namespaces/${ns()}/deployments/${web}`,
    });
    expect(deleted.status).toBeLessThan(300);
    const missing = await drift.check(name);
    expect(inSyncOf(missing.release)).toMatchObject({ status: 'False', reason: 'Drifted' });
    expect(inSyncOf(missing.release)?.message).toContain(`Deployment ${ns()}/${web}: missing`);
  });

  it('a tenant that loses its access is refused at the next check, though the memory says unchanged', async () => {
    const web = 'access';
    const name = await appliedRelease(web);
    const drift = container();
    await drift.check(name);
    expect((await drift.check(name)).requests).toBe(2);

    const rbac = env.kc.makeApiClient(RbacAuthorizationV1Api);
    const bindingName = `${TENANT_DEPLOYER}-${ns()}`;
    const binding = await rbac.readClusterRoleBinding({ name: bindingName });
    await rbac.deleteClusterRoleBinding({ name: bindingName });
    try {
      // Wait for the state meant: the apiserver's authorizer no longer lets the tenant read Deployments.
      const authz = env.kc.makeApiClient(AuthorizationV1Api);
      const deadline = Date.now() + 20_000;
      for (;;) {
        const review = await authz.createSubjectAccessReview({
          body: {
            spec: {
              user: `system:serviceaccount:${ns()}:${TENANT_DEPLOYER}`,
              resourceAttributes: {
                group: 'apps',
                resource: 'deployments',
                verb: 'get',
                namespace: ns(),
                name: web,
              },
            },
          },
        });
        if (review.status?.allowed !== true) break;
        if (Date.now() > deadline)
          throw new Error('the tenant kept its access after its binding was deleted');
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      const refused = await drift.check(name);
      expect(inSyncOf(refused.release)).toMatchObject({ status: 'Unknown', reason: 'ClusterNotReady' });
    } finally {
      await rbac.createClusterRoleBinding({
        body: { metadata: { name: bindingName }, roleRef: binding.roleRef, subjects: binding.subjects ?? [] },
      });
    }
  });
});
