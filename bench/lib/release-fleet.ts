// Many Releases at once for the relay's scale bench: created with a status already written
// (status subresource) that says they are up to date, so no function needs to run; the relay
// then sees a fleet in its steady state.
import { createHash } from 'node:crypto';
import {
  CoreV1Api,
  CustomObjectsApi,
  PatchStrategy,
  setHeaderOptions,
  type KubeConfig,
} from '@kubernetes/client-node';
import { API_GROUP, API_VERSION } from '../../domain/api/common.ts';
import { inPool } from '../flux/side-process.ts';
import { log } from './stdout.ts';

export interface FleetRelease {
  namespace: string;
  name: string;
}

const base = (namespace: string) => ({
  group: API_GROUP,
  version: API_VERSION,
  namespace,
  plural: 'releases',
});

/**
 * The status of a Release whose last reconcile applied its render and whose observers
 * reported on it: reconcile `reconciledAgoMs` ago, health `checkedAgoMs` ago, InSync and
 * Healthy unchanged for `stableForMs` (what a fleet looks like after a while).
 */
export function upToDateStatus(
  generation: number,
  at: { now: number; reconciledAgoMs: number; checkedAgoMs: number; stableForMs: number },
): Record<string, unknown> {
  const iso = (ago: number) => new Date(at.now - ago).toISOString().replace(/\.\d{3}Z$/, 'Z');
  const renderRef = `sha256:${createHash('sha256').update('bench-render').digest('hex')}`;
  const attempt = { attemptedAt: iso(at.reconciledAgoMs), phase: 'Succeeded', renderRef };
  const condition = (type: string, reason: string) => ({
    type,
    status: 'True',
    reason,
    message: 'bench: written by the relay scale bench',
    lastTransitionTime: iso(at.stableForMs),
    observedGeneration: generation,
  });
  return {
    observedGeneration: generation,
    reconciledAt: iso(at.reconciledAgoMs),
    lastAttempted: attempt,
    lastSuccessful: attempt,
    rollout: { renderRef, state: 'Succeeded' },
    healthSummary: {
      renderRef,
      checkedAt: iso(at.checkedAgoMs),
      total: 3,
      healthy: 3,
      progressing: 0,
      degraded: 0,
      missing: 0,
      unknown: 0,
      objects: [],
    },
    conditions: [
      condition('Applied', 'Applied'),
      condition('InSync', 'InSync'),
      condition('Healthy', 'Healthy'),
    ],
  };
}

export async function writeStatus(
  kc: KubeConfig,
  r: FleetRelease,
  status: Record<string, unknown>,
): Promise<void> {
  const custom = kc.makeApiClient(CustomObjectsApi);
  await custom.patchNamespacedCustomObjectStatus(
    { ...base(r.namespace), name: r.name, body: { status } },
    setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
  );
}

/**
 * Creates `count` Releases, `perNamespace` per namespace, each with an up-to-date status whose
 * times are spread like a fleet's (reconciled within the last 5 minutes, health checked within
 * the last 10, InSync and Healthy stable for 2 hours).
 */
export async function createFleet(
  kc: KubeConfig,
  o: { prefix: string; count: number; perNamespace: number; concurrency: number; repoUrl: string },
): Promise<FleetRelease[]> {
  const core = kc.makeApiClient(CoreV1Api);
  const custom = kc.makeApiClient(CustomObjectsApi);
  const namespaces = Array.from(
    { length: Math.ceil(o.count / o.perNamespace) },
    (_, i) => `${o.prefix}-${i}`,
  );
  await inPool(namespaces, o.concurrency, async (name) => {
    await core.createNamespace({ body: { metadata: { name } } });
  });
  const releases: FleetRelease[] = Array.from({ length: o.count }, (_, i) => ({
    namespace: namespaces[Math.floor(i / o.perNamespace)] ?? '',
    name: `app-${i % o.perNamespace}`,
  }));
  const now = Date.now();
  await inPool(releases, o.concurrency, async (r, i) => {
    await custom.createNamespacedCustomObject({
      ...base(r.namespace),
      body: {
        apiVersion: `${API_GROUP}/${API_VERSION}`,
        kind: 'Release',
        metadata: { name: r.name, namespace: r.namespace },
        spec: {
          cluster: { name: 'local' },
          source: { git: { url: o.repoUrl, ref: { branch: 'main' }, path: 'app' } },
        },
      },
    });
    // Spread deterministically: Release i was reconciled (i * 7919 mod 300) s ago, checked (i * 104729 mod 600) s ago.
    if ((i + 1) % 1000 === 0) log(`relayScale: ${i + 1} of ${o.count} Releases created`);
    await writeStatus(
      kc,
      r,
      upToDateStatus(1, {
        now,
        reconciledAgoMs: ((i * 7919) % 300) * 1000,
        checkedAgoMs: ((i * 104_729) % 600) * 1000,
        stableForMs: 2 * 3_600_000,
      }),
    );
  });
  return releases;
}
