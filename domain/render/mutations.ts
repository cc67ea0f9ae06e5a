/**
 * Mutations: changes applied to a render after rendering (API.md, "Mutation").
 *
 * Mutations apply in ascending `spec.order`, then name. Within one Mutation:
 *   1. `patches`, in list order, each to every object its target selects (none is fine: a
 *      Mutation selects many Releases, and not every render has every kind);
 *   2. `commonLabels`, added to (and overriding) `metadata.labels` of every object and the pod
 *      template labels of workloads. Selectors (`spec.selector`, Service selectors) are NOT
 *      changed, unlike Kustomize: a Deployment's selector is immutable, so changing it would make
 *      the next apply fail; the existing selector still matches the labelled pods;
 *   3. `commonAnnotations`, added to `metadata.annotations` only (not to pod templates, so an
 *      annotation does not restart pods);
 *   4. `images`, in list order, rewriting `containers`, `initContainers` and
 *      `ephemeralContainers` of pod specs (Pod, Deployment, StatefulSet, DaemonSet, ReplicaSet,
 *      ReplicationController, Job, CronJob).
 *
 * Patch targets: every given field must match (an empty or absent field matches anything);
 * `group`/`version` are the parts of apiVersion; `name`/`namespace` are exact (no regex);
 * `labelSelector` takes the equality form `k=v,k==v,k!=v`.
 */
import { compareStrings } from './canonical.ts';
import { RenderError, UnsupportedRenderError } from './errors.ts';
import { overrideImage } from './image-ref.ts';
import type { ImageOverride } from './image-ref.ts';
import { applyJsonPatch, applyMergePatch, JsonPatchError } from './json-patch.ts';
import { apiGroup, cloneJson, describeObject, isPlainObject, kubeObjectProblem } from './kube-object.ts';
import type { KubeObject } from './kube-object.ts';
import { parseYamlValue } from './manifest-parse.ts';

export interface MutationPatchTarget {
  group?: string;
  version?: string;
  kind?: string;
  name?: string;
  namespace?: string;
  labelSelector?: string;
}

export interface MutationPatch {
  target: MutationPatchTarget;
  type: 'JSON6902' | 'Merge' | 'StrategicMerge';
  /** JSON6902: a list of operations; Merge: a mapping. Either may be given as YAML/JSON text. */
  patch: unknown;
}

/** The parts of a Mutation that applying it needs (structurally a `Mutation`'s name, generation and spec). */
export interface MutationInput {
  name: string;
  generation: number;
  spec: {
    order: number;
    commonLabels?: Readonly<Record<string, string>>;
    commonAnnotations?: Readonly<Record<string, string>>;
    images?: readonly ImageOverride[];
    patches?: readonly MutationPatch[];
  };
}

export interface ResolvedMutation {
  name: string;
  generation: number;
}

export interface MutationResult {
  objects: KubeObject[];
  /** The Mutations applied, in the order they were applied (for `status.lastAttempted.resolvedMutations`). */
  resolved: ResolvedMutation[];
}

type Requirement = { key: string; value: string; equal: boolean };

/** `k=v,k==v,k!=v` → requirements. Set-based forms are refused as unsupported. */
export function parseEqualitySelector(selector: string, mutation: string, field: string): Requirement[] {
  if (selector.trim() === '') return [];
  return selector.split(',').map((part) => {
    const match = /^\s*([A-Za-z0-9][-A-Za-z0-9_./]*)\s*(==|=|!=)\s*([-A-Za-z0-9_.]*)\s*$/.exec(part);
    if (!match) {
      throw new UnsupportedRenderError(
        'SetBasedLabelSelector',
        field,
        `Mutation "${mutation}": ${field} "${selector}" is not supported: use equality terms such as ` +
          '"app=web,tier!=db" (set-based terms with in, notin or a bare key are not supported)',
        { mutation },
      );
    }
    const [, key, op, value] = match as unknown as [string, string, string, string];
    return { key, value, equal: op !== '!=' };
  });
}

function splitApiVersion(apiVersion: string): { group: string; version: string } {
  const slash = apiVersion.lastIndexOf('/');
  return { group: apiGroup(apiVersion), version: slash < 0 ? apiVersion : apiVersion.slice(slash + 1) };
}

function selects(target: MutationPatchTarget, selector: readonly Requirement[], obj: KubeObject): boolean {
  const { group, version } = splitApiVersion(obj.apiVersion);
  const same = (wanted: string | undefined, actual: string) => !wanted || wanted === actual;
  if (!same(target.group, group) || !same(target.version, version) || !same(target.kind, obj.kind))
    return false;
  if (!same(target.name, obj.metadata.name) || !same(target.namespace, obj.metadata.namespace ?? ''))
    return false;
  const labels = obj.metadata.labels ?? {};
  return selector.every(({ key, value, equal }) => (labels[key] === value) === equal);
}

const TEMPLATED_WORKLOADS: ReadonlySet<string> = new Set([
  'apps/Deployment',
  'apps/StatefulSet',
  'apps/DaemonSet',
  'apps/ReplicaSet',
  'batch/Job',
  '/ReplicationController',
]);

/** A CronJob's `spec.jobTemplate`, if it has one. */
function jobTemplate(obj: KubeObject): Record<string, unknown> | undefined {
  if (apiGroup(obj.apiVersion) !== 'batch' || obj.kind !== 'CronJob' || !isPlainObject(obj.spec))
    return undefined;
  return isPlainObject(obj.spec.jobTemplate) ? obj.spec.jobTemplate : undefined;
}

