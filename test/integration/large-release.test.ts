// Large Releases on the real API server, through the reconcile function's record
// handler: a render over the installation's object limit ends Applied False/DeployFailed at
// Rendering naming the limit, with nothing stored or applied; a run longer than the progress
// interval shows lastAttempted phase Syncing with counts in status before it ends Applied.
import { CoreV1Api, Watch } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { API_GROUP, API_VERSION } from '../../domain/api/group-version.ts';
import { kubeConfigFor } from '../harness/kube.ts';
import { startReconcileEnv, type ReconcileEnv } from '../harness/reconcile-env.ts';

const LABEL = 'convoy.dev/test-large';

/** `n` ConfigMaps labelled `LABEL=<release>` in one multi-document file. */
function configMaps(release: string, n: number): Record<string, string> {
  const docs = Array.from(
    { length: n },
    (_, i) =>
      `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${release}-${String(i).padStart(4, '0')}\n  labels: {${LABEL}: ${release}}\ndata: {index: "${i}"}\n`,
  );
  return { 'app/objects.yaml': docs.join('---\n') };
}

interface Seen {
  phase: string | undefined;
  progress: { total: number; checked: number; applied: number; updatedAt: string } | undefined;
  applied: string | undefined;
}

/** Every status of one Release from now on, in order; `until` resolves at the first that matches. */
async function watchRelease(env: ReconcileEnv, name: string) {
  const seen: Seen[] = [];
  const waiters: { match: (s: Seen) => boolean; resolve: () => void }[] = [];
  let ended: unknown;
  const controller = await new Watch(env.kc).watch(
    `/apis/${API_GROUP}/${API_VERSION}/namespaces/${env.ns.name}/releases`,
    { fieldSelector: `metadata.name=${name}` },
    (
      _type: string,
      obj: {
        status?: {
          lastAttempted?: { phase?: string; progress?: Seen['progress'] };
          conditions?: { type: string; reason: string }[];
        };
      },
    ) => {
      const s: Seen = {
        phase: obj.status?.lastAttempted?.phase,
        progress: obj.status?.lastAttempted?.progress,
        applied: obj.status?.conditions?.find((c) => c.type === 'Applied')?.reason,
      };
      seen.push(s);
      for (const w of [...waiters]) {
        if (!w.match(s)) continue;
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve();
      }
    },
    (error: unknown) => (ended = error ?? 'the watch ended'),
  );
  return {
    seen,
    until: (match: (s: Seen) => boolean) =>
      seen.some(match) ? Promise.resolve() : new Promise<void>((resolve) => waiters.push({ match, resolve })),
    ended: () => ended,
    stop: () => controller.abort(),
  };
}

