/**
 * The first half of a ReleaseSet reconcile: from the set, the Clusters, the source and the
 * existing Releases to the revision, the steps and one validated child per selected Cluster, or
 * the one stop (Generated False) that prevents it. All or nothing: a single Cluster whose child
 * cannot be generated stops the whole set, so a fleet is never half written.
 */
import type { Release } from '../api/objects.ts';
import type { ReleaseSetSpec, ReleaseSetStatus, Revision } from '../api/release-set.ts';
import { labelValue } from '../api/release-set.ts';
import { childState, holderOf, isChildOf, revisionOfChild, type ChildState } from './child-state.ts';
import { FleetAnnotation } from './labels.ts';
import {
  childName,
  generateChild,
  type ChildObject,
  type PreviousRevision,
  type SetIdentity,
  type SpecCheckCache,
} from './generate-child.ts';
import { checkTemplateSource, resolvedMatches } from './pin-source.ts';
import { revisionOf, templateHash } from './revision.ts';
import { selectClusters, type ClusterFacts } from './select-clusters.ts';
import { selectorProblem } from './selector.ts';
import { hasRollbackPin } from './writes.ts';
import { planSteps, type StepPlan } from './steps.ts';
import type { FleetStopName } from './stops.ts';

export type ClusterRead =
  | { readonly ok: true; readonly clusters: readonly ClusterFacts[] }
  | { readonly ok: false; readonly message: string };

export type SourceResolution =
  | { readonly ok: true; readonly resolved: Revision['source'] }
  | { readonly ok: false; readonly reason: 'SourceNotReady' | 'Unsupported'; readonly message: string };

export interface Member {
  readonly cluster: ClusterFacts;
  readonly step: number;
  readonly name: string;
  readonly desired: ChildObject;
  readonly state: ChildState;
}

export type Generation =
  | {
      readonly ok: true;
      readonly revision: Revision;
      readonly steps: readonly StepPlan[];
      /** Every selected Cluster, in step order, then by name. */
      readonly members: readonly Member[];
      /** Children of this set whose Cluster is no longer selected. */
      readonly removed: readonly Release[];
      readonly missingNames: readonly string[];
    }
  | { readonly ok: false; readonly stop: FleetStopName; readonly message: string };

const ACTIVE_STATES: ReadonlySet<string> = new Set(['Progressing', 'Paused', 'WaitingForApproval']);

export interface GenerationInput {
  readonly set: SetIdentity;
  readonly spec: ReleaseSetSpec;
  readonly status: ReleaseSetStatus | undefined;
  readonly clusters: ClusterRead;
  readonly source: SourceResolution;
  readonly releases: readonly Release[];
}

const stop = (name: FleetStopName, message: string): Generation => ({ ok: false, stop: name, message });

