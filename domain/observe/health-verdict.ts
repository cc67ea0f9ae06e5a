/**
 * The health loop's ladder and its ONE mapping from what it found to the
 * Healthy condition, status.healthSummary and an Outcome.
 *
 * | Healthy | Reason          | When                                                      |
 * |---------|-----------------|-----------------------------------------------------------|
 * | True    | NotConfigured   | no spec.healthAssessment (whatever else holds)            |
 * | Unknown | Pending         | the current render is not applied yet                     |
 * | Unknown | ClusterNotReady | the target cluster could not be read                      |
 * | Unknown | Pending         | the applied render is not in the render store             |
 * | Unknown | Pending         | the Release CRD refused the status computed (convoy's bug) |
 * | False   | Degraded        | a check of spec.healthAssessment.checks does not compile  |
 * | True    | Healthy         | every object of the current render is Healthy             |
 * | False   | Progressing     | worst object Progressing (within progressDeadline)        |
 * | False   | Degraded        | worst object Degraded (or Progressing past the deadline)  |
 * | False   | Missing         | worst object Missing                                      |
 * | Unknown | Unknown         | worst object Unknown (the rules could not decide)         |
 *
 * Decisions the texts leave open:
 * - The current render is status.lastAttempted.renderRef; when the last
 *   reconcile stopped before rendering (no renderRef), it is
 *   lastSuccessful.renderRef — a failed source fetch does not make the
 *   running render Pending. It is applied when it equals
 *   lastSuccessful.renderRef.
 * - NotConfigured still assesses the applied render and writes
 *   healthSummary (a dashboard shows health either way); only the condition
 *   ignores it, and nothing is rechecked every 10 s.
 * - An aggregate of Unknown (e.g. a Pod whose node was lost) is status
 *   Unknown with reason `Unknown` (the state's name, as for the other
 *   states): it is neither converging (Progressing) nor failed, and an Argo
 *   CD user reads it as "Unknown". It is not rechecked every 10 s.
 * - Progressing for longer than progressDeadline becomes Degraded, counted
 *   from status.rollout.startedAt when the rollout is of the current render,
 *   else from lastSuccessful.attemptedAt. The message names the start time,
 *   not the elapsed time, so an unchanged cluster yields an unchanged
 *   condition (lastTransitionTime does not move).
 * - healthSummary is written after each assessment. When the loop could not
 *   assess (cluster or store), the previous summary is kept if it is of the
 *   current render (its checkedAt tells its age), else removed; Pending
 *   removes it.
 * - Outcome: requeueAfter 10 s while Progressing (and configured), else stop.
 */
import type { Release } from '../api/objects.ts';
import {
  aggregate,
  assessObject,
  compileChecks,
  formatDuration,
  summarize,
  type CompiledChecks,
  type HealthEntry,
  type HealthState,
  type HealthSummary,
  type ObjectHealth,
} from '../health/index.ts';
import type { KubeObject } from '../render/kube-object.ts';
import { parseDuration } from '../runtime/duration.ts';
import { requeueAfter, stop, type Outcome } from '../runtime/outcome.ts';
import { nextCondition, toRfc3339, type ConditionInput } from '../status/conditions.ts';
import { ConditionType, HealthyReason } from '../status/reasons.ts';
import type { HealthSlice } from '../status/slices.ts';

/** Healthy's reason when the worst object is Unknown (see the header). */
export const HEALTH_UNKNOWN_REASON = 'Unknown';
/** The longest a Progressing assessment waits before it is checked again. */
export const HEALTH_RECHECK_MS = 10_000;
/** How many not-healthy objects the condition message names (the summary lists up to 20). */
export const MAX_UNHEALTHY_NAMED = 5;
const DEFAULT_PROGRESS_DEADLINE_MS = 10 * 60_000;

/** What the health loop found. */
export type HealthObservation =
  /** Nothing was read: healthRenderRef() named no render. */
  | { readonly kind: 'notAssessed' }
  | {
      readonly kind: 'assessed';
      readonly renderRef: string;
      /** In render order; `live` undefined: the object does not exist (or its kind is not served). */
      readonly objects: readonly { readonly object: KubeObject; readonly live: object | undefined }[];
    }
  | { readonly kind: 'clusterNotReady'; readonly renderRef: string; readonly message: string }
  | { readonly kind: 'renderUnavailable'; readonly renderRef: string; readonly message: string };

export interface HealthVerdict {
  readonly condition: ConditionInput;
  /** undefined: the field is removed. */
  readonly healthSummary: HealthSummary | undefined;
  readonly outcome: Outcome;
  /** The aggregate of the assessed objects, when they were assessed. */
  readonly aggregate?: HealthState;
}

