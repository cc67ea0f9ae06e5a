/**
 * The diff of two renders behind GET …/renders/diff, per object: domain/render/text-diff.ts
 * (jsdiff's Myers diff with caps per object and per request, each cap named in the answer),
 * the same diff `convoy diff` prints. Anyone who may `get` a Release can ask for it, hence the caps.
 *
 * Whether an object changed is known for each of them, so `change`, `unchanged` and the list of
 * objects are complete whatever was capped.
 */
import type { KubeObject } from '../../domain/render/kube-object.ts';
import { DEFAULT_DIFF_LIMITS, diffObjects, type DiffLimits } from '../../domain/render/text-diff.ts';
import { comparable } from '../../views/live-compare.ts';

export type ObjectChange = 'added' | 'removed' | 'changed';

export interface ObjectDiff {
  kind: string;
  namespace: string;
  name: string;
  change: ObjectChange;
  /** The diff lines; for a skipped object one line saying which cap it hit. */
  lines: string[];
  /** Set when the object was not diffed: which cap, e.g. "diff skipped: object over 1 MiB (cap per object)". */
  skipped?: string;
}

export interface RenderDiff {
  objects: ObjectDiff[];
  unchanged: number;
}

const objectKey = (o: KubeObject) =>
  `${o.apiVersion}|${o.kind}|${o.metadata.namespace ?? ''}|${o.metadata.name}`;

/** Objects by apiVersion|kind|namespace|name, as the renders' maps are keyed. */
export function byObjectKey(objects: readonly KubeObject[]): Map<string, KubeObject> {
  return new Map(objects.map((o) => [objectKey(o), o]));
}

/**
 * The per-object diff of two renders (objects keyed by byObjectKey), sorted by key, with the
 * caps of `limits` (domain/render/text-diff.ts diffObjects). Secret values are fingerprints
 * (views/live-compare.ts comparable()). `clock` measures the request's diff time (default performance.now).
 */
export function diffRenders(
  from: ReadonlyMap<string, KubeObject>,
  to: ReadonlyMap<string, KubeObject>,
  limits: DiffLimits = DEFAULT_DIFF_LIMITS,
  clock: () => number = () => performance.now(),
): RenderDiff {
  const keys = [...new Set([...from.keys(), ...to.keys()])].sort();
  const diffs = diffObjects(
    keys.map((k) => ({ before: comparable(from.get(k)), after: comparable(to.get(k)) })),
    limits,
    clock,
  );
  const objects: ObjectDiff[] = [];
  let unchanged = 0;
  diffs.forEach((d, index) => {
    if (d.result === 'unchanged') {
      unchanged++;
      return;
    }
    const a = from.get(keys[index]);
    const b = to.get(keys[index]);
    const o = (b ?? a)!;
    const change: ObjectChange = a === undefined ? 'added' : b === undefined ? 'removed' : 'changed';
    const entry = { kind: o.kind, namespace: o.metadata.namespace ?? '', name: o.metadata.name, change };
    objects.push(
      d.result === 'diffed'
        ? { ...entry, lines: d.lines }
        : { ...entry, lines: [`  ${d.skipped}`], skipped: d.skipped },
    );
  });
  return { objects, unchanged };
}
