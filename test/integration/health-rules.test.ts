// The built-in health rules (domain/health/README.md) against objects the
// real API server stored, in the states the real controllers (kube-controller-manager,
// kube-scheduler) and KWOK's simulated nodes bring them to: each object is created and
// assessed once its controllers got it there. A /status is written by hand only where the
// embedded cluster cannot reach the state (no load-balancer or ingress controller runs, …);
// each such place says why.
import type { KubeConfig } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { fromKubeconfigFile } from '../../adapters/kube/kubeconfig.ts';
import { createKubeRequest } from '../../adapters/kube/target-cluster.ts';
import type { KubeRequest } from '../../adapters/kube/discovery.ts';
import { assessObject, type ObjectHealth } from '../../domain/health/index.ts';
import { FAIL_LABEL } from '../../dev/control-plane.ts';
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
    if (response.status < 200 || response.status > 299)
      throw new Error(`${what}: HTTP ${response.status}: ${JSON.stringify(response.body)}`);
    return Promise.resolve(response.body as Obj);
  }

  /** Creates the object (server-side apply as `test`) and returns its path. */
  async function create(
    apiVersion: string,
    kind: string,
    spec: Obj,
    extra: Obj = {},
    namespaced = true,
  ): Promise<string> {
    const name = `${kind.toLowerCase()}-${++n}`;
    const path = pathOf(apiVersion, kind, name, namespaced);
    const { metadata: extraMetadata, ...rest } = extra;
    const metadata = {
      name,
      ...(namespaced ? { namespace: ns.name } : {}),
      ...(extraMetadata as Obj | undefined),
    };
    await expectOk(
      await request({
        method: 'PATCH',
        path,
        query: { fieldManager: 'test', force: 'true' },
        contentType: 'application/apply-patch+yaml',
        body: JSON.stringify({ apiVersion, kind, metadata, spec, ...rest }),
      }),
      `create ${kind}`,
    );
    return path;
  }

  /** Writes /status (merge patch, as a controller would) and assesses what the server then returns. */
  async function statusThenAssess(path: string, status: Obj | undefined): Promise<ObjectHealth> {
    if (status !== undefined) {
      await expectOk(
        await request({
          method: 'PATCH',
          path: `${path}/status`,
          contentType: 'application/merge-patch+json',
          body: JSON.stringify({ status }),
        }),
        `write status of ${path}`,
      );
    }
    const live = await expectOk(await request({ method: 'GET', path }), `read ${path}`);
    return assessObject(live, { now: new Date() });
  }

  const podTemplate = (
    app: string,
    opts: { fail?: boolean; nodeSelector?: Record<string, string>; hostPort?: number } = {},
  ) => ({
    selector: { matchLabels: { app } },
    template: {
      metadata: { labels: { app, ...(opts.fail ? { [FAIL_LABEL]: 'true' } : {}) } },
      spec: {
        ...(opts.nodeSelector ? { nodeSelector: opts.nodeSelector } : {}),
        containers: [
          {
            name: 'main',
            image: 'registry.invalid/app:1',
            ...(opts.hostPort ? { ports: [{ containerPort: 8080, hostPort: opts.hostPort }] } : {}),
          },
        ],
      },
    },
  });
  /** Pods no Node matches: they stay Pending (the scheduler finds no fit). */
  const nowhere = { 'convoy.test/no-such-node': 'true' };
  /** One simulated Node and a host port: only one Pod fits, the second stays Pending. */
  const onePodFits = (port: number) => ({
    nodeSelector: { 'kubernetes.io/hostname': inject('nodeNames')[0] ?? 'kwok-node-0' },
    hostPort: port,
  });

  /** Polls until the assessment equals `expected` (the controllers and KWOK get there by themselves); returns the last one. */
  async function assessUntil(
    path: string,
    expected: ObjectHealth | ((h: ObjectHealth) => boolean),
    timeoutMs = 20_000,
  ): Promise<ObjectHealth> {
    const matches =
      typeof expected === 'function'
        ? expected
        : (h: ObjectHealth) => h.state === expected.state && h.message === expected.message;
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const health = await statusThenAssess(path, undefined);
      if (matches(health) || Date.now() > deadline) return health;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  /** Creates the object and assesses it as the server stored it, before any controller answered (the apply response). */
  async function createThenAssessAsStored(
    apiVersion: string,
    kind: string,
    spec: Obj,
  ): Promise<{ path: string; health: ObjectHealth }> {
    const name = `${kind.toLowerCase()}-${++n}`;
    const path = pathOf(apiVersion, kind, name);
    const stored = await expectOk(
      await request({
        method: 'PATCH',
        path,
        query: { fieldManager: 'test', force: 'true' },
        contentType: 'application/apply-patch+yaml',
        body: JSON.stringify({ apiVersion, kind, metadata: { name, namespace: ns.name }, spec }),
      }),
      `create ${kind}`,
    );
    return { path, health: assessObject(stored, { now: new Date() }) };
  }

  /** Changes the pod template (server-side apply as `test`), e.g. to start a rollout. */
  async function applySpec(path: string, apiVersion: string, kind: string, spec: Obj): Promise<void> {
    const name = path.split('/').pop() ?? '';
    await expectOk(
      await request({
        method: 'PATCH',
        path,
        query: { fieldManager: 'test', force: 'true' },
        contentType: 'application/apply-patch+yaml',
        body: JSON.stringify({ apiVersion, kind, metadata: { name, namespace: ns.name }, spec }),
      }),
      `update ${kind}`,
    );
  }

  describe('Deployment', () => {
    it('generation not observed (as stored, before the controller saw it) → Progressing', async () => {
      const { health } = await createThenAssessAsStored('apps/v1', 'Deployment', {
        replicas: 2,
        ...podTemplate('d1'),
      });
      expect(health).toEqual({
        state: 'Progressing',
        message: 'Waiting for rollout to finish: generation 1 not observed yet (observedGeneration 0)',
      });
    });

    it('availableReplicas < updatedReplicas → Progressing; all available → Healthy; new pods that never get ready → updatedReplicas < replicas → Progressing', async () => {
      const partial = await create('apps/v1', 'Deployment', {
        replicas: 2,
        ...podTemplate('d2a', onePodFits(18081)),
      });
      expect(
        await assessUntil(partial, {
          state: 'Progressing',
          message: 'Waiting for rollout to finish: 1 of 2 updated replicas are available',
        }),
      ).toEqual({
        state: 'Progressing',
        message: 'Waiting for rollout to finish: 1 of 2 updated replicas are available',
      });

      const path = await create('apps/v1', 'Deployment', {
        replicas: 2,
        strategy: { rollingUpdate: { maxSurge: 1, maxUnavailable: 0 } },
        ...podTemplate('d2'),
      });
      expect(await assessUntil(path, { state: 'Healthy', message: '2 of 2 replicas available' })).toEqual({
        state: 'Healthy',
        message: '2 of 2 replicas available',
      });
      // A new template whose pods crash-loop: one surge pod is created, never ready, and the rollout stops there.
      await applySpec(path, 'apps/v1', 'Deployment', {
        replicas: 2,
        strategy: { rollingUpdate: { maxSurge: 1, maxUnavailable: 0 } },
        ...podTemplate('d2', { fail: true }),
      });
      expect(
        await assessUntil(path, {
          state: 'Progressing',
          message: 'Waiting for rollout to finish: 1 of 2 new replicas have been updated',
        }),
      ).toEqual({
        state: 'Progressing',
        message: 'Waiting for rollout to finish: 1 of 2 new replicas have been updated',
      });
    });

    it('pods that crash-loop → the controller sets ProgressDeadlineExceeded → Degraded', async () => {
      const path = await create('apps/v1', 'Deployment', {
        replicas: 1,
        progressDeadlineSeconds: 1,
        ...podTemplate('d3', { fail: true }),
      });
      const health = await assessUntil(path, (h) => h.state === 'Degraded');
      expect(health.state).toBe('Degraded');
      expect(health.message).toMatch(
        /^Deployment exceeded its progress deadline: ReplicaSet "deployment-\d+-[a-z0-9]+" has timed out progressing\.$/,
      );
    });
  });

  describe('StatefulSet', () => {
    // The API server defaults spec.updateStrategy.rollingUpdate.partition to 0, so a stored
    // RollingUpdate StatefulSet always takes the partitioned branch (as in kubectl rollout status).
    // "updated < replicas − partition" with every pod ready is only a moment in a real rollout;
    // the unit tests (test/unit/health) cover it.
    it('not observed → Progressing; pods not ready → Progressing; done → Healthy', async () => {
      const stored = await createThenAssessAsStored('apps/v1', 'StatefulSet', {
        replicas: 2,
        serviceName: 'st',
        ...podTemplate('s0', { fail: true }),
      });
      expect(stored.health).toEqual({
        state: 'Progressing',
        message: 'Waiting for the StatefulSet spec update to be observed',
      });
      // OrderedReady: the first pod crash-loops, so the second is never created.
      const notReady = await assessUntil(stored.path, (h) =>
        h.message.startsWith('Waiting for 2 pods to be ready'),
      );
      expect(notReady).toEqual({
        state: 'Progressing',
        message: 'Waiting for 2 pods to be ready (0 of 2 ready)',
      });

      const path = await create('apps/v1', 'StatefulSet', {
        replicas: 2,
        serviceName: 'st',
        ...podTemplate('s1'),
      });
      expect(
        await assessUntil(path, {
          state: 'Healthy',
          message: 'Partitioned roll out complete: 2 new pods have been updated',
        }),
      ).toEqual({
        state: 'Healthy',
        message: 'Partitioned roll out complete: 2 new pods have been updated',
      });
    });

    it('OnDelete: Healthy once the pods are ready, without comparing revisions', async () => {
      const spec = (image: string) => ({
        replicas: 1,
        serviceName: 'st',
        updateStrategy: { type: 'OnDelete' },
        ...podTemplate('s2'),
        template: { metadata: { labels: { app: 's2' } }, spec: { containers: [{ name: 'main', image }] } },
      });
      const path = await create('apps/v1', 'StatefulSet', spec('registry.invalid/app:1'));
      await assessUntil(path, (h) => h.state === 'Healthy');
      await applySpec(path, 'apps/v1', 'StatefulSet', spec('registry.invalid/app:2'));
      expect(
        await assessUntil(path, {
          state: 'Healthy',
          message: 'OnDelete update strategy: 1 pods ready, 0 updated (pods update when deleted)',
        }),
      ).toEqual({
        state: 'Healthy',
        message: 'OnDelete update strategy: 1 pods ready, 0 updated (pods update when deleted)',
      });
    });
  });

  describe('DaemonSet', () => {
    it('no Node to run on (desiredNumberScheduled 0) → Healthy; pods not available → Progressing; all available → Healthy', async () => {
      const none = await create('apps/v1', 'DaemonSet', podTemplate('ds0', { nodeSelector: nowhere }));
      expect(await assessUntil(none, { state: 'Healthy', message: '0 of 0 pods available' })).toEqual({
        state: 'Healthy',
        message: '0 of 0 pods available',
      });
      const nodes = inject('nodeNames').length;
      const failing = await create('apps/v1', 'DaemonSet', podTemplate('ds1', { fail: true }));
      const waiting = {
        state: 'Progressing' as const,
        message: `Waiting for rollout to finish: 0 of ${nodes} pods are available`,
      };
      expect(await assessUntil(failing, waiting)).toEqual(waiting);
      const path = await create('apps/v1', 'DaemonSet', podTemplate('ds2'));
      expect(
        await assessUntil(path, { state: 'Healthy', message: `${nodes} of ${nodes} pods available` }),
      ).toEqual({ state: 'Healthy', message: `${nodes} of ${nodes} pods available` });
    });

    it('generation not observed → Progressing', async () => {
      const { health } = await createThenAssessAsStored('apps/v1', 'DaemonSet', podTemplate('ds3'));
      expect(health.state).toBe('Progressing');
    });
  });

  describe('ReplicaSet', () => {
    it('ReplicaFailure True (a ResourceQuota forbids its pods) → Degraded; available < replicas → Progressing; available → Healthy', async () => {
      const quotaNs = await freshNamespace(kc, 'health-quota');
      try {
        await expectOk(
          await request({
            method: 'PATCH',
            path: `/api/v1/namespaces/${quotaNs.name}/resourcequotas/no-pods`,
            query: { fieldManager: 'test', force: 'true' },
            contentType: 'application/apply-patch+yaml',
            body: JSON.stringify({
              apiVersion: 'v1',
              kind: 'ResourceQuota',
              metadata: { name: 'no-pods', namespace: quotaNs.name },
              spec: { hard: { pods: '0' } },
            }),
          }),
          'create the ResourceQuota',
        );
        // Until the quota controller has written its status, pods are refused with "status unknown for quota".
        for (let i = 0; i < 200; i++) {
          const quota = await expectOk(
            await request({
              method: 'GET',
              path: `/api/v1/namespaces/${quotaNs.name}/resourcequotas/no-pods`,
            }),
            'read the ResourceQuota',
          );
          if ((quota['status'] as { hard?: unknown } | undefined)?.hard !== undefined) break;
          await new Promise((resolve) => setTimeout(resolve, 100));
        }
        const quotaPath = `/apis/apps/v1/namespaces/${quotaNs.name}/replicasets/rs0`;
        await expectOk(
          await request({
            method: 'PATCH',
            path: quotaPath,
            query: { fieldManager: 'test', force: 'true' },
            contentType: 'application/apply-patch+yaml',
            body: JSON.stringify({
              apiVersion: 'apps/v1',
              kind: 'ReplicaSet',
              metadata: { name: 'rs0', namespace: quotaNs.name },
              spec: { replicas: 2, ...podTemplate('rs0') },
            }),
          }),
          'create the ReplicaSet',
        );
        const failed = await assessUntil(quotaPath, (h) => h.state === 'Degraded');
        expect(failed.state).toBe('Degraded');
        expect(failed.message).toMatch(
          /^ReplicaSet cannot create its pods: FailedCreate: pods "rs0-[a-z0-9]+" is forbidden: exceeded quota: no-pods/,
        );
      } finally {
        await quotaNs.delete();
      }

      const partial = await create('apps/v1', 'ReplicaSet', {
        replicas: 2,
        ...podTemplate('rs1', onePodFits(18082)),
      });
      expect(
        await assessUntil(partial, {
          state: 'Progressing',
          message: 'Waiting for rollout to finish: 1 of 2 replicas are available',
        }),
      ).toEqual({
        state: 'Progressing',
        message: 'Waiting for rollout to finish: 1 of 2 replicas are available',
      });
      const path = await create('apps/v1', 'ReplicaSet', { replicas: 2, ...podTemplate('rs2') });
      expect(await assessUntil(path, { state: 'Healthy', message: '2 of 2 replicas available' })).toEqual({
        state: 'Healthy',
        message: '2 of 2 replicas available',
      });
    });
  });

  describe('Pod', () => {
    const podSpec = (restartPolicy = 'Always', nodeSelector?: Record<string, string>) => ({
      restartPolicy,
      ...(nodeSelector ? { nodeSelector } : {}),
      containers: [{ name: 'main', image: 'registry.invalid/app:1' }],
    });
    const containerStatus = (state: Obj, ready = false) => ({
      name: 'main',
      image: 'registry.invalid/app:1',
      imageID: '',
      ready,
      restartCount: 0,
      state,
    });
    const failing = { metadata: { labels: { [FAIL_LABEL]: 'true' } } };

    it('Pending (no Node fits) → Progressing', async () => {
      const path = await create('v1', 'Pod', podSpec('Always', nowhere));
      const health = await assessUntil(path, (h) => h.message.startsWith('Pod is not scheduled yet'));
      expect(health.state).toBe('Progressing');
      expect(health.message).toMatch(
        /^Pod is not scheduled yet: Unschedulable: 0\/\d+ nodes are available: \d+ node\(s\) didn't match Pod's node affinity\/selector/,
      );
    });

    it('Running and Ready → Healthy; Running not Ready → Progressing', async () => {
      const path = await create('v1', 'Pod', podSpec());
      expect(await assessUntil(path, { state: 'Healthy', message: 'Pod is Running and Ready' })).toEqual({
        state: 'Healthy',
        message: 'Pod is Running and Ready',
      });
      // Hand-written: KWOK makes a Pod ready at once (no readiness probes run), so "running but not
      // ready yet" is written on a Pod no Node fits, which neither the scheduler nor KWOK touches.
      const unready = await create('v1', 'Pod', podSpec('Always', nowhere));
      expect(
        await statusThenAssess(unready, {
          phase: 'Running',
          conditions: [{ type: 'Ready', status: 'False' }],
          containerStatuses: [containerStatus({ running: {} })],
        }),
      ).toEqual({
        state: 'Progressing',
        message: 'Pod is Running but not Ready',
      });
    });

    it('a container in CrashLoopBackOff (restartPolicy Always) → Degraded', async () => {
      const path = await create('v1', 'Pod', podSpec(), failing);
      const health = await assessUntil(path, (h) => h.state === 'Degraded');
      expect(health).toEqual({
        state: 'Degraded',
        message:
          'container "main" is CrashLoopBackOff: back-off restarting failed container (simulated by kwok)',
      });
    });

    it('Succeeded → Healthy; Failed → Degraded; phase Unknown → Unknown', async () => {
      const done = await create('v1', 'Pod', podSpec('Never'));
      expect(
        await assessUntil(done, { state: 'Healthy', message: 'Pod has completed successfully' }),
      ).toEqual({ state: 'Healthy', message: 'Pod has completed successfully' });
      const failed = await create('v1', 'Pod', podSpec('Never'), failing);
      expect(
        await assessUntil(failed, {
          state: 'Degraded',
          message: 'Pod failed: container "main" exited with code 1',
        }),
      ).toEqual({
        state: 'Degraded',
        message: 'Pod failed: container "main" exited with code 1',
      });
      // Hand-written: phase Unknown means the kubelet cannot be reached; simulated Nodes always answer.
      const lost = await create('v1', 'Pod', podSpec('Always', nowhere));
      expect(await statusThenAssess(lost, { phase: 'Unknown', message: 'node lost' })).toEqual({
        state: 'Unknown',
        message: 'Pod phase is Unknown: node lost',
      });
    });
  });

  describe('Job', () => {
    const jobSpec = (app: string, opts: { fail?: boolean; nodeSelector?: Record<string, string> } = {}) => ({
      backoffLimit: 0,
      template: {
        metadata: { labels: { app, ...(opts.fail ? { [FAIL_LABEL]: 'true' } : {}) } },
        spec: {
          restartPolicy: 'Never',
          ...(opts.nodeSelector ? { nodeSelector: opts.nodeSelector } : {}),
          containers: [{ name: 'main', image: 'registry.invalid/job:1' }],
        },
      },
    });

    it('not started → Progressing; running → Progressing; Complete → Healthy', async () => {
      const { health } = await createThenAssessAsStored('batch/v1', 'Job', jobSpec('j0'));
      expect(health).toEqual({ state: 'Progressing', message: 'Job has not started yet' });
      // Its pod finds no Node: the Job runs (1 active) and never finishes.
      const running = await create('batch/v1', 'Job', jobSpec('j1', { nodeSelector: nowhere }));
      const active = {
        state: 'Progressing' as const,
        message: 'Job is running: 1 active, 0 succeeded, 0 failed pods',
      };
      expect(await assessUntil(running, active)).toEqual(active);
      const path = await create('batch/v1', 'Job', jobSpec('j2'));
      const complete = {
        state: 'Healthy' as const,
        message: 'Job completed: Reached expected number of succeeded pods',
      };
      expect(await assessUntil(path, complete)).toEqual(complete);
    });

    it('Failed (its pod exits 1, backoffLimit 0) → Degraded', async () => {
      const path = await create('batch/v1', 'Job', jobSpec('j3', { fail: true }));
      const failed = {
        state: 'Degraded' as const,
        message: 'Job failed: BackoffLimitExceeded: Job has reached the specified backoff limit',
      };
      expect(await assessUntil(path, failed)).toEqual(failed);
    });
  });

  describe('PersistentVolumeClaim', () => {
    it('Pending (no volume) → Progressing; Bound (the binder matched a volume) → Healthy; Lost → Degraded', async () => {
      const spec = {
        accessModes: ['ReadWriteOnce'],
        storageClassName: '',
        resources: { requests: { storage: '1Gi' } },
      };
      const path = await create('v1', 'PersistentVolumeClaim', spec);
      expect(
        await assessUntil(path, {
          state: 'Progressing',
          message: 'PersistentVolumeClaim is Pending: waiting for a volume to be bound',
        }),
      ).toEqual({
        state: 'Progressing',
        message: 'PersistentVolumeClaim is Pending: waiting for a volume to be bound',
      });
      const claimName = path.split('/').pop() ?? '';
      const pvName = `${ns.name}-${claimName}`;
      await expectOk(
        await request({
          method: 'PATCH',
          path: `/api/v1/persistentvolumes/${pvName}`,
          query: { fieldManager: 'test', force: 'true' },
          contentType: 'application/apply-patch+yaml',
          body: JSON.stringify({
            apiVersion: 'v1',
            kind: 'PersistentVolume',
            metadata: { name: pvName },
            spec: {
              capacity: { storage: '1Gi' },
              accessModes: ['ReadWriteOnce'],
              storageClassName: '',
              hostPath: { path: '/tmp/convoy-unused' },
              claimRef: { namespace: ns.name, name: claimName },
            },
          }),
        }),
        'create the PersistentVolume',
      );
      try {
        expect(
          await assessUntil(path, { state: 'Healthy', message: 'PersistentVolumeClaim is Bound' }),
        ).toEqual({ state: 'Healthy', message: 'PersistentVolumeClaim is Bound' });
      } finally {
        await request({ method: 'DELETE', path: `/api/v1/persistentvolumes/${pvName}` });
      }
      // A claim bound (bind-completed) to a volume that does not exist: the binder marks it Lost.
      const lost = await create(
        'v1',
        'PersistentVolumeClaim',
        { ...spec, volumeName: `${ns.name}-gone` },
        { metadata: { annotations: { 'pv.kubernetes.io/bind-completed': 'yes' } } },
      );
      expect(
        await assessUntil(lost, {
          state: 'Degraded',
          message: 'PersistentVolumeClaim is Lost: its volume no longer exists',
        }),
      ).toEqual({
        state: 'Degraded',
        message: 'PersistentVolumeClaim is Lost: its volume no longer exists',
      });
    });
  });

  // Hand-written /status for Service and Ingress: the embedded cluster runs no load-balancer or
  // ingress controller (as kind runs none), so nothing else ever assigns an address.
  describe('Service', () => {
    it('type LoadBalancer without an address → Progressing; with one → Healthy; ClusterIP → Healthy', async () => {
      const path = await create('v1', 'Service', {
        type: 'LoadBalancer',
        selector: { app: 'x' },
        ports: [{ port: 80 }],
      });
      expect(await statusThenAssess(path, undefined)).toEqual({
        state: 'Progressing',
        message: 'Waiting for the load balancer to be provisioned (status.loadBalancer.ingress is empty)',
      });
      expect(await statusThenAssess(path, { loadBalancer: { ingress: [{ ip: '203.0.113.7' }] } })).toEqual({
        state: 'Healthy',
        message: 'Load balancer provisioned: 203.0.113.7',
      });
      const clusterIp = await create('v1', 'Service', { selector: { app: 'x' }, ports: [{ port: 80 }] });
      expect(await statusThenAssess(clusterIp, undefined)).toEqual({
        state: 'Healthy',
        message: 'Service of type ClusterIP',
      });
    });
  });

  describe('Ingress', () => {
    it('no address → Progressing; an address → Healthy', async () => {
      const spec = { defaultBackend: { service: { name: 'web', port: { number: 80 } } } };
      const path = await create('networking.k8s.io/v1', 'Ingress', spec);
      expect(await statusThenAssess(path, undefined)).toEqual({
        state: 'Progressing',
        message:
          'Waiting for an ingress controller to assign an address (status.loadBalancer.ingress is empty)',
      });
      expect(
        await statusThenAssess(path, { loadBalancer: { ingress: [{ hostname: 'lb.example.com' }] } }),
      ).toEqual({
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
      versions: [
        {
          name: 'v1',
          served: true,
          storage: true,
          schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
        },
      ],
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
          body: JSON.stringify({
            apiVersion: 'apiextensions.k8s.io/v1',
            kind: 'CustomResourceDefinition',
            metadata: { name },
            spec,
          }),
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
      expect(await assessWhen(first, (h) => h.state === 'Healthy')).toEqual({
        state: 'Healthy',
        message: 'CRD is established',
      });
      const clash = await createCrd({
        ...crd(group, 'gadgets', 'Widget'),
        names: { plural: 'gadgets', singular: 'gadget', kind: 'Widget', listKind: 'WidgetList' },
      });
      const health = await assessWhen(clash, (h) => h.state === 'Degraded');
      expect(health.state).toBe('Degraded');
      expect(health.message).toMatch(
        /^CRD names have not been accepted: MultipleNamesNotAllowed|^CRD names have not been accepted: .*Widget/,
      );
      await request({ method: 'DELETE', path: clash });
      await request({ method: 'DELETE', path: first });
    });
  });
});
