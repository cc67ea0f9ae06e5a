/**
 * The relay's reverse index of spec.dependsOn: which Releases wait for a given Release or
 * ReleaseSet, kept from the watched Releases' specs, and the fingerprint of what a dependent
 * judges of its dependency — so the relay sends the dependents a reconcile message when, and
 * only when, that changed (docs/dependencies.md, "Event-driven"). Pure; one index per relay term.
 */
import type { DependencyKind } from '../api/depends-on.ts';
import type { Release } from '../api/objects.ts';
import type { ReleaseSet } from '../api/release-set.ts';
import { combinedVerdict } from '../status/verdict.ts';
import { renderInFlight } from './evaluate.ts';
import { dependencyNamespace } from './graph.ts';

/** The most dependents one change wakes; past it the rest wait for their safety recheck (a warning says so). */
export const MAX_DEPENDENTS_PER_CHANGE = 10_000;

export interface DependentsIndex {
  /** Records the dependencies of Release `namespace/name` (undefined: it is gone), replacing what it had. */
  setRelease(namespace: string, name: string, release: Release | undefined): void;
  /** `namespace/name` of the Releases whose spec.dependsOn names this object. */
  dependentsOf(kind: DependencyKind, namespace: string, name: string): string[];
  size(): number;
}

const targetKey = (kind: DependencyKind, namespace: string, name: string) => `${kind}/${namespace}/${name}`;

export function createDependentsIndex(): DependentsIndex {
  /** target → dependents (`namespace/name`). */
  const dependents = new Map<string, Set<string>>();
  /** dependent → its targets, to undo them on change. */
  const targets = new Map<string, readonly string[]>();
  const unlink = (dependent: string) => {
    for (const target of targets.get(dependent) ?? []) {
      const set = dependents.get(target);
      set?.delete(dependent);
      if (set?.size === 0) dependents.delete(target);
    }
    targets.delete(dependent);
  };
  return {
    setRelease(namespace, name, release) {
      const dependent = `${namespace}/${name}`;
      unlink(dependent);
      const deps = release?.spec.dependsOn ?? [];
      if (deps.length === 0) return;
      const keys = [
        ...new Set(deps.map((d) => targetKey(d.kind, dependencyNamespace(d, namespace), d.name))),
      ];
      targets.set(dependent, keys);
      for (const key of keys) {
        let set = dependents.get(key);
        if (set === undefined) dependents.set(key, (set = new Set()));
        set.add(dependent);
      }
    },
    dependentsOf(kind, namespace, name) {
      return [...(dependents.get(targetKey(kind, namespace, name)) ?? [])];
    },
    size: () => targets.size,
  };
}

/**
 * What a dependent judges of a Release, as one string: its generation, whether a newer render is
 * in flight, its combined verdict (ready, or the kind of not ready) and its Applied and Healthy
 * conditions for the current generation. undefined: absent. A change of it is a change a
 * dependent may act on; a status write that changes none of these wakes no one.
 */
export function releaseFingerprint(release: Release | undefined): string | undefined {
  if (release === undefined) return undefined;
  const generation = release.metadata.generation ?? 0;
  const verdict = combinedVerdict(release);
  const current = (type: string) => {
    const c = release.status?.conditions?.find((x) => x.type === type);
    return c === undefined || c.observedGeneration !== generation ? '-' : `${c.status}/${c.reason}`;
  };
  return [
    release.metadata.uid ?? '',
    generation,
    renderInFlight(release) === undefined ? 'settled' : 'inflight',
    verdict.ready ? 'ready' : verdict.kind,
    current('Applied'),
    current('Healthy'),
  ].join('|');
}

/** The same for a ReleaseSet, from what the relay keeps of it (watch/slim.ts): generation, observed generation, rollout state. */
export function releaseSetFingerprint(
  set: Pick<ReleaseSet, 'metadata' | 'status'> | undefined,
): string | undefined {
  if (set === undefined) return undefined;
  return [
    set.metadata.uid ?? '',
    set.metadata.generation ?? 0,
    set.status?.observedGeneration ?? '-',
    set.status?.rollout?.state ?? '-',
  ].join('|');
}
