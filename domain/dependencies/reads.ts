/**
 * What deciding on dependencies reads: Releases, ReleaseSets and the labels of a namespace, by
 * name, with the functions' identity. `memoReads` keeps each answer for one run, so a graph read
 * for its cycles and then for its verdicts costs one request an object.
 */
import type { Release } from '../api/objects.ts';
import type { ReleaseSet } from '../api/release-set.ts';

export interface DependencyReads {
  /** undefined: there is no such Release. */
  release(namespace: string, name: string): Promise<Release | undefined>;
  /** undefined: there is no such ReleaseSet. */
  releaseSet(namespace: string, name: string): Promise<ReleaseSet | undefined>;
  /** The namespace's labels; undefined when the namespace does not exist. */
  namespaceLabels(namespace: string): Promise<Readonly<Record<string, string>> | undefined>;
}

export function memoReads(reads: DependencyReads): DependencyReads {
  const memo = new Map<string, Promise<unknown>>();
  const once = <T>(key: string, read: () => Promise<T>): Promise<T> => {
    let hit = memo.get(key) as Promise<T> | undefined;
    if (hit === undefined) memo.set(key, (hit = read()));
    return hit;
  };
  return {
    release: (ns, name) => once(`Release/${ns}/${name}`, () => reads.release(ns, name)),
    releaseSet: (ns, name) => once(`ReleaseSet/${ns}/${name}`, () => reads.releaseSet(ns, name)),
    namespaceLabels: (ns) => once(`Namespace/${ns}`, () => reads.namespaceLabels(ns)),
  };
}
