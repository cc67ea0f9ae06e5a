/**
 * Which Clusters a ReleaseSet selects: those spec.clusters.selector matches, plus those
 * spec.clusters.names names, minus spec.clusters.exclude; sorted by name.
 */
import type { ReleaseSetSpec } from '../api/release-set.ts';
import { matchesSelector, selectorProblem, type Labels } from './selector.ts';

/** What the step function needs of a Cluster: its name and metadata, nothing of its credentials. */
export interface ClusterFacts {
  readonly name: string;
  readonly labels: Labels;
  readonly annotations: Labels;
}

export type Selection =
  | {
      readonly ok: true;
      readonly clusters: readonly ClusterFacts[];
      readonly missingNames: readonly string[];
    }
  | { readonly ok: false; readonly message: string };

export function selectClusters(
  spec: ReleaseSetSpec['clusters'],
  clusters: readonly ClusterFacts[],
): Selection {
  if (spec.selector !== undefined) {
    const problem = selectorProblem(spec.selector, 'spec.clusters.selector');
    if (problem !== undefined) return { ok: false, message: problem };
  }
  const names = new Set(spec.names ?? []);
  const exclude = new Set(spec.exclude ?? []);
  const selected = clusters.filter(
    (c) =>
      !exclude.has(c.name) &&
      (names.has(c.name) || (spec.selector !== undefined && matchesSelector(spec.selector, c.labels))),
  );
  const known = new Set(clusters.map((c) => c.name));
  const missingNames = [...names].filter((n) => !known.has(n) && !exclude.has(n)).sort();
  return {
    ok: true,
    clusters: [...selected].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)),
    missingNames,
  };
}