export function generateFleet(input: GenerationInput): Generation {
  const { set, spec } = input;
  if (!labelValue.safeParse(set.name).success)
    return stop(
      'invalidSpec',
      `metadata.name: ${JSON.stringify(set.name)} must be at most 63 characters: children carry it in the label convoy.dev/release-set`,
    );
  for (const [i, override] of (spec.overrides ?? []).entries()) {
    const problem = selectorProblem(override.clusters, `spec.overrides[${i}].clusters`);
    if (problem !== undefined) return stop('invalidSpec', problem);
    if (override.spec['source'] !== undefined)
      return stop(
        'invalidSpec',
        `spec.overrides[${i}].spec.source: an override may not change the source: it is resolved once for the whole rollout`,
      );
  }
  const sourceCheck = checkTemplateSource(spec.template.spec.source);
  if (!sourceCheck.ok)
    return stop(
      sourceCheck.unsupported ? 'sourceUnsupported' : 'invalidSpec',
      `${sourceCheck.field}: ${sourceCheck.message}`,
    );

  if (!input.clusters.ok)
    return stop(
      'clusterReadFailed',
      `reading the Clusters of namespace ${set.namespace} failed: ${input.clusters.message}; nothing is deleted`,
    );
  const selection = selectClusters(spec.clusters, input.clusters.clusters);
  if (!selection.ok) return stop('invalidSpec', selection.message);
  if (selection.clusters.length === 0) {
    const named =
      selection.missingNames.length > 0
        ? `; named but not found: ${selection.missingNames.slice(0, 10).join(', ')}`
        : '';
    return stop(
      'noClusters',
      `spec.clusters selects no Cluster in namespace ${set.namespace}${named}; nothing is written or deleted`,
    );
  }
  const plan = planSteps(spec.rollout, selection.clusters);
  if (!plan.ok) return stop('invalidSpec', `${plan.field}: ${plan.message}`);

  const revision = chooseRevision(spec, input.status, input.source, spec.template.spec.source);
  if (!revision.ok) return revision;

  const byName = new Map(input.releases.map((r) => [r.metadata.name, r]));
  const members: Member[] = [];
  const cache: SpecCheckCache = new Map();
  for (const [stepIndex, step] of plan.steps.entries()) {
    for (const cluster of step.clusters) {
      const name = childName(set.name, cluster.name);
      const existing = byName.get(name);
      if (existing !== undefined && !isChildOf(existing, set))
        return stop(
          'nameConflict',
          `the child of Cluster ${cluster.name} would be Release ${name}, but that name is taken by ${holderOf(existing)}; rename the set or exclude the Cluster (spec.clusters.exclude)`,
        );
      const generated = generateChild(
        set,
        spec,
        cluster,
        revision.revision,
        previousOf(existing, revision.revision.id),
        cache,
      );
      if (!generated.ok)
        return stop(
          'templateFailed',
          `Cluster ${generated.cluster}: ${generated.field}: ${generated.message}`,
        );
      members.push({
        cluster,
        step: stepIndex,
        name,
        desired: generated.child,
        state: childState(existing, revision.revision.id),
      });
    }
  }
  const selected = new Set(members.map((m) => m.name));
  const removed = input.releases.filter(
    (r) => isChildOf(r, set) && !selected.has(r.metadata.name) && r.metadata.deletionTimestamp === undefined,
  );
  return {
    ok: true,
    revision: revision.revision,
    steps: plan.steps,
    members,
    removed,
    missingNames: selection.missingNames,
  };
}

/**
 * The source is resolved once per rollout: while a rollout of the same template is active its
 * revision is kept whatever the source resolves to now; otherwise the fresh resolution counts
 * (a new commit then starts a new rollout).
 */
function chooseRevision(
  spec: ReleaseSetSpec,
  status: ReleaseSetStatus | undefined,
  source: SourceResolution,
  templateSource: Record<string, unknown>,
): { ok: true; revision: Revision } | { ok: false; stop: FleetStopName; message: string } {
  const hash = templateHash(spec);
  const previous = status?.revision;
  if (
    previous !== undefined &&
    previous.templateHash === hash &&
    ACTIVE_STATES.has(status?.rollout?.state ?? '')
  )
    return { ok: true, revision: previous };
  if (!source.ok)
    return {
      ok: false,
      stop: source.reason === 'Unsupported' ? 'sourceUnsupported' : 'sourceNotReady',
      message: `spec.template.spec.source: ${source.message}`,
    };
  if (!resolvedMatches(templateSource, source.resolved))
    return {
      ok: false,
      stop: 'sourceNotReady',
      message:
        'spec.template.spec.source: the resolved source is not of the kind the template names (git or helm)',
    };
  return { ok: true, revision: revisionOf(hash, source.resolved) };
}

/**
 * What a child records about its previous revision when the set moves it to `revisionId`: the
 * revision it was at and, when it was ready there, the render it ran (for a fleet rollback).
 * Kept unchanged while the child stays at `revisionId`.
 */
function previousOf(existing: Release | undefined, revisionId: string): PreviousRevision | undefined {
  if (existing === undefined) return undefined;
  const annotations = existing.metadata.annotations ?? {};
  const at = revisionOfChild(existing);
  if (at === revisionId) {
    const revision = annotations[FleetAnnotation.previousRevision];
    if (revision === undefined) return undefined;
    const renderRef = annotations[FleetAnnotation.previousRender];
    return renderRef === undefined ? { revision } : { revision, renderRef };
  }
  if (at === undefined) return undefined;
  // A child the set rolled back runs the render it was pinned to, of the revision it recorded before.
  if (hasRollbackPin(existing)) {
    const revision = annotations[FleetAnnotation.previousRevision];
    const renderRef = annotations[FleetAnnotation.setPin];
    return revision === undefined
      ? undefined
      : renderRef === undefined
        ? { revision }
        : { revision, renderRef };
  }
  const state = childState(existing, at);
  const renderRef =
    state.kind === 'updated' && state.verdict.ready ? existing.status?.lastSuccessful?.renderRef : undefined;
  return renderRef === undefined ? { revision: at } : { revision: at, renderRef };
}
