// The built-in health rules (domain/health/README.md) against objects the
// real API server stored: each workload kind is created, its /status written
// to each state (no kube-controller-manager runs), read back, and assessed.
import type { KubeConfig } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { fromKubeconfigFile } from '../../adapters/kube/kubeconfig.ts';
import { createKubeRequest } from '../../adapters/kube/target-cluster.ts';
import type { KubeRequest } from '../../adapters/kube/discovery.ts';
import { assessObject, type ObjectHealth } from '../../domain/health/index.ts';
import { freshNamespace, kubeConfigFor, type FreshNamespace } from '../harness/kube.ts';

type Obj = Record<string, unknown>;

const PLURALS: Record<string, string> = {
  Deployment: 'deployments',
  StatefulSet: 'statefulsets',
  DaemonSet: 'daemonsets',
  ReplicaSet: 'replicasets',
  Pod: 'pods',
  Job: 'jobs',
  PersistentVolumeClaim: 'persistentvolumeclaims',
  Service: 'services',
  Ingress: 'ingresses',
  CustomResourceDefinition: 'customresourcedefinitions',
};

describe('built-in health rules on objects stored by the real API server', () => {
  let kc: KubeConfig;
  let ns: FreshNamespace;
  let request: KubeRequest;
  let n = 0;

  beforeAll(async () => {
    kc = kubeConfigFor(inject('kubeconfigPath'));
    ns = await freshNamespace(kc, 'health-rules');
    request = createKubeRequest(fromKubeconfigFile(inject('kubeconfigPath')));
  });
  afterAll(() => ns.delete());

  const pathOf = (apiVersion: string, kind: string, name: string, namespaced = true) =>
    `${apiVersion.includes('/') ? `/apis/${apiVersion}` : `/api/${apiVersion}`}${namespaced ? `/namespaces/${ns.name}` : ''}/${PLURALS[kind]}/${name}`;

  async function expectOk(response: { status: number; body: unknown }, what: string): Promise<Obj> {
    if (response.status < 200 || response.status > 299) throw new Error(`${what}: HTTP ${response.status}: ${JSON.stringify(response.body)}`);
    return Promise.resolve(response.body as Obj);
  }

  /** Creates the object (server-side apply as `test`) and returns its path. */
  async function create(apiVersion: string, kind: string, spec: Obj, extra: Obj = {}, namespaced = true): Promise<string> {
    const name = `${kind.toLowerCase()}-${++n}`;
    const path = pathOf(apiVersion, kind, name, namespaced);
    const metadata = { name, ...(namespaced ? { namespace: ns.name } : {}) };
    await expectOk(
      await request({
        method: 'PATCH',
        path,
        query: { fieldManager: 'test', force: 'true' },
        contentType: 'application/apply-patch+yaml',
        body: JSON.stringify({ apiVersion, kind, metadata, spec, ...extra }),
      }),
      `create ${kind}`,
    );
    return path;
  }

  /** Writes /status (merge patch, as a controller would) and assesses what the server then returns. */
  async function statusThenAssess(path: string, status: Obj | undefined): Promise<ObjectHealth> {
    if (status !== undefined) {
      await expectOk(
        await request({ method: 'PATCH', path: `${path}/status`, contentType: 'application/merge-patch+json', body: JSON.stringify({ status }) }),
        `write status of ${path}`,
      );
    }
    const live = await expectOk(await request({ method: 'GET', path }), `read ${path}`);
    return assessObject(live, { now: new Date() });
  }

  const podTemplate = (app: string) => ({
    selector: { matchLabels: { app } },
    template: { metadata: { labels: { app } }, spec: { containers: [{ name: 'main', image: 'registry.invalid/app:1' }] } },
  });

  describe('Deployment', () => {
    it('generation not observed → Progressing', async () => {
      const path = await create('apps/v1', 'Deployment', { replicas: 2, ...podTemplate('d1') });
      expect(await statusThenAssess(path, undefined)).toEqual({
        state: 'Progressing',
        message: 'Waiting for rollout to finish: generation 1 not observed yet (observedGeneration 0)',
      });
    });

    it('updatedReplicas < replicas → Progressing; availableReplicas < updatedReplicas → Progressing; all available → Healthy', async () => {
      const path = await create('apps/v1', 'Deployment', { replicas: 2, ...podTemplate('d2') });
      expect(await statusThenAssess(path, { observedGeneration: 1, replicas: 1, updatedReplicas: 1 })).toEqual({
        state: 'Progressing',
        message: 'Waiting for rollout to finish: 1 of 2 new replicas have been updated',
      });
      expect(await statusThenAssess(path, { replicas: 2, updatedReplicas: 2, readyReplicas: 1, availableReplicas: 1 })).toEqual({
        state: 'Progressing',
        message: 'Waiting for rollout to finish: 1 of 2 updated replicas are available',
      });
      expect(await statusThenAssess(path, { readyReplicas: 2, availableReplicas: 2 })).toEqual({ state: 'Healthy', message: '2 of 2 replicas available' });
    });

    it('Progressing reason ProgressDeadlineExceeded → Degraded', async () => {
      const path = await create('apps/v1', 'Deployment', { replicas: 1, ...podTemplate('d3') });
      const status = {
        observedGeneration: 1,
        replicas: 1,
        updatedReplicas: 1,
        conditions: [
          {
            type: 'Progressing',
            status: 'False',
            reason: 'ProgressDeadlineExceeded',
            message: 'ReplicaSet "d3" has timed out progressing.',
            lastUpdateTime: '2026-11-29T10:00:00Z',
            lastTransitionTime: '2026-11-29T10:00:00Z',
          },
        ],
      };
      expect(await statusThenAssess(path, status)).toEqual({
        state: 'Degraded',
        message: 'Deployment exceeded its progress deadline: ReplicaSet "d3" has timed out progressing.',
      });
    });
  });

  describe('StatefulSet', () => {
    // The API server defaults spec.updateStrategy.rollingUpdate.partition to 0, so a stored
    // RollingUpdate StatefulSet always takes the partitioned branch (as in kubectl rollout status).
    it('not observed → Progressing; pods not ready → Progressing; updated < replicas − partition → Progressing; done → Healthy', async () => {
      const path = await create('apps/v1', 'StatefulSet', { replicas: 2, serviceName: 'st', ...podTemplate('s1') });
      expect(await statusThenAssess(path, undefined)).toEqual({ state: 'Progressing', message: 'Waiting for the StatefulSet spec update to be observed' });
      expect(await statusThenAssess(path, { observedGeneration: 1, replicas: 2, readyReplicas: 1 })).toEqual({
        state: 'Progressing',
        message: 'Waiting for 1 pods to be ready (1 of 2 ready)',
      });
      expect(await statusThenAssess(path, { readyReplicas: 2, updatedReplicas: 1, currentRevision: 's1-a', updateRevision: 's1-b' })).toEqual({
        state: 'Progressing',
        message: 'Waiting for partitioned roll out to finish: 1 of 2 new pods have been updated',
      });
      expect(await statusThenAssess(path, { updatedReplicas: 2, currentRevision: 's1-b' })).toEqual({
        state: 'Healthy',
        message: 'Partitioned roll out complete: 2 new pods have been updated',
      });
    });

    it('OnDelete: Healthy once the pods are ready, without comparing revisions', async () => {
      const path = await create('apps/v1', 'StatefulSet', { replicas: 1, serviceName: 'st', updateStrategy: { type: 'OnDelete' }, ...podTemplate('s2') });
      const status = { observedGeneration: 1, replicas: 1, readyReplicas: 1, updatedReplicas: 0, currentRevision: 's2-a', updateRevision: 's2-b' };
      expect(await statusThenAssess(path, status)).toEqual({
        state: 'Healthy',
        message: 'OnDelete update strategy: 1 pods ready, 0 updated (pods update when deleted)',
      });
    });
  });

  describe('DaemonSet', () => {
    it('desiredNumberScheduled 0 (the server always stores it) → Healthy; pods not available → Progressing; all available → Healthy', async () => {
      const path = await create('apps/v1', 'DaemonSet', podTemplate('ds1'));
      const base = { observedGeneration: 1, currentNumberScheduled: 0, numberMisscheduled: 0, numberReady: 0 };
      expect(await statusThenAssess(path, { ...base, desiredNumberScheduled: 0 })).toEqual({ state: 'Healthy', message: '0 of 0 pods available' });
      expect(await statusThenAssess(path, { desiredNumberScheduled: 3, currentNumberScheduled: 3, updatedNumberScheduled: 3, numberAvailable: 1, numberReady: 1 })).toEqual({
        state: 'Progressing',
        message: 'Waiting for rollout to finish: 1 of 3 pods are available',
      });
      expect(await statusThenAssess(path, { numberAvailable: 3, numberReady: 3 })).toEqual({ state: 'Healthy', message: '3 of 3 pods available' });
    });

    it('generation not observed → Progressing', async () => {
      const path = await create('apps/v1', 'DaemonSet', podTemplate('ds2'));
      expect((await statusThenAssess(path, undefined)).state).toBe('Progressing');
    });
  });

  describe('ReplicaSet', () => {
    it('ReplicaFailure True → Degraded; available < replicas → Progressing; available → Healthy', async () => {
      const path = await create('apps/v1', 'ReplicaSet', { replicas: 2, ...podTemplate('rs1') });
      const failure = { type: 'ReplicaFailure', status: 'True', reason: 'FailedCreate', message: 'pods "rs1-x" is forbidden: exceeded quota' };
      expect(await statusThenAssess(path, { observedGeneration: 1, replicas: 0, conditions: [failure] })).toEqual({
        state: 'Degraded',
        message: 'ReplicaSet cannot create its pods: FailedCreate: pods "rs1-x" is forbidden: exceeded quota',
      });
      expect(await statusThenAssess(path, { replicas: 2, readyReplicas: 1, availableReplicas: 1, conditions: null })).toEqual({
        state: 'Progressing',
        message: 'Waiting for rollout to finish: 1 of 2 replicas are available',
      });
      expect(await statusThenAssess(path, { readyReplicas: 2, availableReplicas: 2 })).toEqual({ state: 'Healthy', message: '2 of 2 replicas available' });
    });
  });

  describe('Pod', () => {
    const podSpec = (restartPolicy = 'Always') => ({ restartPolicy, containers: [{ name: 'main', image: 'registry.invalid/app:1' }] });
    const containerStatus = (state: Obj, ready = false) => ({ name: 'main', image: 'registry.invalid/app:1', imageID: '', ready, restartCount: 0, state });

    it('Pending → Progressing', async () => {
      const path = await create('v1', 'Pod', podSpec());
      expect(await statusThenAssess(path, { phase: 'Pending' })).toEqual({ state: 'Progressing', message: 'Pod is Pending' });
    });

    it('Running and Ready → Healthy; Running not Ready → Progressing', async () => {
      const path = await create('v1', 'Pod', podSpec());
      const ready = (status: string) => [{ type: 'Ready', status }];
      expect(await statusThenAssess(path, { phase: 'Running', conditions: ready('False'), containerStatuses: [containerStatus({ running: {} })] })).toEqual({
        state: 'Progressing',
        message: 'Pod is Running but not Ready',
      });
      expect(await statusThenAssess(path, { conditions: ready('True'), containerStatuses: [containerStatus({ running: {} }, true)] })).toEqual({
        state: 'Healthy',
        message: 'Pod is Running and Ready',
      });
    });

    it('a container in CrashLoopBackOff (restartPolicy Always) → Degraded', async () => {
      const path = await create('v1', 'Pod', podSpec());
      const waiting = { waiting: { reason: 'CrashLoopBackOff', message: 'back-off 5m0s restarting failed container' } };
      expect(await statusThenAssess(path, { phase: 'Running', containerStatuses: [containerStatus(waiting)] })).toEqual({
        state: 'Degraded',
        message: 'container "main" is CrashLoopBackOff: back-off 5m0s restarting failed container',
      });
    });

    it('Succeeded → Healthy; Failed → Degraded; phase Unknown → Unknown', async () => {
      const done = await create('v1', 'Pod', podSpec('Never'));
      expect(await statusThenAssess(done, { phase: 'Succeeded' })).toEqual({ state: 'Healthy', message: 'Pod has completed successfully' });
      const failed = await create('v1', 'Pod', podSpec('Never'));
      const terminated = { terminated: { exitCode: 3, reason: 'Error' } };
      expect(await statusThenAssess(failed, { phase: 'Failed', containerStatuses: [containerStatus(terminated)] })).toEqual({
        state: 'Degraded',
        message: 'Pod failed: container "main" exited with code 3',
      });
      const lost = await create('v1', 'Pod', podSpec());
      expect(await statusThenAssess(lost, { phase: 'Unknown', message: 'node lost' })).toEqual({ state: 'Unknown', message: 'Pod phase is Unknown: node lost' });
    });
  });

  describe('Job', () => {
    const jobSpec = (app: string) => ({
      backoffLimit: 0,
      template: { metadata: { labels: { app } }, spec: { restartPolicy: 'Never', containers: [{ name: 'main', image: 'registry.invalid/job:1' }] } },
    });
    const T0 = '2026-11-29T10:00:00Z';
    const T1 = '2026-11-29T10:01:00Z';
    const cond = (type: string, reason: string, message = '') => ({ type, status: 'True', reason, message, lastProbeTime: T1, lastTransitionTime: T1 });

    it('not started → Progressing; running → Progressing; Complete → Healthy', async () => {
      const path = await create('batch/v1', 'Job', jobSpec('j1'));
      expect(await statusThenAssess(path, undefined)).toEqual({ state: 'Progressing', message: 'Job has not started yet' });
      expect(await statusThenAssess(path, { startTime: T0, active: 1, ready: 0 })).toEqual({
        state: 'Progressing',
        message: 'Job is running: 1 active, 0 succeeded, 0 failed pods',
      });
      const complete = { active: 0, succeeded: 1, completionTime: T1, conditions: [cond('SuccessCriteriaMet', 'CompletionsReached'), cond('Complete', 'CompletionsReached')] };
      expect(await statusThenAssess(path, complete)).toEqual({ state: 'Healthy', message: 'Job completed' });
    });

    it('Failed → Degraded', async () => {
      const path = await create('batch/v1', 'Job', jobSpec('j2'));
      await statusThenAssess(path, { startTime: T0, active: 1, ready: 0 });
      const failed = {
        active: 0,
        failed: 1,
        conditions: [cond('FailureTarget', 'BackoffLimitExceeded', 'Job has reached the specified backoff limit'), cond('Failed', 'BackoffLimitExceeded', 'Job has reached the specified backoff limit')],
      };
      expect(await statusThenAssess(path, failed)).toEqual({
        state: 'Degraded',
        message: 'Job failed: BackoffLimitExceeded: Job has reached the specified backoff limit',
      });
    });
  });

  describe('PersistentVolumeClaim', () => {
    it('Pending → Progressing; Bound → Healthy; Lost → Degraded', async () => {
      const spec = { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } };
      const path = await create('v1', 'PersistentVolumeClaim', spec);
      expect(await statusThenAssess(path, { phase: 'Pending' })).toEqual({
        state: 'Progressing',
        message: 'PersistentVolumeClaim is Pending: waiting for a volume to be bound',
      });
      expect(await statusThenAssess(path, { phase: 'Bound' })).toEqual({ state: 'Healthy', message: 'PersistentVolumeClaim is Bound' });
      expect(await statusThenAssess(path, { phase: 'Lost' })).toEqual({ state: 'Degraded', message: 'PersistentVolumeClaim is Lost: its volume no longer exists' });
    });
  });

  describe('Service', () => {
    it('type LoadBalancer without an address → Progressing; with one → Healthy; ClusterIP → Healthy', async () => {
      const path = await create('v1', 'Service', { type: 'LoadBalancer', selector: { app: 'x' }, ports: [{ port: 80 }] });
      expect(await statusThenAssess(path, undefined)).toEqual({
        state: 'Progressing',
        message: 'Waiting for the load balancer to be provisioned (status.loadBalancer.ingress is empty)',
      });
      expect(await statusThenAssess(path, { loadBalancer: { ingress: [{ ip: '203.0.113.7' }] } })).toEqual({
        state: 'Healthy',
        message: 'Load balancer provisioned: 203.0.113.7',
      });
      const clusterIp = await create('v1', 'Service', { selector: { app: 'x' }, ports: [{ port: 80 }] });
      expect(await statusThenAssess(clusterIp, undefined)).toEqual({ state: 'Healthy', message: 'Service of type ClusterIP' });
    });
  });

  describe('Ingress', () => {
    it('no address → Progressing; an address → Healthy', async () => {
      const spec = { defaultBackend: { service: { name: 'web', port: { number: 80 } } } };
      const path = await create('networking.k8s.io/v1', 'Ingress', spec);
      expect(await statusThenAssess(path, undefined)).toEqual({
        state: 'Progressing',
        message: 'Waiting for an ingress controller to assign an address (status.loadBalancer.ingress is empty)',
      });
      expect(await statusThenAssess(path, { loadBalancer: { ingress: [{ hostname: 'lb.example.com' }] } })).toEqual({
        state: 'Healthy',
        message: 'Ingress address assigned: lb.example.com',
      });
    });
  });

  describe('CustomResourceDefinition (conditions written by the API server itself)', () => {
    const crd = (group: string, plural: string, kind: string) => ({
      group,
      scope: 'Namespaced',
      names: { plural, singular: kind.toLowerCase(), kind, listKind: `${kind}List` },
      versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } } }],
    });

    async function createCrd(spec: Obj): Promise<string> {
      const s = spec as { names: { plural: string }; group: string };
      const name = `${s.names.plural}.${s.group}`;
      const path = `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${name}`;
      await expectOk(
        await request({
          method: 'PATCH',
          path,
          query: { fieldManager: 'test', force: 'true' },
          contentType: 'application/apply-patch+yaml',
          body: JSON.stringify({ apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', metadata: { name }, spec }),
        }),
        `create CRD ${name}`,
      );
      return path;
    }

    async function assessWhen(path: string, done: (h: ObjectHealth) => boolean): Promise<ObjectHealth> {
      for (let i = 0; ; i++) {
        const health = await statusThenAssess(path, undefined);
        if (done(health) || i >= 50) return health;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    }

    it('Established → Healthy; names already taken by another CRD → Degraded', async () => {
      const group = `${ns.name}.health.test`;
      const first = await createCrd(crd(group, 'widgets', 'Widget'));
      expect(await assessWhen(first, (h) => h.state === 'Healthy')).toEqual({ state: 'Healthy', message: 'CRD is established' });
      const clash = await createCrd({ ...crd(group, 'gadgets', 'Widget'), names: { plural: 'gadgets', singular: 'gadget', kind: 'Widget', listKind: 'WidgetList' } });
      const health = await assessWhen(clash, (h) => h.state === 'Degraded');
      expect(health.state).toBe('Degraded');
      expect(health.message).toMatch(/^CRD names have not been accepted: MultipleNamesNotAllowed|^CRD names have not been accepted: .*Widget/);
      await request({ method: 'DELETE', path: clash });
      await request({ method: 'DELETE', path: first });
    });
  });
});