/** The pod templates of a workload: `spec.template`, or a CronJob's `spec.jobTemplate.spec.template`. */
function podTemplates(obj: KubeObject): Record<string, unknown>[] {
  const holder =
    jobTemplate(obj)?.spec ??
    (TEMPLATED_WORKLOADS.has(`${apiGroup(obj.apiVersion)}/${obj.kind}`) ? obj.spec : undefined);
  return isPlainObject(holder) && isPlainObject(holder.template) ? [holder.template] : [];
}

function podSpecs(obj: KubeObject): Record<string, unknown>[] {
  if (apiGroup(obj.apiVersion) === '' && obj.kind === 'Pod') return isPlainObject(obj.spec) ? [obj.spec] : [];
  return podTemplates(obj)
    .map((template) => template.spec)
    .filter((spec): spec is Record<string, unknown> => isPlainObject(spec));
}

function addToStringMap(
  holder: Record<string, unknown>,
  field: string,
  entries: Readonly<Record<string, string>>,
): void {
  const current = holder[field];
  holder[field] = { ...(isPlainObject(current) ? current : {}), ...entries };
}

/** Labels on the object, on a CronJob's job template and on pod templates; never on selectors. */
function addLabels(obj: KubeObject, labels: Readonly<Record<string, string>>): void {
  addToStringMap(obj.metadata, 'labels', labels);
  const templates = podTemplates(obj);
  const jobs = jobTemplate(obj);
  for (const template of jobs ? [jobs, ...templates] : templates) {
    if (!isPlainObject(template.metadata)) template.metadata = {};
    addToStringMap(template.metadata as Record<string, unknown>, 'labels', labels);
  }
}

function overrideImages(obj: KubeObject, images: readonly ImageOverride[]): void {
  for (const spec of podSpecs(obj)) {
    for (const field of ['containers', 'initContainers', 'ephemeralContainers']) {
      const containers = spec[field];
      if (!Array.isArray(containers)) continue;
      for (const container of containers) {
        if (!isPlainObject(container) || typeof container.image !== 'string') continue;
        for (const image of images) container.image = overrideImage(container.image as string, image);
      }
    }
  }
}

function patchValue(mutation: string, index: number, patch: MutationPatch): unknown {
  if (typeof patch.patch !== 'string') return patch.patch;
  try {
    return parseYamlValue(patch.patch, `Mutation "${mutation}" patches[${index}]`);
  } catch (error) {
    throw new RenderError(error instanceof Error ? error.message : String(error), { mutation, cause: error });
  }
}

function applyPatch(
  objects: KubeObject[],
  mutation: string,
  index: number,
  patch: MutationPatch,
): KubeObject[] {
  const field = `spec.patches[${index}]`;
  if (patch.type === 'StrategicMerge') {
    throw new UnsupportedRenderError(
      'StrategicMergePatch',
      `${field}.type`,
      `Mutation "${mutation}" ${field}: type StrategicMerge is not supported; use Merge (JSON merge patch) or JSON6902`,
      { mutation },
    );
  }
  const selector = parseEqualitySelector(
    patch.target.labelSelector ?? '',
    mutation,
    `${field}.target.labelSelector`,
  );
  const value = patchValue(mutation, index, patch);
  if (patch.type === 'Merge' && !isPlainObject(value)) {
    throw new RenderError(`Mutation "${mutation}" ${field}: a Merge patch must be a mapping`, { mutation });
  }
  return objects.map((obj) => {
    if (!selects(patch.target, selector, obj)) return obj;
    const what = describeObject(obj);
    const where = `Mutation "${mutation}" ${field} (${patch.type}) on ${what}`;
    let result: unknown;
    try {
      result = patch.type === 'Merge' ? applyMergePatch(obj, value) : applyJsonPatch(obj, value);
    } catch (error) {
      if (!(error instanceof JsonPatchError)) throw error;
      throw new RenderError(`${where}: ${error.message}`, { mutation, object: what, cause: error });
    }
    const problem = kubeObjectProblem(result);
    if (problem !== undefined) {
      throw new RenderError(`${where}: the patched object is no longer valid: ${problem}`, {
        mutation,
        object: what,
      });
    }
    return result as KubeObject;
  });
}

function compareMutations(a: MutationInput, b: MutationInput): number {
  return a.spec.order - b.spec.order || compareStrings(a.name, b.name);
}

/** Applies `mutations` to `objects`; returns new objects and never changes its inputs. */
export function applyMutations(
  objects: readonly KubeObject[],
  mutations: readonly MutationInput[],
): MutationResult {
  const ordered = [...mutations].sort(compareMutations);
  let current = objects.map((obj) => cloneJson(obj));
  for (const { name, spec } of ordered) {
    (spec.patches ?? []).forEach((patch, index) => {
      current = applyPatch(current, name, index, patch);
    });
    for (const obj of current) {
      if (spec.commonLabels) addLabels(obj, spec.commonLabels);
      if (spec.commonAnnotations) addToStringMap(obj.metadata, 'annotations', spec.commonAnnotations);
      if (spec.images && spec.images.length > 0) overrideImages(obj, spec.images);
    }
  }
  return { objects: current, resolved: ordered.map(({ name, generation }) => ({ name, generation })) };
}
