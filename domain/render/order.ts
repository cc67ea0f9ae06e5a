/**
 * The order in which a render is applied: sync wave first (annotation `convoy.dev/sync-wave`,
 * an integer, default 0, negative allowed), then kind order, then namespace and name.
 *
 * Kind order within a wave: Namespace, CustomResourceDefinition, ServiceAccount, RBAC (roles
 * before their bindings), ConfigMap and Secret, Service, workloads, then every other kind. Kinds
 * are matched by group too: a custom resource named `Service` is not a core Service. Strings are
 * compared by code unit (never by locale), so the order is the same on every machine.
 */
import { compareStrings } from './canonical.ts';
import { RenderError } from './errors.ts';
import { apiGroup, describeObject } from './kube-object.ts';
import type { KubeObject } from './kube-object.ts';

export const SYNC_WAVE_ANNOTATION = 'convoy.dev/sync-wave';

const KIND_RANK: ReadonlyMap<string, number> = new Map([
  ['/Namespace', 0],
  ['apiextensions.k8s.io/CustomResourceDefinition', 1],
  ['/ServiceAccount', 2],
  ['rbac.authorization.k8s.io/ClusterRole', 3],
  ['rbac.authorization.k8s.io/Role', 3],
  ['rbac.authorization.k8s.io/ClusterRoleBinding', 4],
  ['rbac.authorization.k8s.io/RoleBinding', 4],
  ['/ConfigMap', 5],
  ['/Secret', 5],
  ['/Service', 6],
  ['apps/Deployment', 7],
  ['apps/StatefulSet', 7],
  ['apps/DaemonSet', 7],
  ['apps/ReplicaSet', 7],
  ['/ReplicationController', 7],
  ['batch/Job', 7],
  ['batch/CronJob', 7],
  ['/Pod', 7],
]);
const OTHER_KINDS_RANK = 8;

/** The rank of the object's kind in the apply order of a wave (lower first). */
export function kindRank(obj: KubeObject): number {
  return KIND_RANK.get(`${apiGroup(obj.apiVersion)}/${obj.kind}`) ?? OTHER_KINDS_RANK;
}

/** The sync wave of an object. Throws `RenderError` naming the object for a non-integer value. */
export function syncWave(obj: KubeObject): number {
  const value = obj.metadata.annotations?.[SYNC_WAVE_ANNOTATION];
  if (value === undefined) return 0;
  const trimmed = value.trim();
  const wave = /^[+-]?\d+$/.test(trimmed) ? Number(trimmed) : Number.NaN;
  if (!Number.isSafeInteger(wave)) {
    const what = describeObject(obj);
    throw new RenderError(
      `${what}: annotation ${SYNC_WAVE_ANNOTATION} is ${JSON.stringify(value)}, not an integer; ` +
        'use a whole number such as "-1", "0" or "2"',
      { object: what },
    );
  }
  return wave === 0 ? 0 : wave; // no -0
}

/** Apply order inside one wave: kind rank, namespace, name, then group and kind as tie-breakers. */
export function compareApplyOrder(a: KubeObject, b: KubeObject): number {
  return (
    kindRank(a) - kindRank(b) ||
    compareStrings(a.metadata.namespace ?? '', b.metadata.namespace ?? '') ||
    compareStrings(a.metadata.name, b.metadata.name) ||
    compareStrings(apiGroup(a.apiVersion), apiGroup(b.apiVersion)) ||
    compareStrings(a.kind, b.kind)
  );
}

export interface Wave {
  wave: number;
  objects: KubeObject[];
}

/** The objects grouped by sync wave, waves ascending, each wave in apply order. */
export function planWaves(objects: readonly KubeObject[]): Wave[] {
  const byWave = new Map<number, KubeObject[]>();
  for (const obj of objects) {
    const wave = syncWave(obj);
    const members = byWave.get(wave);
    if (members) members.push(obj);
    else byWave.set(wave, [obj]);
  }
  return [...byWave.entries()]
    .sort(([a], [b]) => a - b)
    .map(([wave, members]) => ({ wave, objects: members.sort(compareApplyOrder) }));
}
