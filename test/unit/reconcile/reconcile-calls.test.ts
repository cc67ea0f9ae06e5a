/**
 * What one reconcile asks of the cluster and the render store: no dry run for a
 * Progressing rollout of the same render whose waves are all applied, retention only for a
 * render the Release had not attempted, no read of the previous render when it is this one.
 * The ports are in-memory fakes that count their calls; nothing here claims cluster behaviour.
 */
import { describe, expect, it } from 'vitest';
import type { Release } from '../../../domain/api/objects.ts';
import type { LifecycleHook } from '../../../domain/api/index.ts';
import {
  ApplyRejectedError,
  type ReconcilePorts,
  type StoredRender,
  type TargetCluster,
} from '../../../domain/reconcile/ports.ts';
import { pruneRemoved } from '../../../domain/reconcile/prune.ts';
import { reconcile } from '../../../domain/reconcile/reconcile.ts';
import type { KubeObject } from '../../../domain/render/kube-object.ts';
import { SYNC_WAVE_ANNOTATION } from '../../../domain/render/order.ts';
import { attempt, configMap, deployment, NOW, RENDER_B, release } from '../observe/fixtures.ts';

/** Wave 0: a ConfigMap; wave 1: a Deployment. */
const rendered = (): KubeObject[] => [
  configMap(),
  { ...deployment(), metadata: { ...deployment().metadata, annotations: { [SYNC_WAVE_ANNOTATION]: '1' } } },
];

/** The live object as a healthy cluster has it. */
function healthy(obj: KubeObject): Record<string, unknown> {
  if (obj.kind !== 'Deployment') return { ...obj };
  return {
    ...obj,
    metadata: { ...obj.metadata, generation: 1 },
    status: {
      observedGeneration: 1,
      replicas: 2,
      updatedReplicas: 2,
      availableReplicas: 2,
      readyReplicas: 2,
      conditions: [{ type: 'Available', status: 'True' }],
    },
  };
}

interface Calls {
  dryRun: number;
  /** The kinds each dry run was asked to check. */
  dryRunOf: string[][];
  apply: string[];
  read: string[];
  prune: string[];
  storeGet: string[];
  storePut: string[];
  retention: number;
}

interface FakeOptions {
  objects?: () => KubeObject[];
  /** Refuses the apply of this kind as the cluster refuses an object no retry changes. */
  refuseApplyOf?: string;
  hooks?: LifecycleHook[];
}

function fakePorts(
  previous: Map<string, StoredRender> = new Map(),
  opts: FakeOptions = {},
): { ports: ReconcilePorts; calls: Calls } {
  const calls: Calls = {
    dryRun: 0,
    dryRunOf: [],
    apply: [],
    read: [],
    prune: [],
    storeGet: [],
    storePut: [],
    retention: 0,
  };
  const target: TargetCluster = {
    identity: { name: 'local', server: 'https://target.example' },
    dryRun: (objects) => {
      calls.dryRun++;
      calls.dryRunOf.push(objects.map((o) => o.kind));
      return Promise.resolve(objects.map(() => ({ kind: 'changed' as const })));
    },
    apply: (obj) => {
      if (obj.kind === opts.refuseApplyOf)
        return Promise.reject(
          new ApplyRejectedError(
            `${obj.kind} ${obj.metadata.name}: apply refused by the server (HTTP 422): invalid`,
          ),
        );
      calls.apply.push(obj.kind);
      return Promise.resolve();
    },
    read: (obj) => {
      calls.read.push(obj.kind);
      return Promise.resolve(healthy(obj));
    },
    prune: (obj) => {
      calls.prune.push(obj.kind);
      return Promise.resolve('deleted');
    },
  };
  const ports: ReconcilePorts = {
    now: () => NOW,
    source: {
      resolve: () =>
        Promise.resolve({
          dir: '/nonexistent',
          resolved: { git: { url: 'https://git.example/apps.git', ref: 'main', commit: 'c'.repeat(40) } },
        }),
    },
    cluster: { resolve: () => Promise.resolve(target) },
    values: { read: () => Promise.resolve([]) },
    renderer: { render: () => Promise.resolve((opts.objects ?? rendered)()) },
    mutations: { forRelease: () => Promise.resolve([]) },
    lifecycle: { hooksOf: () => Promise.resolve(opts.hooks ?? []) },
    releases: { inNamespace: () => Promise.resolve([]) },
    store: {
      put: (_r, render) => {
        calls.storePut.push(render.renderRef);
        return Promise.resolve();
      },
      get: (_r, ref) => {
        calls.storeGet.push(ref);
        return Promise.resolve(previous.get(ref));
      },
      prune: () => {
        calls.retention++;
        return Promise.resolve();
      },
    },
    retentionDefault: { maxRenders: 10, maxAge: '720h' },
  };
  return { ports, calls };
}

