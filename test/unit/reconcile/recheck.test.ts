import { describe, expect, it } from 'vitest';
import type { ReconcilePorts, TargetCluster } from '../../../domain/reconcile/ports.ts';
import {
  recheckWaitingWave,
  waitingWave,
  withSeenReads,
  type SeenReads,
} from '../../../domain/reconcile/recheck.ts';
import { objectKey } from '../../../domain/render/identity.ts';
import type { KubeObject } from '../../../domain/render/kube-object.ts';
import { attempt, configMap, deployment, NOW, RENDER_A, release } from '../observe/fixtures.ts';

const progressing = (extra: Record<string, unknown> = {}) => ({
  observedGeneration: 3,
  lastAttempted: attempt(RENDER_A),
  lastSuccessful: attempt(RENDER_A),
  rollout: { renderRef: RENDER_A, state: 'Progressing', startedAt: '2026-11-29T09:59:00Z', wave: 0 },
  waves: [{ wave: 0, objects: 2, state: 'Applied', appliedAt: '2026-11-29T09:59:00Z' }],
  conditions: [
    {
      type: 'Applied',
      status: 'True',
      reason: 'Applied',
      message: 'applied',
      lastTransitionTime: '2026-11-29T09:59:00Z',
      observedGeneration: 3,
    },
  ],
  ...extra,
});

const available = (d: KubeObject) => ({
  ...d,
  metadata: { ...d.metadata, generation: 1 },
  status: {
    observedGeneration: 1,
    replicas: 2,
    updatedReplicas: 2,
    availableReplicas: 2,
    readyReplicas: 2,
    conditions: [
      { type: 'Available', status: 'True' },
      { type: 'Progressing', status: 'True', reason: 'NewReplicaSetAvailable' },
    ],
  },
});
const rollingOut = (d: KubeObject) => ({
  ...d,
  metadata: { ...d.metadata, generation: 1 },
  status: { observedGeneration: 1, replicas: 2, updatedReplicas: 1, availableReplicas: 0 },
});

function ports(
  live: Map<string, Record<string, unknown>>,
  objects: KubeObject[],
  reads: string[],
): Pick<ReconcilePorts, 'now' | 'store' | 'cluster'> {
  const target = {
    read: (obj: KubeObject) => {
      reads.push(obj.kind);
      return Promise.resolve(live.get(obj.kind));
    },
  } as unknown as TargetCluster;
  return {
    now: () => NOW,
    store: {
      get: () => Promise.resolve({ renderRef: RENDER_A, objects }),
      put: () => Promise.resolve(),
      prune: () => Promise.resolve(),
    },
    cluster: { resolve: () => Promise.resolve(target) },
  };
}

