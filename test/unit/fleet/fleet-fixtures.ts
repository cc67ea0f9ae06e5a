// Builders for the fleet unit tests: a ReleaseSet, Clusters, and a tiny in-memory "apiserver" that
// applies the step function's writes and lets a test make children ready or failing.
import { releaseSchema, type Release } from '../../../domain/api/objects.ts';
import { releaseSetSchema, type ReleaseSet, type ReleaseSetStatus } from '../../../domain/api/release-set.ts';
import type { Condition } from '../../../domain/api/common.ts';
import { decideFleet, type FleetDecision, type FleetInput } from '../../../domain/fleet/decide-fleet.ts';
import type { ClusterFacts } from '../../../domain/fleet/select-clusters.ts';
import type { SourceResolution } from '../../../domain/fleet/generate-fleet.ts';
import type { ChildWrite } from '../../../domain/fleet/writes.ts';

export const SET_UID = 'uid-set-web';
export const COMMIT_A = 'a'.repeat(40);
export const COMMIT_B = 'b'.repeat(40);

export function cluster(
  name: string,
  labels: Record<string, string> = {},
  annotations: Record<string, string> = {},
): ClusterFacts {
  return { name, labels, annotations };
}

export function releaseSet(
  spec: Record<string, unknown>,
  extra: {
    name?: string;
    generation?: number;
    annotations?: Record<string, string>;
    status?: ReleaseSetStatus;
  } = {},
): ReleaseSet {
  return releaseSetSchema.parse({
    apiVersion: 'convoy.dev/v1alpha1',
    kind: 'ReleaseSet',
    metadata: {
      name: extra.name ?? 'web',
      namespace: 'fleet',
      uid: SET_UID,
      generation: extra.generation ?? 1,
      ...(extra.annotations ? { annotations: extra.annotations } : {}),
    },
    spec: {
      clusters: { selector: {} },
      template: {
        spec: { source: { git: { url: 'https://git.example/apps.git', ref: { branch: 'main' } } } },
      },
      ...spec,
    },
    ...(extra.status ? { status: extra.status } : {}),
  });
}

export const gitSource = (commit = COMMIT_A): SourceResolution => ({
  ok: true,
  resolved: { git: { url: 'https://git.example/apps.git', commit } },
});

const condition = (
  type: string,
  status: 'True' | 'False' | 'Unknown',
  reason: string,
  generation: number,
  message = '',
): Condition => ({
  type,
  status,
  reason,
  message,
  lastTransitionTime: '2026-01-01T00:00:00Z',
  observedGeneration: generation,
});

/** A fake namespace of Releases that applies ChildWrites like server-side apply would (for these tests). */
export class FakeNamespace {
  readonly releases = new Map<string, Release>();
  private uid = 0;

  apply(writes: readonly ChildWrite[]): void {
    for (const w of writes) {
      if (w.action === 'delete') this.releases.delete(w.name);
      else if (w.action === 'orphan') {
        const r = this.releases.get(w.name)!;
        this.releases.set(w.name, { ...r, metadata: { ...r.metadata, ownerReferences: [] } });
      } else {
        const existing = this.releases.get(w.name);
        const body = w.release;
        const annotations = { ...existing?.metadata.annotations, ...body.metadata.annotations };
        const parsed = releaseSchema.parse({ ...body, spec: { ...existing?.spec, ...body.spec } });
        const generation = (existing?.metadata.generation ?? 0) + 1;
        this.releases.set(w.name, {
          ...parsed,
          metadata: {
            ...parsed.metadata,
            annotations,
            uid: existing?.metadata.uid ?? `uid-${++this.uid}`,
            generation,
          },
          status: existing?.status,
        });
      }
    }
  }

  /** The child's controller reconciled it: Applied, InSync and Healthy True at its generation (renderRef per revision). */
  makeReady(name: string): void {
    const r = this.releases.get(name)!;
    const g = r.metadata.generation ?? 1;
    const render = `sha256:${(r.metadata.annotations?.['convoy.dev/release-set-revision'] ?? '0').padEnd(64, '0')}`;
    this.releases.set(name, {
      ...r,
      status: {
        lastAttempted: { attemptedAt: '2026-01-01T00:00:00Z', phase: 'Succeeded', renderRef: render },
        lastSuccessful: { attemptedAt: '2026-01-01T00:00:00Z', phase: 'Succeeded', renderRef: render },
        conditions: [
          condition('Applied', 'True', 'Applied', g),
          condition('InSync', 'True', 'InSync', g),
          condition('Healthy', 'True', 'Healthy', g),
        ],
      },
    });
  }

  makeFailing(name: string, message = 'Deployment fleet/web: 0/3 replicas available'): void {
    this.makeReady(name);
    const r = this.releases.get(name)!;
    const g = r.metadata.generation ?? 1;
    const conditions = r.status!.conditions!.map((c) =>
      c.type === 'Healthy' ? condition('Healthy', 'False', 'Degraded', g, message) : c,
    );
    this.releases.set(name, { ...r, status: { ...r.status, conditions } });
  }

  list(): Release[] {
    return [...this.releases.values()];
  }
}

/** One reconcile: decide, apply the writes, and return the set with its new status. */
export function reconcile(
  set: ReleaseSet,
  ns: FakeNamespace,
  input: Omit<Partial<FleetInput>, 'clusters'> & { clusters: ClusterFacts[]; now: Date },
): { set: ReleaseSet; decision: FleetDecision } {
  const clusters = { ok: true as const, clusters: input.clusters };
  const decision = decideFleet({
    set,
    clusters,
    source: input.source ?? gitSource(),
    releases: input.releases ?? ns.list(),
    now: input.now,
  });
  ns.apply(decision.writes);
  return { set: { ...set, status: decision.status }, decision };
}

export const at = (seconds: number): Date => new Date(Date.UTC(2026, 0, 1, 12, 0, 0) + seconds * 1000);
