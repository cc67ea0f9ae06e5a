/**
 * The child Release of one Cluster: the template, the overrides that select the Cluster merged
 * over it in order, `${cluster.…}` substituted, the source pinned to the rollout's revision, and
 * the set's name, labels, annotations and owner reference. Each child is validated with the
 * Release schema (and for unknown fields) before anything is written; a failure names the
 * Cluster and the field.
 *
 * The object returned is what the set applies (field manager convoy-releaseset): only the fields
 * the template sets, never defaults, so fields a user sets on a child (spec.suspend, a pin) stay
 * the user's.
 */
import { objectName, API_GROUP, API_VERSION } from '../api/common.ts';
import { releaseSpecSchema } from '../api/release-spec.ts';
import { LABEL_KEY, LABEL_VALUE, type ReleaseSetSpec, type Revision } from '../api/release-set.ts';
import { FleetAnnotation, FleetLabel, USER_ANNOTATIONS } from './labels.ts';
import { mergePatch } from './merge-patch.ts';
import { pinSource } from './pin-source.ts';
import type { ClusterFacts } from './select-clusters.ts';
import { matchesSelector } from './selector.ts';
import { substituteValue } from './substitute.ts';

export interface SetIdentity {
  readonly name: string;
  readonly namespace: string;
  readonly uid: string;
}

/** The object the set applies for one child (apiVersion, kind, metadata, spec). */
export interface ChildObject {
  readonly apiVersion: string;
  readonly kind: 'Release';
  readonly metadata: {
    readonly name: string;
    readonly namespace: string;
    readonly labels: Record<string, string>;
    readonly annotations: Record<string, string>;
    readonly ownerReferences: readonly OwnerReference[];
  };
  readonly spec: Record<string, unknown>;
}

export interface OwnerReference {
  readonly apiVersion: string;
  readonly kind: string;
  readonly name: string;
  readonly uid: string;
  readonly controller?: boolean;
  readonly blockOwnerDeletion?: boolean;
}

export interface GenerationFailure {
  readonly cluster: string;
  readonly field: string;
  readonly message: string;
}

export type Generated =
  { readonly ok: true; readonly child: ChildObject } | ({ readonly ok: false } & GenerationFailure);

/** The revision a child came from before this one, recorded for a fleet rollback. */
export interface PreviousRevision {
  readonly revision: string;
  readonly renderRef?: string;
}

const OBJECT_NAME = objectName('The name of a child Release.');

export const childName = (set: string, cluster: string): string => `${set}-${cluster}`;

export function ownerReferenceOf(set: SetIdentity): OwnerReference {
  return {
    apiVersion: `${API_GROUP}/${API_VERSION}`,
    kind: 'ReleaseSet',
    name: set.name,
    uid: set.uid,
    controller: true,
    blockOwnerDeletion: true,
  };
}

const RESERVED_LABELS: readonly string[] = Object.values(FleetLabel);
const isReservedAnnotation = (key: string): boolean =>
  (USER_ANNOTATIONS as readonly string[]).includes(key) || key.startsWith('convoy.dev/release-set');

