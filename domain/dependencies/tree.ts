/**
 * The dependency graph of a Release as a tree for people (`convoy deps`): each dependency with
 * what the Release judges of it (evaluate.ts) and its own verdict line, its dependencies below
 * it, down to MAX_DEPTH. A node seen before is not expanded again (marked `repeated`, or `cycle`
 * when it is on the path from the root); a read the reader may not make is shown as its error.
 */
import type { Dependency } from '../api/depends-on.ts';
import type { Release } from '../api/objects.ts';
import { setVerdict } from '../fleet/set-verdict.ts';
import { combinedVerdict, type Verdict } from '../status/verdict.ts';
import { evaluate } from './decide.ts';
import type { DependencyClass } from './evaluate.ts';
import { dependencyNamespace, MAX_DEPTH } from './graph.ts';
import type { DependencyReads } from './reads.ts';

export interface DependencyNode {
  readonly dependency: Dependency;
  readonly namespace: string;
  /** What the dependent judges of it; `missing`: it does not exist; `unreadable`: the read failed. */
  readonly judged: DependencyClass | 'missing' | 'unreadable';
  /** Its own verdict in one line (or the read's error). */
  readonly verdict: string;
  readonly mark?: 'repeated' | 'cycle' | 'depth';
  readonly children: readonly DependencyNode[];
}

interface Walk {
  readonly reads: DependencyReads;
  readonly seen: Set<string>;
  readonly path: string[];
  readonly line: (verdict: Verdict) => string;
}

/** The tree under `release`; `line` prints a combined verdict (the CLI's verdict-line). */
export async function dependencyTree(
  release: Release,
  reads: DependencyReads,
  line: (verdict: Verdict) => string,
): Promise<DependencyNode[]> {
  const namespace = release.metadata.namespace ?? 'default';
  const root = `Release/${namespace}/${release.metadata.name}`;
  return childrenOf(release, namespace, { reads, seen: new Set([root]), path: [root], line });
}

async function childrenOf(release: Release, namespace: string, walk: Walk): Promise<DependencyNode[]> {
  const upgradeOrdering = release.spec.dependencyPolicy?.upgradeOrdering ?? true;
  const nodes: DependencyNode[] = [];
  for (const dep of release.spec.dependsOn ?? [])
    nodes.push(await nodeOf(dep, namespace, upgradeOrdering, walk));
  return nodes;
}

async function nodeOf(
  dep: Dependency,
  from: string,
  upgradeOrdering: boolean,
  walk: Walk,
): Promise<DependencyNode> {
  const namespace = dependencyNamespace(dep, from);
  const key = `${dep.kind}/${namespace}/${dep.name}`;
  const base = { dependency: dep, namespace, children: [] as DependencyNode[] };
  try {
    const judged = await evaluate(dep, from, walk.reads, upgradeOrdering);
    if (judged === undefined) return { ...base, judged: 'missing', verdict: `${dep.kind} does not exist` };
    const verdict = await ownVerdict(dep, namespace, walk);
    if (walk.path.includes(key)) return { ...base, judged: judged.class, verdict, mark: 'cycle' };
    if (walk.seen.has(key)) return { ...base, judged: judged.class, verdict, mark: 'repeated' };
    walk.seen.add(key);
    if (dep.kind !== 'Release') return { ...base, judged: judged.class, verdict };
    if (walk.path.length > MAX_DEPTH) return { ...base, judged: judged.class, verdict, mark: 'depth' };
    const found = await walk.reads.release(namespace, dep.name);
    if (found === undefined) return { ...base, judged: judged.class, verdict };
    walk.path.push(key);
    const children = await childrenOf(found, namespace, walk);
    walk.path.pop();
    return { ...base, judged: judged.class, verdict, children };
  } catch (error) {
    return { ...base, judged: 'unreadable', verdict: error instanceof Error ? error.message : String(error) };
  }
}

async function ownVerdict(dep: Dependency, namespace: string, walk: Walk): Promise<string> {
  if (dep.kind === 'ReleaseSet') {
    const set = await walk.reads.releaseSet(namespace, dep.name);
    if (set === undefined) return 'ReleaseSet does not exist';
    const verdict = setVerdict(set);
    return `${verdict.word}: ${verdict.message}`;
  }
  const release = await walk.reads.release(namespace, dep.name);
  return release === undefined ? 'Release does not exist' : walk.line(combinedVerdict(release));
}