/** The renderRef of `rendered()` as this Release's reconcile computes it. */
async function currentRenderRef(): Promise<string> {
  const result = await reconcile(release(), fakePorts().ports);
  if (result.kind !== 'reconciled' || result.renderRef === undefined) throw new Error('no render');
  return result.renderRef;
}

type WaveState = 'Pending' | 'Applied' | 'Healthy';

/** A rollout of `renderRef` in progress at `wave`, with the given wave states (absent waves left out). */
function progressingStatus(renderRef: string, waves: WaveState[], extra: Record<string, unknown> = {}) {
  return {
    observedGeneration: 3,
    lastAttempted: attempt(renderRef),
    lastSuccessful: attempt(renderRef),
    rollout: { renderRef, state: 'Progressing', startedAt: '2026-11-29T09:59:00Z', wave: waves.length - 1 },
    waves: waves.map((state, wave) => ({
      wave,
      objects: 1,
      state,
      ...(state !== 'Pending' ? { appliedAt: '2026-11-29T09:59:00Z' } : {}),
      ...(state === 'Healthy' ? { healthyAt: '2026-11-29T09:59:30Z' } : {}),
    })),
    ...extra,
  };
}

function forceSynced(r: Release): Release {
  r.metadata.annotations = { 'convoy.dev/force-sync-requested-at': '2026-11-29T09:59:50Z' };
  return r;
}

describe('the dry run of a reconcile', () => {
  it('a Progressing rollout of this render whose waves are all applied runs no dry run and applies nothing', async () => {
    const ref = await currentRenderRef();
    const { ports, calls } = fakePorts();
    const result = await reconcile(release({}, progressingStatus(ref, ['Healthy', 'Applied'])), ports);
    expect(calls.dryRun).toBe(0);
    expect(calls.apply).toEqual([]);
    expect(result.kind === 'reconciled' && result.slice.rollout?.state).toBe('Succeeded');
  });

  it('a Progressing rollout with a Pending wave still dry-runs (and applies that wave)', async () => {
    const ref = await currentRenderRef();
    const { ports, calls } = fakePorts();
    await reconcile(release({}, progressingStatus(ref, ['Healthy', 'Pending'])), ports);
    expect(calls.dryRun).toBe(1);
    expect(calls.apply).toEqual(['Deployment']);
  });

  it('a Progressing rollout whose status lacks a wave of the render still dry-runs', async () => {
    const ref = await currentRenderRef();
    const { ports, calls } = fakePorts();
    await reconcile(release({}, progressingStatus(ref, ['Applied'])), ports);
    expect(calls.dryRun).toBe(1);
  });

  it('a Progressing rollout of another render dry-runs', async () => {
    const { ports, calls } = fakePorts();
    await reconcile(release({}, progressingStatus(RENDER_B, ['Healthy', 'Applied'])), ports);
    expect(calls.dryRun).toBe(1);
  });

  it('a finished rollout of this render dry-runs (it re-applies what drifted)', async () => {
    const ref = await currentRenderRef();
    const { ports, calls } = fakePorts();
    const status = progressingStatus(ref, ['Healthy', 'Healthy'], {
      rollout: {
        renderRef: ref,
        state: 'Succeeded',
        startedAt: '2026-11-29T09:59:00Z',
        finishedAt: '2026-11-29T09:59:30Z',
      },
    });
    await reconcile(release({}, status), ports);
    expect(calls.dryRun).toBe(1);
  });

  it('a force sync skips it as before, also with a Pending wave, and applies every wave again', async () => {
    const ref = await currentRenderRef();
    for (const waves of [
      ['Healthy', 'Applied'],
      ['Healthy', 'Pending'],
    ] as WaveState[][]) {
      const { ports, calls } = fakePorts();
      const result = await reconcile(forceSynced(release({}, progressingStatus(ref, waves))), ports);
      expect(calls.dryRun).toBe(0);
      expect(calls.apply).toEqual(['ConfigMap', 'Deployment']);
      expect(result.kind === 'reconciled' && result.slice.lastHandledForceSyncAt).toBe(
        '2026-11-29T09:59:50Z',
      );
    }
  });
});

