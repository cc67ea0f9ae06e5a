/**
 * The dependency graph reachable from one Release, walked through spec.dependsOn of Releases
 * (a ReleaseSet is a leaf: its children are Releases of their own). Looks for a way back to the
 * Release — a cycle that would make every member wait for ever — within bounds: at most
 * MAX_DEPTH edges from the Release and MAX_NODES objects read, past which the graph is refused
 * as too deep (a chain of 100 is a mistake or an attack, not a bootstrap order). Edges another
 * namespace does not allow (tenancy.ts) are not followed: the dependent stops on them anyway.
 */
import type { Dependency } from '../api/depends-on.ts';
import type { Release } from '../api/objects.ts';
import type { DependencyReads } from './reads.ts';
import { dependableFrom } from './tenancy.ts';

export const MAX_DEPTH = 32;
export const MAX_NODES = 256;

export type GraphCheck =
  | { readonly kind: 'acyclic' }
  /** The members in order, from the Release back to it: `a → b → a`. */
  | { readonly kind: 'cycle'; readonly members: readonly string[] }
  | { readonly kind: 'tooDeep'; readonly message: string };

/** `namespace/name` of a Release, the graph's node key. */
export const nodeKey = (namespace: string, name: string) => `${namespace}/${name}`;

/** The namespace a dependency names: its own, or the dependent's. */
export function dependencyNamespace(dep: Pick<Dependency, 'namespace'>, fromNamespace: string): string {
  return dep.namespace ?? fromNamespace;
}

interface Walk {
  readonly reads: DependencyReads;
  readonly start: string;
  readonly visited: Set<string>;
  readonly path: string[];
}

export async function checkGraph(release: Release, reads: DependencyReads): Promise<GraphCheck> {
  const namespace = release.metadata.namespace ?? 'default';
  const start = nodeKey(namespace, release.metadata.name);
  const walk: Walk = { reads, start, visited: new Set([start]), path: [start] };
  return visit(walk, release, namespace);
}

async function visit(walk: Walk, release: Release, namespace: string): Promise<GraphCheck> {
  for (const dep of release.spec.dependsOn ?? []) {
    if (dep.kind !== 'Release') continue;
    const depNamespace = dependencyNamespace(dep, namespace);
    const key = nodeKey(depNamespace, dep.name);
    if (key === walk.start) return { kind: 'cycle', members: [...walk.path, key] };
    if (walk.visited.has(key)) continue;
    if (walk.path.length > MAX_DEPTH)
      return {
        kind: 'tooDeep',
        message: `the dependency chain ${shortPath([...walk.path, key])} is deeper than ${MAX_DEPTH} Releases`,
      };
    if (walk.visited.size >= MAX_NODES)
      return {
        kind: 'tooDeep',
        message: `more than ${MAX_NODES} Releases are reachable through spec.dependsOn from ${walk.start}`,
      };
    walk.visited.add(key);
    if (depNamespace !== namespace) {
      const labels = await walk.reads.namespaceLabels(depNamespace);
      if (!dependableFrom(namespace, depNamespace, labels)) continue;
    }
    const next = await walk.reads.release(depNamespace, dep.name);
    if (next === undefined) continue;
    walk.path.push(key);
    const found = await visit(walk, next, depNamespace);
    walk.path.pop();
    if (found.kind !== 'acyclic') return found;
  }
  return { kind: 'acyclic' };
}

/** A long path as its first three and last two members. */
function shortPath(path: readonly string[]): string {
  if (path.length <= 6) return path.join(' → ');
  return [...path.slice(0, 3), `… (${path.length - 5} more)`, ...path.slice(-2)].join(' → ');
}