/** The render whose objects the health loop reads: the current render, when it is applied. */
export function healthRenderRef(release: Release): string | undefined {
  const current = currentRenderRef(release);
  return current !== undefined && current === release.status?.lastSuccessful?.renderRef ? current : undefined;
}

/**
 * status.lastAttempted.renderRef, or lastSuccessful's when the last reconcile
 * stopped before rendering — or after a rollback, when the last healthy render
 * (lastSuccessful) is the one that runs on the cluster.
 */
export function currentRenderRef(release: Release): string | undefined {
  const rolledBack = release.status?.rollout?.state === 'RolledBack';
  if (rolledBack) return release.status?.lastSuccessful?.renderRef;
  return release.status?.lastAttempted?.renderRef ?? release.status?.lastSuccessful?.renderRef;
}

const condition = (status: ConditionInput['status'], reason: string, message: string): ConditionInput => ({
  type: ConditionType.Healthy,
  status,
  reason,
  message,
});

export function healthVerdict(release: Release, observation: HealthObservation, now: Date): HealthVerdict {
  const assessment = observation.kind === 'assessed' ? assess(release, observation, now) : undefined;
  const current = currentRenderRef(release);
  const previous = release.status?.healthSummary;
  const keptSummary =
    previous !== undefined && previous.renderRef === current ? (previous as HealthSummary) : undefined;
  const summary = assessment?.summary ?? (observation.kind === 'notAssessed' ? undefined : keptSummary);

  if (release.spec.healthAssessment === undefined) {
    return {
      condition: condition(
        'True',
        HealthyReason.NotConfigured,
        'spec.healthAssessment is not set, so Healthy does not wait for the objects; status.healthSummary still reports their health',
      ),
      healthSummary: healthRenderRef(release) === undefined ? undefined : summary,
      outcome: stop(),
      ...(assessment ? { aggregate: assessment.state } : {}),
    };
  }

  const applied = healthRenderRef(release);
  if (applied === undefined || observation.kind === 'notAssessed') {
    return {
      condition: condition('Unknown', HealthyReason.Pending, pendingMessage(release)),
      healthSummary: undefined,
      outcome: stop(),
    };
  }
  if (observation.kind === 'clusterNotReady') {
    return {
      condition: condition('Unknown', HealthyReason.ClusterNotReady, observation.message),
      healthSummary: summary,
      outcome: stop(),
    };
  }
  if (observation.kind === 'renderUnavailable') {
    return {
      condition: condition('Unknown', HealthyReason.Pending, observation.message),
      healthSummary: summary,
      outcome: stop(),
    };
  }

  const result = assessment as Assessment;
  if (result.checkErrors.length > 0) {
    return {
      condition: condition(
        'False',
        HealthyReason.Degraded,
        `${result.checkErrors.map((e) => `spec.healthAssessment.${e}`).join('; ')}; fix the check — objects of its kind are assessed by the built-in rules meanwhile`,
      ),
      healthSummary: result.summary,
      outcome: stop(),
      aggregate: result.state,
    };
  }
  return {
    condition: aggregateCondition(result),
    healthSummary: result.summary,
    outcome:
      result.state === 'Progressing' ? requeueAfter(HEALTH_RECHECK_MS, 'objects are Progressing') : stop(),
    aggregate: result.state,
  };
}

/**
 * What is written instead of a health status the Release CRD refused (convoy's own fault: the
 * status writer found a value the schema refuses, or the API server answered 422/400). Healthy is
 * Unknown/Pending naming the refusal, without healthSummary (where values from the cluster and
 * from checks end up), and the run stops: a retry would compute the same status; the next
 * interval tick or change assesses again.
 */
export function healthRefusedVerdict(refusal: string): HealthVerdict {
  return {
    condition: condition(
      'Unknown',
      HealthyReason.Pending,
      `the health status convoy computed was refused, so health is not reported (${refusal}); it is assessed again at the next interval or change`,
    ),
    healthSummary: undefined,
    outcome: stop(),
  };
}

function pendingMessage(release: Release): string {
  const status = release.status;
  const current = currentRenderRef(release);
  const applied = status?.lastSuccessful?.renderRef;
  if (current === undefined) return 'no render was made yet; health is assessed once a render is applied';
  const appliedNote =
    applied === undefined ? 'no render was applied yet' : `the applied render is ${applied}`;
  return `render ${current} (status.lastAttempted.renderRef) is not applied yet (${appliedNote}); health is assessed once it is applied`;
}