export function generateChild(
  set: SetIdentity,
  spec: Pick<ReleaseSetSpec, 'template' | 'overrides'>,
  cluster: ClusterFacts,
  revision: Revision,
  previous: PreviousRevision | undefined,
  cache?: SpecCheckCache,
): Generated {
  const fail = (field: string, message: string): Generated => ({
    ok: false,
    cluster: cluster.name,
    field,
    message,
  });
  const name = childName(set.name, cluster.name);
  if (!OBJECT_NAME.safeParse(name).success)
    return fail(
      'metadata.name',
      `the child name ${JSON.stringify(name)} (<set>-<cluster>) is not a valid object name (DNS subdomain, at most 253 characters)`,
    );

  // 1. Overrides, in order, over the template.
  let merged: unknown = spec.template.spec;
  const applied: number[] = [];
  for (const [i, override] of (spec.overrides ?? []).entries()) {
    if (!matchesSelector(override.clusters, cluster.labels)) continue;
    merged = mergePatch(merged, override.spec);
    applied.push(i);
  }
  const via = applied.length === 0 ? '' : ` (with spec.overrides[${applied.join('], [')}] applied)`;

  // 2. Substitution in the spec and the metadata.
  const substituted = substituteValue(merged, cluster, 'spec.template.spec');
  if (!substituted.ok) return fail(substituted.field, `${substituted.message}${via}`);
  const meta = substituteValue(spec.template.metadata ?? {}, cluster, 'spec.template.metadata');
  if (!meta.ok) return fail(meta.field, meta.message);
  const metadata = meta.value as { labels?: Record<string, string>; annotations?: Record<string, string> };

  // 3. Metadata: the template's, then the set's own keys.
  for (const key of Object.keys(metadata.labels ?? {})) {
    if (RESERVED_LABELS.includes(key))
      return fail(`spec.template.metadata.labels.${key}`, `${key} is set by the ReleaseSet`);
  }
  for (const key of Object.keys(metadata.annotations ?? {})) {
    if (isReservedAnnotation(key))
      return fail(
        `spec.template.metadata.annotations.${key}`,
        `${key} belongs to the user of a child or to the ReleaseSet, not to the template`,
      );
  }
  const labels = {
    ...metadata.labels,
    [FleetLabel.releaseSet]: set.name,
    [FleetLabel.cluster]: cluster.name,
  };
  for (const [key, value] of Object.entries(labels)) {
    if (key.length > 317 || !LABEL_KEY.test(key))
      return fail(`spec.template.metadata.labels`, `${JSON.stringify(key)} is not a label key`);
    if (!LABEL_VALUE.test(value))
      return fail(
        `spec.template.metadata.labels.${key}`,
        `${JSON.stringify(value)} is not a label value (at most 63 letters, digits, -, _ or .)`,
      );
  }
  const annotations: Record<string, string> = {
    ...metadata.annotations,
    [FleetAnnotation.revision]: revision.id,
  };
  if (previous !== undefined) {
    annotations[FleetAnnotation.previousRevision] = previous.revision;
    if (previous.renderRef !== undefined) annotations[FleetAnnotation.previousRender] = previous.renderRef;
  }

  // 4. The source pinned, the cluster set.
  const body = substituted.value as Record<string, unknown>;
  const childSpec: Record<string, unknown> = {
    ...body,
    cluster: { name: cluster.name },
    source: pinSource((body['source'] ?? {}) as Record<string, unknown>, revision.source),
  };
  const child: ChildObject = {
    apiVersion: `${API_GROUP}/${API_VERSION}`,
    kind: 'Release',
    metadata: {
      name,
      namespace: set.namespace,
      labels,
      annotations,
      ownerReferences: [ownerReferenceOf(set)],
    },
    spec: childSpec,
  };

  // 5. Validated as a Release spec, unknown fields included (the metadata is checked above).
  const problem = specProblem(childSpec, cache);
  if (problem !== undefined)
    return fail(
      templateField(problem.path),
      problem.unknown ? `unknown field${via}` : `${problem.message}${via}`,
    );
  return { ok: true, child };
}

interface SpecProblem {
  readonly path: readonly PropertyKey[];
  readonly message: string;
  readonly unknown: boolean;
}

/**
 * Specs already checked, by their JSON without `cluster` (a Cluster name is always a valid
 * reference): children that differ only in their Cluster are validated once. One per decision.
 */
export type SpecCheckCache = Map<string, SpecProblem | null>;

function specProblem(
  childSpec: Record<string, unknown>,
  cache: SpecCheckCache | undefined,
): SpecProblem | undefined {
  const key = cache === undefined ? '' : JSON.stringify({ ...childSpec, cluster: undefined });
  const known = cache?.get(key);
  if (known !== undefined) return known ?? undefined;
  const parsed = releaseSpecSchema.safeParse(childSpec);
  let problem: SpecProblem | null = null;
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    problem = { path: ['spec', ...issue.path], message: issue.message, unknown: false };
  } else {
    const unknown = unknownField(childSpec, parsed.data, 'spec');
    if (unknown !== undefined)
      problem = { path: unknown.split('.'), message: 'unknown field', unknown: true };
  }
  cache?.set(key, problem);
  return problem ?? undefined;
}

/** spec.x of the child is spec.template.spec.x of the set. */
function templateField(path: readonly PropertyKey[]): string {
  const parts = path.map(String);
  if (parts[0] === 'spec') return ['spec.template.spec', ...parts.slice(1)].join('.');
  return parts.join('.');
}

/** The first field of `input` that parsing dropped (the schema does not know it), as a dotted path. */
export function unknownField(input: unknown, parsed: unknown, path: string): string | undefined {
  if (Array.isArray(input) && Array.isArray(parsed)) {
    for (const [i, item] of input.entries()) {
      const found = unknownField(item, parsed[i], `${path}.${i}`);
      if (found !== undefined) return found;
    }
    return undefined;
  }
  if (input === null || typeof input !== 'object' || parsed === null || typeof parsed !== 'object')
    return undefined;
  for (const [key, value] of Object.entries(input)) {
    if (!Object.hasOwn(parsed, key)) return `${path}.${key}`;
    const found = unknownField(value, (parsed as Record<string, unknown>)[key], `${path}.${key}`);
    if (found !== undefined) return found;
  }
  return undefined;
}
