// Releases in a given state and an in-memory DependencyReads over them (a pure port: no Kubernetes involved).
import type { Condition } from '../../../domain/api/common.ts';
import { parseRelease, type Release } from '../../../domain/api/objects.ts';
import { parseReleaseSet, type ReleaseSet } from '../../../domain/api/release-set.ts';
import type { DependencyReads } from '../../../domain/dependencies/reads.ts';

export const T = '2026-12-07T10:00:00Z';
export const R1 = `sha256:${'1'.repeat(64)}`;
export const R2 = `sha256:${'2'.repeat(64)}`;

const cond = (type: string, status: Condition['status'], reason: string, gen: number): Condition => ({
  type,
  status,
  reason,
  message: '',
  lastTransitionTime: T,
  observedGeneration: gen,
});

export type State = 'ready' | 'new' | 'upgrading' | 'failed' | 'unhealthy';

/** A Release `ns/name` depending on `deps`, in `state`: ready at R1; new (never reconciled); upgrading (R2 attempted, R1 applied); failed. */
export function rel(
  name: string,
  state: State,
  deps: Record<string, unknown>[] = [],
  extra: { namespace?: string; policy?: Record<string, unknown>; applied?: Condition } = {},
): Release {
  const gen = 3;
  const conditions: Condition[] = [
    extra.applied ??
      (state === 'failed'
        ? cond('Applied', 'False', 'Unappliable', gen)
        : cond('Applied', 'True', 'Applied', gen)),
    cond('InSync', 'True', 'InSync', gen),
    state === 'unhealthy'
      ? cond('Healthy', 'False', 'Degraded', gen)
      : cond('Healthy', 'True', 'Healthy', gen),
  ];
  const status =
    state === 'new'
      ? undefined
      : {
          observedGeneration: gen,
          lastAttempted: { attemptedAt: T, phase: 'Succeeded', renderRef: state === 'upgrading' ? R2 : R1 },
          lastSuccessful: { attemptedAt: T, phase: 'Succeeded', renderRef: R1 },
          conditions,
        };
  const parsed = parseRelease({
    apiVersion: 'convoy.dev/v1alpha1',
    kind: 'Release',
    metadata: { name, namespace: extra.namespace ?? 'team-a', generation: gen },
    spec: {
      cluster: { name: 'local' },
      source: { git: { url: 'https://git.example.com/apps.git', ref: { branch: 'main' } } },
      dependsOn: deps,
      ...(extra.policy ? { dependencyPolicy: extra.policy } : {}),
    },
    ...(status ? { status } : {}),
  });
  if (!parsed.ok) throw new Error(parsed.error);
  return parsed.value;
}

export function set(name: string, state: 'Succeeded' | 'Progressing', namespace = 'team-a'): ReleaseSet {
  const revision = { id: 'r2', templateHash: 'h', source: {} };
  const parsed = parseReleaseSet({
    apiVersion: 'convoy.dev/v1alpha1',
    kind: 'ReleaseSet',
    metadata: { name, namespace, generation: 1 },
    spec: { clusters: { names: ['a'] }, template: { spec: { source: {} } } },
    status: {
      observedGeneration: 1,
      revision,
      ...(state === 'Succeeded' ? { lastSucceededRevision: revision } : {}),
      rollout: { state, step: 0, stepName: 'all' },
      conditions: [
        { ...cond('RolloutSucceeded', state === 'Succeeded' ? 'True' : 'False', state, 1), message: 'm' },
      ],
    },
  });
  if (!parsed.ok) throw new Error(parsed.error);
  return parsed.value;
}

/** Reads over fixed objects; counts every read, so a test can show what a decision costs. */
export function readsOf(
  releases: Release[],
  sets: ReleaseSet[] = [],
  labels: Record<string, Record<string, string>> = {},
): DependencyReads & { count: number } {
  const reads = {
    count: 0,
    release: (ns: string, name: string) => {
      reads.count++;
      return Promise.resolve(releases.find((r) => r.metadata.namespace === ns && r.metadata.name === name));
    },
    releaseSet: (ns: string, name: string) => {
      reads.count++;
      return Promise.resolve(sets.find((s) => s.metadata.namespace === ns && s.metadata.name === name));
    },
    namespaceLabels: (ns: string) => {
      reads.count++;
      return Promise.resolve(labels[ns] ?? {});
    },
  };
  return reads;
}