interface Assessment {
  renderRef: string;
  state: HealthState;
  summary: HealthSummary;
  checkErrors: string[];
}

function assess(
  release: Release,
  observation: Extract<HealthObservation, { kind: 'assessed' }>,
  now: Date,
): Assessment {
  const spec = release.spec.healthAssessment;
  const { compiled, errors } = compileChecks(spec?.checks ?? []);
  const deadlineMs = progressDeadlineMs(spec?.progressDeadline);
  const since = progressingSince(release, observation.renderRef);
  const entries: HealthEntry[] = observation.objects.map(({ object, live }) => ({
    ref: {
      apiVersion: object.apiVersion,
      kind: object.kind,
      ...(object.metadata.namespace !== undefined ? { namespace: object.metadata.namespace } : {}),
      name: object.metadata.name,
    },
    health: assessWithDeadline(live, compiled, now, since, deadlineMs),
  }));
  return {
    renderRef: observation.renderRef,
    state: aggregate(entries.map((e) => e.health.state)),
    summary: summarize(entries, observation.renderRef, toRfc3339(now)),
    checkErrors: errors.map((e) => e.message),
  };
}

/**
 * assessObject, with the progress deadline applied here so the message
 * names when Progressing started rather than how long ago (stable between runs).
 */
function assessWithDeadline(
  live: object | undefined,
  checks: CompiledChecks,
  now: Date,
  since: Date | undefined,
  deadlineMs: number | undefined,
): ObjectHealth {
  const health = assessObject(live, { checks, now });
  if (health.state !== 'Progressing' || since === undefined || deadlineMs === undefined) return health;
  if (now.getTime() - since.getTime() <= deadlineMs) return health;
  return {
    state: 'Degraded',
    message: `${health.message} — Progressing since ${toRfc3339(since)}, past the progress deadline of ${formatDuration(deadlineMs)}`,
  };
}

function progressDeadlineMs(text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const parsed = parseDuration(text);
  return parsed.ok ? parsed.ms : DEFAULT_PROGRESS_DEADLINE_MS;
}

/** Since when the render's objects may have been converging. */
export function progressingSince(release: Release, renderRef: string): Date | undefined {
  const status = release.status;
  const startedAt = status?.rollout?.renderRef === renderRef ? status.rollout.startedAt : undefined;
  const text = startedAt ?? status?.lastSuccessful?.attemptedAt;
  if (text === undefined) return undefined;
  const ms = Date.parse(text);
  return Number.isNaN(ms) ? undefined : new Date(ms);
}

const REASON_OF_STATE: Record<
  Exclude<HealthState, 'Healthy'>,
  { status: ConditionInput['status']; reason: string }
> = {
  Progressing: { status: 'False', reason: HealthyReason.Progressing },
  Degraded: { status: 'False', reason: HealthyReason.Degraded },
  Missing: { status: 'False', reason: HealthyReason.Missing },
  Unknown: { status: 'Unknown', reason: HEALTH_UNKNOWN_REASON },
};

function aggregateCondition({ state, summary, renderRef }: Assessment): ConditionInput {
  if (state === 'Healthy') {
    return condition(
      'True',
      HealthyReason.Healthy,
      `all ${summary.total} objects of render ${renderRef} are healthy`,
    );
  }
  const { status, reason } = REASON_OF_STATE[state];
  const counts = (
    [
      ['degraded', summary.degraded],
      ['missing', summary.missing],
      ['progressing', summary.progressing],
      ['unknown', summary.unknown],
    ] as const
  )
    .filter(([, n]) => n > 0)
    .map(([name, n]) => `${n} ${name}`)
    .join(', ');
  const notHealthy = summary.total - summary.healthy;
  const named = summary.objects
    .slice(0, MAX_UNHEALTHY_NAMED)
    .map(
      (o) =>
        `${o.kind} ${o.namespace !== undefined ? `${o.namespace}/` : ''}${o.name} is ${o.state}: ${o.message}`,
    );
  const more =
    notHealthy > named.length ? `; and ${notHealthy - named.length} more (see status.healthSummary)` : '';
  return condition(
    status,
    reason,
    `${counts} of ${summary.total} objects of render ${renderRef}: ${named.join('; ')}${more}`,
  );
}

/** The convoy-health slice: healthSummary and the Healthy condition. */
export function healthSlice(release: Release, verdict: HealthVerdict, now: Date): HealthSlice {
  return {
    healthSummary: verdict.healthSummary,
    conditions: [
      nextCondition(release.status?.conditions, verdict.condition, {
        generation: release.metadata.generation ?? 0,
        now,
      }),
    ],
  };
}