const sortedKinds = (runs: string[][]): string[][] => runs.map((kinds) => [...kinds].sort());

describe("a first deploy's first object: checked by its own apply, not a dry run", () => {
  const withService = (): KubeObject[] => [
    ...rendered(),
    {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'web', namespace: 'team-a' },
      spec: { ports: [{ port: 80 }] },
    },
  ];

  it('dry-runs every object but the first in apply order, then applies all of them in order', async () => {
    const { ports, calls } = fakePorts(new Map(), { objects: withService });
    const result = await reconcile(release(), ports);
    expect(sortedKinds(calls.dryRunOf)).toEqual([['Deployment', 'Service']]);
    expect(calls.apply).toEqual(['ConfigMap', 'Service', 'Deployment']);
    expect(result.kind === 'reconciled' && result.slice.waves?.map((w) => w.state)).toEqual([
      'Healthy',
      'Healthy',
    ]);
  });

  it('a render of one object runs no dry run at all', async () => {
    const { ports, calls } = fakePorts(new Map(), { objects: () => [configMap()] });
    await reconcile(release(), ports);
    expect(calls.dryRun).toBe(0);
    expect(calls.apply).toEqual(['ConfigMap']);
  });

  it('a refusal of that apply ends the run as a refused dry run: Unappliable, not retried, nothing else applied, no rollout begun', async () => {
    const { ports, calls } = fakePorts(new Map(), { objects: withService, refuseApplyOf: 'ConfigMap' });
    const result = await reconcile(release(), ports);
    if (result.kind !== 'reconciled') throw new Error('suspended');
    expect(result.slice.lastAttempted?.failure).toMatchObject({ stage: 'Syncing', reason: 'Unappliable' });
    expect(result.slice.conditions?.find((c) => c.type === 'Applied')).toMatchObject({
      status: 'False',
      reason: 'Unappliable',
    });
    expect(result.slice.conditions?.find((c) => c.type === 'Applied')?.message).toContain(
      'ConfigMap settings: apply refused',
    );
    expect(result.outcome.kind).toBe('stop');
    expect(calls.apply).toEqual([]);
    expect(result.slice.rollout).toBeUndefined();
  });

  it('dry-runs every object when the Release attempted a render before, has lifecycle hooks, renders a Namespace or CRD, or is force-synced', async () => {
    const namespace: KubeObject = { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'team-a' } };
    const crd: KubeObject = {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: 'widgets.example.com' },
    };
    const cases: { release: Release; opts?: FakeOptions; dryRunOf: string[][] }[] = [
      { release: release({}, { lastAttempted: attempt(RENDER_B) }), dryRunOf: [['ConfigMap', 'Deployment']] },
      {
        release: release({ lifecycleRef: { name: 'hooks' } }),
        opts: { hooks: [] },
        dryRunOf: [['ConfigMap', 'Deployment']],
      },
      {
        release: release(),
        opts: { objects: () => [namespace, ...rendered()] },
        dryRunOf: [['Namespace', 'ConfigMap', 'Deployment']],
      },
      {
        release: release(),
        opts: { objects: () => [...rendered(), crd] },
        dryRunOf: [['ConfigMap', 'Deployment', 'CustomResourceDefinition']],
      },
      { release: forceSynced(release()), dryRunOf: [] },
    ];
    for (const c of cases) {
      const { ports, calls } = fakePorts(new Map(), c.opts);
      await reconcile(c.release, ports);
      expect(sortedKinds(calls.dryRunOf)).toEqual(sortedKinds(c.dryRunOf));
    }
  });
});

