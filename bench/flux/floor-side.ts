// The floor of the Flux bench: the same N apps applied by the bench itself, with no controller
// at all — one server-side apply per object (ConfigMap, Deployment, Service in that order, as a
// wave; with dryRunFirst, after a dry run of each as both controllers do), `concurrency` apps in flight, on an embedded cluster of its own with the same real
// controllers (kcm, scheduler, KWOK nodes) rolling the apps out. No controller can make these
// objects exist faster on this cluster than this: it is the apiserver's and the workload's own
// cost (the ClusterIP allocation, the Deployments' ReplicaSets and Pods, their EndpointSlices),
// which a controller's wall time sits on. Compared with Flux's wall time it says how far below
// Flux any controller could go here. With `reportOnce`, the bench also does the least a controller
// that reports can: it creates a Release per app (as the sides' clocks include creating theirs) and,
// after the applies, writes its status once (Applied True) — one status apply, where convoy's
// spec has three loops each writing its own slice.
import {
  CustomObjectsApi,
  KubernetesObjectApi,
  PatchStrategy,
  setHeaderOptions,
  type KubeConfig,
  type KubernetesObject,
} from '@kubernetes/client-node';
import { API_GROUP, API_VERSION } from '../../domain/api/common.ts';
import { toRfc3339 } from '../../domain/status/conditions.ts';
import { parseAllDocuments } from 'yaml';
import { percentile } from '../lib/stats.ts';
import { inPool } from './side-process.ts';
import { benchReleaseSpec } from './sides.ts';

export interface FloorResult {
  /** Apps in flight at once. */
  readonly concurrency: number;
  /** Each app's objects were first server-side applied as a dry run (as Flux and convoy both do), then for real. */
  readonly dryRunFirst: boolean;
  /** A Release was created per app first and its status written once after the applies. */
  readonly reportOnce: boolean;
  /** From the first apply to the last answered. */
  readonly wallS: number;
  readonly appsPerSecond: number;
  /** Per object kind: server-side apply latency p50/max, ms. */
  readonly applyLatencyMs: Record<string, { p50: number; max: number }>;
}

const FIELD_MANAGER = 'bench-floor';

/** The app's objects (bench/sections/per-release.ts appFiles), without a namespace. */
function appObjects(files: Record<string, string>): KubernetesObject[] {
  return Object.values(files).flatMap((text) =>
    parseAllDocuments(text).map((doc) => doc.toJS() as KubernetesObject),
  );
}

/** Applies every app's objects once (the namespaces exist); resolves when the last apply was answered. */
export async function runFloorSide(
  kc: KubeConfig,
  files: Record<string, string>,
  namespaces: readonly string[],
  options: { concurrency: number; dryRunFirst: boolean; reportOnce?: { repoUrl: string } },
): Promise<FloorResult> {
  const { concurrency, dryRunFirst, reportOnce } = options;
  const client = KubernetesObjectApi.makeApiClient(kc);
  const custom = kc.makeApiClient(CustomObjectsApi);
  const release = (namespace: string) => ({
    group: API_GROUP,
    version: API_VERSION,
    namespace,
    plural: 'releases',
  });
  const latencies = new Map<string, number[]>();
  const app = appObjects(files);
  const t0 = performance.now();
  await inPool(namespaces, concurrency, async (namespace) => {
    const objects = app.map((obj) => ({ ...obj, metadata: { ...obj.metadata, namespace } }));
    if (reportOnce !== undefined) {
      await custom.createNamespacedCustomObject({
        ...release(namespace),
        body: {
          apiVersion: `${API_GROUP}/${API_VERSION}`,
          kind: 'Release',
          metadata: { name: 'app', namespace },
          spec: benchReleaseSpec(reportOnce.repoUrl),
        },
      });
    }
    if (dryRunFirst) {
      for (const obj of objects)
        await client.patch(obj, undefined, 'All', FIELD_MANAGER, true, PatchStrategy.ServerSideApply);
    }
    for (const obj of objects) {
      const t = performance.now();
      await client.patch(obj, undefined, undefined, FIELD_MANAGER, true, PatchStrategy.ServerSideApply);
      const kind = obj.kind ?? '?';
      const ms = latencies.get(kind) ?? [];
      ms.push(performance.now() - t);
      latencies.set(kind, ms);
    }
    if (reportOnce !== undefined) {
      const at = toRfc3339(new Date());
      const applied = {
        type: 'Applied',
        status: 'True',
        reason: 'Applied',
        message: 'applied',
        observedGeneration: 1,
        lastTransitionTime: at,
      };
      await custom.patchNamespacedCustomObjectStatus(
        {
          ...release(namespace),
          name: 'app',
          body: {
            apiVersion: `${API_GROUP}/${API_VERSION}`,
            kind: 'Release',
            metadata: { name: 'app', namespace },
            status: { observedGeneration: 1, conditions: [applied] },
          },
          fieldManager: 'convoy-release',
          force: true,
        },
        setHeaderOptions('Content-Type', PatchStrategy.ServerSideApply),
      );
    }
  });
  const seconds = (performance.now() - t0) / 1000;
  return {
    concurrency,
    dryRunFirst,
    reportOnce: reportOnce !== undefined,
    wallS: Math.round(seconds * 10) / 10,
    appsPerSecond: Math.round((namespaces.length / seconds) * 10) / 10,
    applyLatencyMs: Object.fromEntries(
      [...latencies].map(([kind, ms]) => [
        kind,
        { p50: Math.round(percentile(ms, 50) ?? 0), max: Math.round(percentile(ms, 100) ?? 0) },
      ]),
    ),
  };
}