describe('large Releases', () => {
  let env: ReconcileEnv;
  let core: CoreV1Api;
  beforeAll(async () => {
    env = await startReconcileEnv(kubeConfigFor(inject('kubeconfigPath')), 'large-release');
    core = env.kc.makeApiClient(CoreV1Api);
  });
  afterAll(() => env.close());

  const create = async (name: string, objects: number) => {
    const repo = await env.repo(name, configMaps(name, objects));
    await env.api.create('Release', env.ns.name, name, {
      cluster: { name: 'local' },
      targetNamespace: env.ns.name,
      source: { git: { url: repo.url, ref: { branch: 'main' }, path: 'app' } },
    });
  };
  const liveCount = async (name: string) =>
    (await core.listNamespacedConfigMap({ namespace: env.ns.name, labelSelector: `${LABEL}=${name}` })).items
      .length;

  it('a render over the object limit → Rendering / DeployFailed naming the count and the limit; nothing stored or applied', async () => {
    await create('over', 30);
    const ports = env.ports({ wiring: { renderLimits: { maxObjects: 20 } } });
    const { release } = await env.reconcile('over', ports);

    const applied = release.status?.conditions?.find((c) => c.type === 'Applied');
    expect(applied).toMatchObject({ status: 'False', reason: 'DeployFailed' });
    expect(applied?.message).toContain('has 30 objects');
    expect(applied?.message).toContain('limit of 20 objects per render');
    expect(release.status?.lastAttempted).toMatchObject({
      phase: 'Failed',
      failure: { stage: 'Rendering', reason: 'DeployFailed' },
    });
    expect(release.status?.lastAttempted?.failure?.message).toContain('CONVOY_MAX_RENDER_OBJECTS');
    // Stopped before the render was finished: no renderRef, nothing in the store, nothing on the cluster.
    expect(release.status?.lastAttempted?.renderRef).toBeUndefined();
    expect(await env.store.list(env.ns.name, 'over')).toEqual([]);
    expect(await liveCount('over')).toBe(0);

    // The same render within the limit applies.
    const within = await env.reconcile('over', env.ports({ wiring: { renderLimits: { maxObjects: 30 } } }));
    expect(within.release.status?.conditions?.find((c) => c.type === 'Applied')?.reason).toBe('Applied');
    expect(await liveCount('over')).toBe(30);
  });

  it('render output over the byte limit → Rendering / DeployFailed naming the limit, before parsing; nothing applied (manifest files, and helm template through the real helm)', async () => {
    await create('bytes', 30);
    const small = env.ports({ wiring: { renderLimits: { maxBytes: 1_000 } } });
    const { release } = await env.reconcile('bytes', small);
    const applied = release.status?.conditions?.find((c) => c.type === 'Applied');
    expect(applied).toMatchObject({ status: 'False', reason: 'DeployFailed' });
    expect(applied?.message).toContain('render limit of 1000 bytes together');
    expect(applied?.message).toContain('CONVOY_MAX_RENDER_BYTES');
    expect(release.status?.lastAttempted?.failure?.stage).toBe('Rendering');
    expect(await liveCount('bytes')).toBe(0);

    const chart = await env.repo('bytes-chart', {
      'Chart.yaml': 'apiVersion: v2\nname: bytes\nversion: 0.1.0\n',
      'templates/cms.yaml': `{{- range until 50 }}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: bytes-chart-{{ . }}\n  labels: {${LABEL}: bytes-chart}\ndata: {index: "{{ . }}"}\n{{- end }}\n`,
    });
    await env.api.create('Release', env.ns.name, 'bytes-chart', {
      cluster: { name: 'local' },
      targetNamespace: env.ns.name,
      source: { git: { url: chart.url, ref: { branch: 'main' } } },
      content: { type: 'Helm', helm: {} },
    });
    const helm = await env.reconcile(
      'bytes-chart',
      env.ports({ wiring: { renderLimits: { maxBytes: 2_048 } } }),
    );
    const helmApplied = helm.release.status?.conditions?.find((c) => c.type === 'Applied');
    expect(helmApplied).toMatchObject({ status: 'False', reason: 'DeployFailed' });
    expect(helmApplied?.message).toMatch(
      /^helm template bytes-chart: the output is larger than this installation's render limit of 2048 bytes \(CONVOY_MAX_RENDER_BYTES/,
    );
    expect(await liveCount('bytes-chart')).toBe(0);
    // Within the limit (the default), the chart applies.
    const within = await env.reconcile('bytes-chart');
    expect(within.release.status?.conditions?.find((c) => c.type === 'Applied')?.reason).toBe('Applied');
    expect(await liveCount('bytes-chart')).toBe(50);
  });

  it('a run longer than the progress interval shows phase Syncing with counts before it ends Applied', async () => {
    const n = 300;
    await create('progress', n);
    const watch = await watchRelease(env, 'progress');
    try {
      const { release } = await env.reconcile('progress', undefined, { progressIntervalMs: 100 });
      await watch.until((s) => s.phase === 'Succeeded');

      const firstSuccess = watch.seen.findIndex((s) => s.phase === 'Succeeded');
      const during = watch.seen.slice(0, firstSuccess).filter((s) => s.phase === 'Syncing');
      expect(during.length).toBeGreaterThan(0);
      for (const s of during) {
        expect(s.progress?.total).toBe(n);
        expect(s.progress?.checked).toBeLessThanOrEqual(n);
        expect(s.progress?.applied).toBeLessThanOrEqual(s.progress?.checked ?? 0);
        expect(s.progress?.updatedAt).toMatch(/Z$/);
        // A progress write keeps the Applied condition as it was (none yet on a first run).
        expect(s.applied).toBeUndefined();
      }
      // The counts only grow.
      const applied = during.map((s) => s.progress?.applied ?? 0);
      expect(applied).toEqual([...applied].sort((a, b) => a - b));

      // The run's last write replaces the progress: Succeeded, no counts, Applied True.
      expect(release.status?.lastAttempted?.phase).toBe('Succeeded');
      expect(release.status?.lastAttempted?.progress).toBeUndefined();
      expect(release.status?.conditions?.find((c) => c.type === 'Applied')?.reason).toBe('Applied');
      expect(await liveCount('progress')).toBe(n);
      expect(watch.ended()).toBeUndefined();
    } finally {
      watch.stop();
    }
  });

  it('a run shorter than the progress interval writes status once', async () => {
    await create('short', 5);
    const watch = await watchRelease(env, 'short');
    try {
      await env.reconcile('short', undefined, { progressIntervalMs: 600_000 });
      await watch.until((s) => s.phase === 'Succeeded');
      expect(watch.seen.filter((s) => s.phase === 'Syncing')).toEqual([]);
    } finally {
      watch.stop();
    }
  });
});