describe('the recheck of a Progressing rollout reads only the wave it waits on', () => {
  const objects = [configMap(), deployment()];

  it('reads the workload first and stops there while it is not healthy: one read, a 10-s recheck, the attempt’s time in status', async () => {
    const reads: string[] = [];
    const live = new Map<string, Record<string, unknown>>([
      ['ConfigMap', configMap()],
      ['Deployment', rollingOut(deployment())],
    ]);
    const waiting = await recheckWaitingWave(
      release({ healthAssessment: {} }, progressing()),
      ports(live, objects, reads),
    );
    expect(waiting?.outcome).toMatchObject({ kind: 'requeueAfter', delayMs: 10_000 });
    expect(reads).toEqual(['Deployment']);
    // The status as the last reconcile left it, with this attempt's time.
    expect(waiting?.slice.lastAttempted?.attemptedAt).toBe('2026-11-29T10:00:00Z');
    expect(waiting?.slice.reconciledAt).toBe('2026-11-29T10:00:00Z');
    expect(waiting?.slice.rollout?.state).toBe('Progressing');
    expect(waiting?.slice.conditions.map((c) => c.type)).toEqual(['Applied']);
  });

  it('a healthy wave is the full reconcile’s (it finishes the rollout and writes status); a ConfigMap is not read: the wave’s apply made it healthy', async () => {
    const reads: string[] = [];
    const live = new Map<string, Record<string, unknown>>([
      ['ConfigMap', configMap()],
      ['Deployment', available(deployment())],
    ]);
    expect(await recheckWaitingWave(release({}, progressing()), ports(live, objects, reads))).toBeUndefined();
    expect(reads).toEqual(['Deployment']);
  });

  it('reads an object whose health is more than its existence: a LoadBalancer Service, a kind a CEL check names', async () => {
    const service = (type: string): KubeObject => ({
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'web', namespace: 'team-a' },
      spec: { type, ports: [{ port: 80 }] },
    });
    const pending = { ...service('LoadBalancer'), status: { loadBalancer: {} } };
    const reads: string[] = [];
    const live = new Map<string, Record<string, unknown>>([
      ['Deployment', available(deployment())],
      ['Service', pending],
    ]);
    const waiting = await recheckWaitingWave(
      release({}, progressing()),
      ports(live, [deployment(), service('LoadBalancer')], reads),
    );
    expect(waiting?.outcome).toMatchObject({ kind: 'requeueAfter' });
    expect(reads).toEqual(['Deployment', 'Service']);
    const clusterIp: string[] = [];
    expect(
      await recheckWaitingWave(
        release({}, progressing()),
        ports(live, [deployment(), service('ClusterIP')], clusterIp),
      ),
    ).toBeUndefined();
    expect(clusterIp).toEqual(['Deployment']);
    const checked: string[] = [];
    const checks = { checks: [{ apiVersion: 'v1', kind: 'ConfigMap', healthy: 'has(object.data)' }] };
    const withCheck = new Map<string, Record<string, unknown>>([
      ['ConfigMap', configMap()],
      ['Deployment', available(deployment())],
    ]);
    expect(
      await recheckWaitingWave(
        release({ healthAssessment: checks }, progressing()),
        ports(withCheck, objects, checked),
      ),
    ).toBeUndefined();
    expect(checked).toEqual(['Deployment', 'ConfigMap']);
  });

  it('leaves everything else to the full reconcile: a spec change, a request, a timeout, a finished rollout', () => {
    expect(waitingWave(release({}, progressing()), NOW)).toEqual({ renderRef: RENDER_A, wave: 0 });
    expect(waitingWave(release({}, progressing(), 4), NOW)).toBeUndefined();
    expect(waitingWave(release({ syncPolicy: { waveTimeout: '30s' } }, progressing()), NOW)).toBeUndefined();
    expect(
      waitingWave(
        release(
          {},
          progressing({
            rollout: { renderRef: RENDER_A, state: 'Succeeded', startedAt: '2026-11-29T09:59:00Z' },
          }),
        ),
        NOW,
      ),
    ).toBeUndefined();
    const requested = release({}, progressing());
    requested.metadata.annotations = { 'convoy.dev/sync-requested-at': '2026-11-29T09:59:30Z' };
    expect(waitingWave(requested, NOW)).toBeUndefined();
    const pinned = release({}, progressing());
    pinned.metadata.annotations = { 'convoy.dev/pin': RENDER_A };
    expect(waitingWave(pinned, NOW)).toBeUndefined();
  });
});

