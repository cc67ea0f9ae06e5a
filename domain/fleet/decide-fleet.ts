/**
 * The ReleaseSet step function: a pure function of (set with its status, Clusters, the source as
 * resolved now, the Releases of the namespace, now) to the next status, the child writes, when to
 * look again and the Events. The runtime does the reads before and the writes after; see
 * domain/fleet/README.md for the contract.
 */
import type { Release } from '../api/objects.ts';
import type { ReleaseSet, ReleaseSetStatus } from '../api/release-set.ts';
import { nextCondition } from '../status/conditions.ts';
import type { EventIntent } from '../status/release-events.ts';
import { advanceRollout, type RolloutOutcome } from './advance-rollout.ts';
import { clusterOfChild } from './child-state.ts';
import {
  failingFields,
  failingNow,
  heldFields,
  clusterCounts,
  releaseConditionCounts,
  stepStatuses,
} from './fleet-status.ts';
import { generateFleet, type ClusterRead, type Generation, type SourceResolution } from './generate-fleet.ts';
import { FleetAnnotation } from './labels.ts';
import { FleetCondition, GeneratedReason } from './reasons.ts';
import { FleetStops, type FleetStopName } from './stops.ts';
import type { ChildWrite } from './writes.ts';

export interface FleetInput {
  /** The ReleaseSet as read (parseReleaseSet), with its status. */
  readonly set: ReleaseSet;
  /** The Clusters of the set's namespace (name, labels, annotations), or why they could not be read. */
  readonly clusters: ClusterRead;
  /** The template's source resolved now (commit, chart version), or why not. */
  readonly source: SourceResolution;
  /** The Releases of the namespace: at least those labelled convoy.dev/release-set=<set> and those named <set>-<cluster>. */
  readonly releases: readonly Release[];
  readonly now: Date;
}

export interface FleetDecision {
  /** The whole status the field manager convoy-releaseset applies (fields left out are removed). */
  readonly status: ReleaseSetStatus;
  /** In order: the batch first, then restores, rollbacks and removals. */
  readonly writes: readonly ChildWrite[];
  /** Look again after this many seconds even if nothing changes; undefined: only on a change. */
  readonly requeueAfterSeconds: number | undefined;
  /** true: a transient stop; the runtime retries with backoff. */
  readonly retry: boolean;
  /** The row of the stop table the reconcile ended at (stops.ts). */
  readonly stop: FleetStopName;
  readonly events: readonly EventIntent[];
}

export function decideFleet(input: FleetInput): FleetDecision {
  const { set, now } = input;
  const previous = set.status;
  const generation = set.metadata.generation ?? 0;
  if (set.metadata.deletionTimestamp !== undefined)
    return {
      status: previous ?? {},
      writes: [],
      requeueAfterSeconds: undefined,
      retry: false,
      stop: 'deleting',
      events: [],
    };
  const identity = {
    name: set.metadata.name,
    namespace: set.metadata.namespace ?? 'default',
    uid: set.metadata.uid ?? '',
  };

  const generated = generateFleet({
    set: identity,
    spec: set.spec,
    status: previous,
    clusters: input.clusters,
    source: input.source,
    releases: input.releases,
  });
  if (!generated.ok) return stopped(set, generated, now, generation);

  const outcome = advanceRollout({
    revision: generated.revision,
    steps: generated.steps,
    members: generated.members,
    rollout: set.spec.rollout,
    previous,
    approval: set.metadata.annotations?.[FleetAnnotation.approve],
    rollbackRequest: set.metadata.annotations?.[FleetAnnotation.rollback],
    now,
  });
  const removals = set.spec.rollout.paused
    ? []
    : removalWrites(generated.removed, set.spec.clusters.onRemoval);
  const stopRow = FleetStops[outcome.stop];
  const generatedMessage =
    `${generated.members.length} child Releases generated at revision ${generated.revision.id}` +
    (generated.missingNames.length > 0
      ? `; spec.clusters.names not found: ${generated.missingNames.slice(0, 10).join(', ')}`
      : '');
  const stamp = { generation, now };
  const conditions = [
    nextCondition(
      previous?.conditions,
      {
        type: FleetCondition.Generated,
        status: 'True',
        reason: GeneratedReason.Generated,
        message: generatedMessage,
      },
      stamp,
    ),
    nextCondition(
      previous?.conditions,
      {
        type: FleetCondition.RolloutSucceeded,
        status: stopRow.status,
        reason: stopRow.reason,
        message: outcome.message,
      },
      stamp,
    ),
  ];
  const lastSucceededRevision = outcome.succeeded ? generated.revision : previous?.lastSucceededRevision;
  const status: ReleaseSetStatus = {
    observedGeneration: generation,
    revision: generated.revision,
    ...(lastSucceededRevision === undefined ? {} : { lastSucceededRevision }),
    rollout: outcome.rollout,
    clusters: clusterCounts(generated.members),
    releaseConditions: releaseConditionCounts(generated.members),
    steps: stepStatuses(generated.steps, generated.members, outcome),
    ...failingOf(outcome, generated, now),
    ...heldFields(generated.members),
    conditions,
  };
  return {
    status,
    writes: [...outcome.writes, ...removals],
    requeueAfterSeconds: outcome.requeueAfterSeconds,
    retry: stopRow.retry,
    stop: outcome.stop,
    events: [...generatedEvents(previous, GeneratedReason.Generated, generatedMessage), ...outcome.events],
  };
}