describe('render store retention', () => {
  it('runs when the render differs from status.lastAttempted.renderRef', async () => {
    const ref = await currentRenderRef();
    const { ports, calls } = fakePorts();
    const result = await reconcile(
      release({}, { lastAttempted: attempt(RENDER_B), lastSuccessful: attempt(RENDER_B) }),
      ports,
    );
    expect(result.kind === 'reconciled' && result.renderRef).toBe(ref);
    expect(calls.storePut).toEqual([ref]);
    expect(calls.retention).toBe(1);
  });

  it('does not run when the render is the one last attempted (an unchanged reconcile)', async () => {
    const ref = await currentRenderRef();
    const finished = progressingStatus(ref, ['Healthy', 'Healthy'], {
      rollout: {
        renderRef: ref,
        state: 'Succeeded',
        startedAt: '2026-11-29T09:59:00Z',
        finishedAt: '2026-11-29T09:59:30Z',
      },
    });
    for (const status of [finished, progressingStatus(ref, ['Healthy', 'Applied'])]) {
      const { ports, calls } = fakePorts();
      const result = await reconcile(release({}, status), ports);
      expect(result.kind === 'reconciled' && result.slice.rollout?.state).toBe('Succeeded');
      expect(calls.retention).toBe(0);
    }
  });

  it("does not run on a Release's first render (nothing attempted before: it is the only render)", async () => {
    const ref = await currentRenderRef();
    const { ports, calls } = fakePorts();
    const result = await reconcile(release(), ports);
    expect(result.kind === 'reconciled' && result.renderRef).toBe(ref);
    expect(calls.storePut).toEqual([ref]);
    expect(calls.retention).toBe(0);
  });
});

describe('prune of what the previous render had', () => {
  const extra: KubeObject = {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: 'old', namespace: 'team-a' },
  };

  it('reads no previous render when lastSuccessful is this render', async () => {
    const ref = await currentRenderRef();
    const { ports, calls } = fakePorts();
    const status = progressingStatus(ref, ['Healthy', 'Healthy'], {
      rollout: {
        renderRef: ref,
        state: 'Succeeded',
        startedAt: '2026-11-29T09:59:00Z',
        finishedAt: '2026-11-29T09:59:30Z',
      },
    });
    const result = await reconcile(release({}, status), ports);
    expect(result.kind === 'reconciled' && result.slice.lastSuccessful?.renderRef).toBe(ref);
    expect(calls.storeGet).toEqual([]);
    expect(calls.prune).toEqual([]);
  });

  it('reads the previous render and deletes what this one lacks when lastSuccessful is another render', async () => {
    const { ports, calls } = fakePorts(
      new Map([[RENDER_B, { renderRef: RENDER_B, objects: [...rendered(), extra] }]]),
    );
    await reconcile(
      release({}, { lastAttempted: attempt(RENDER_B), lastSuccessful: attempt(RENDER_B) }),
      ports,
    );
    expect(calls.storeGet).toEqual([RENDER_B]);
    expect(calls.prune).toEqual(['Service']);
  });

  it('pruneRemoved called with the previous renderRef asks the store nothing', async () => {
    const { ports, calls } = fakePorts(new Map([[RENDER_B, { renderRef: RENDER_B, objects: [extra] }]]));
    const r = release({}, { lastAttempted: attempt(RENDER_B), lastSuccessful: attempt(RENDER_B) });
    const target = await ports.cluster.resolve(r);
    expect(await pruneRemoved(r, ports, target, rendered(), RENDER_B)).toEqual({ deleted: 0, skipped: 0 });
    expect(calls.storeGet).toEqual([]);
    expect(await pruneRemoved(r, ports, target, rendered(), `sha256:${'c'.repeat(64)}`)).toEqual({
      deleted: 1,
      skipped: 0,
    });
    expect(calls.storeGet).toEqual([RENDER_B]);
  });
});