describe('what the recheck read serves the full reconcile of the same run', () => {
  const objects = [configMap(), deployment()];
  const key = (obj: KubeObject) => objectKey(obj, 'team-a');

  it('a healthy wave: `seen` holds every object the recheck read, by objectKey (not the ConfigMap, which it did not read)', async () => {
    const live = new Map<string, Record<string, unknown>>([
      ['ConfigMap', configMap()],
      ['Deployment', available(deployment())],
    ]);
    const seen: SeenReads = new Map();
    expect(
      await recheckWaitingWave(release({}, progressing()), ports(live, objects, []), seen),
    ).toBeUndefined();
    expect([...seen.keys()]).toEqual([key(deployment())]);
    expect(seen.get(key(deployment()))).toBe(live.get('Deployment'));
  });

  it('a wave still waiting: `seen` holds what was read before the recheck stopped', async () => {
    const live = new Map<string, Record<string, unknown>>([
      ['ConfigMap', configMap()],
      ['Deployment', rollingOut(deployment())],
    ]);
    const seen: SeenReads = new Map();
    const waiting = await recheckWaitingWave(release({}, progressing()), ports(live, objects, []), seen);
    expect(waiting?.outcome).toMatchObject({ kind: 'requeueAfter' });
    expect([...seen.keys()]).toEqual([key(deployment())]);
  });

  it('an object that does not exist is not in `seen` (only reads that found an object)', async () => {
    const live = new Map<string, Record<string, unknown>>([['ConfigMap', configMap()]]);
    const seen: SeenReads = new Map();
    const waiting = await recheckWaitingWave(release({}, progressing()), ports(live, objects, []), seen);
    expect(waiting?.outcome).toMatchObject({ kind: 'requeueAfter' });
    expect(waiting?.outcome.kind === 'requeueAfter' ? waiting.outcome.reason : '').toContain('Missing');
    expect([...seen.keys()]).toEqual([]);
  });

  /** A target recording every call it gets. */
  function recordingCluster() {
    const calls: string[] = [];
    const target: TargetCluster = {
      identity: { name: 'local', server: 'https://target.example' },
      dryRun: (objs) => {
        calls.push(`dryRun ${objs.length}`);
        return Promise.resolve(objs.map(() => ({ kind: 'unchanged' as const })));
      },
      apply: (obj) => {
        calls.push(`apply ${obj.kind}`);
        return Promise.resolve();
      },
      read: (obj) => {
        calls.push(`read ${obj.kind}`);
        return Promise.resolve({ ...obj, from: 'cluster' });
      },
      prune: (obj) => {
        calls.push(`prune ${obj.kind}`);
        return Promise.resolve('deleted' as const);
      },
      answered: (obj) => {
        calls.push(`answered ${obj.kind}`);
        return Promise.resolve(undefined);
      },
    };
    const cluster: ReconcilePorts['cluster'] = { resolve: () => Promise.resolve(target) };
    return { cluster, calls };
  }

  it('a read of a seen object answers from `seen` once, without a request; the next read of it and other objects go to the cluster', async () => {
    const { cluster, calls } = recordingCluster();
    const seenLive = { ...deployment(), from: 'recheck' };
    const seen: SeenReads = new Map([[key(deployment()), seenLive]]);
    const target = await withSeenReads(cluster, release({}, progressing()), seen).resolve(
      release({}, progressing()),
    );
    expect(await target.read(deployment())).toBe(seenLive);
    expect(calls).toEqual([]);
    expect(await target.read(deployment())).toMatchObject({ from: 'cluster' });
    expect(await target.read(configMap())).toMatchObject({ from: 'cluster' });
    expect(calls).toEqual(['read Deployment', 'read ConfigMap']);
    // The caller's map is left as it was.
    expect(seen.get(key(deployment()))).toBe(seenLive);
  });

  it("an object without a namespace in the render matches the read of it in the Release's namespace", async () => {
    const { cluster, calls } = recordingCluster();
    const seenLive = { ...configMap(), from: 'recheck' };
    const seen: SeenReads = new Map([[key(configMap()), seenLive]]);
    const target = await withSeenReads(cluster, release({}, progressing()), seen).resolve(
      release({}, progressing()),
    );
    const unplaced: KubeObject = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'settings' } };
    expect(await target.read(unplaced)).toBe(seenLive);
    expect(calls).toEqual([]);
  });

  it('every other method goes to the cluster as usual', async () => {
    const { cluster, calls } = recordingCluster();
    const seen: SeenReads = new Map([[key(deployment()), { ...deployment() }]]);
    const target = await withSeenReads(cluster, release({}, progressing()), seen).resolve(
      release({}, progressing()),
    );
    expect(target.identity).toEqual({ name: 'local', server: 'https://target.example' });
    expect(await target.dryRun([deployment(), configMap()])).toEqual([
      { kind: 'unchanged' },
      { kind: 'unchanged' },
    ]);
    await target.apply(deployment());
    expect(await target.prune(deployment())).toBe('deleted');
    expect(await target.answered?.(deployment())).toBeUndefined();
    expect(calls).toEqual(['dryRun 2', 'apply Deployment', 'prune Deployment', 'answered Deployment']);
  });

  it('nothing seen: the cluster port itself', () => {
    const { cluster } = recordingCluster();
    expect(withSeenReads(cluster, release({}, progressing()), new Map())).toBe(cluster);
  });
});