function failingOf(
  outcome: RolloutOutcome,
  generated: Extract<Generation, { ok: true }>,
  now: Date,
): Pick<ReleaseSetStatus, 'failing' | 'failingOmitted'> {
  if (outcome.frozenFailing !== undefined) return outcome.frozenFailing;
  return failingFields(outcome.failing ?? failingNow(generated.members, now));
}

function removalWrites(removed: readonly Release[], onRemoval: 'Delete' | 'Orphan'): ChildWrite[] {
  return removed.map((r) => ({
    action: onRemoval === 'Delete' ? 'delete' : 'orphan',
    name: r.metadata.name,
    cluster: clusterOfChild(r),
  }));
}

/** A stop before the rollout: Generated False; everything else of the status stays as it was. */
function stopped(
  set: ReleaseSet,
  generated: Extract<Generation, { ok: false }>,
  now: Date,
  generation: number,
): FleetDecision {
  const previous = set.status;
  const row = FleetStops[generated.stop];
  const stamp = { generation, now };
  const generatedCondition = nextCondition(
    previous?.conditions,
    { type: FleetCondition.Generated, status: 'False', reason: row.reason, message: generated.message },
    stamp,
  );
  const rolloutCondition =
    previous?.conditions?.find((c) => c.type === FleetCondition.RolloutSucceeded) ??
    nextCondition(
      undefined,
      {
        type: FleetCondition.RolloutSucceeded,
        status: 'Unknown',
        reason: row.reason,
        message: `no rollout yet: ${generated.message}`,
      },
      stamp,
    );
  return {
    status: {
      ...previous,
      observedGeneration: generation,
      conditions: [generatedCondition, rolloutCondition],
    },
    writes: [],
    requeueAfterSeconds: undefined,
    retry: row.retry,
    stop: generated.stop,
    events: generatedEvents(previous, row.reason, generated.message),
  };
}

function generatedEvents(
  previous: ReleaseSetStatus | undefined,
  reason: string,
  message: string,
): EventIntent[] {
  const before = previous?.conditions?.find((c) => c.type === FleetCondition.Generated);
  if (before?.reason === reason && (reason === GeneratedReason.Generated || before.message === message))
    return [];
  const type = reason === GeneratedReason.Generated ? 'Normal' : 'Warning';
  return [
    {
      type,
      reason,
      action: 'Generate',
      note: message.length <= 1024 ? message : `${message.slice(0, 1023)}…`,
    },
  ];
}

/**
 * How much of one failed write's error the message shows. The error is the request line and the
 * apiserver's Status message (adapters/kube/http.ts), e.g. for a 403 `PATCH /apis/…/namespaces/<ns>/
 * releases/<child>: HTTP 403 Forbidden: releases.convoy.dev "<child>" is forbidden: User "<user>"
 * cannot patch resource "releases" in API group "convoy.dev" in the namespace "<ns>"`: up to 620
 * characters with 63-character names and a long user (an IAM role's ARN). At 200 it was cut before
 * saying which verb on which resource was refused (test/integration/fleet-bad-input.test.ts).
 */
const WRITE_FAILURE_CHARS = 800;

/**
 * After the runtime's writes: those that failed turn the stop into DeployFailed (RolloutSucceeded
 * False, retried with backoff). Nothing else changes: the children the next reconcile reads say
 * what was written, so the writes that failed are simply made again.
 */
export function withWriteFailures(
  decision: FleetDecision,
  failures: readonly { name: string; message: string }[],
  generation: number,
  now: Date,
): FleetDecision {
  if (failures.length === 0) return decision;
  const shown = failures
    .slice(0, 5)
    .map(
      (f) =>
        `${f.name}: ${f.message.length <= WRITE_FAILURE_CHARS ? f.message : `${f.message.slice(0, WRITE_FAILURE_CHARS - 1)}…`}`,
    )
    .join('; ');
  const message = `writing ${failures.length} of ${decision.writes.length} child Releases failed (retried): ${shown}${failures.length > 5 ? `; and ${failures.length - 5} more` : ''}`;
  const row = FleetStops.writeFailed;
  const conditions = (decision.status.conditions ?? []).map((c) =>
    c.type === FleetCondition.RolloutSucceeded
      ? nextCondition(
          decision.status.conditions,
          { type: c.type, status: row.status, reason: row.reason, message },
          { generation, now },
        )
      : c,
  );
  return {
    ...decision,
    status: { ...decision.status, conditions },
    retry: true,
    requeueAfterSeconds: undefined,
    stop: 'writeFailed',
    events: [
      ...decision.events,
      { type: 'Warning', reason: row.reason, action: 'Apply', note: message.slice(0, 1024) },
    ],
  };
}
