import type { Release } from '../api/index.ts';
import type { KubeObject } from '../render/kube-object.ts';
import { resolveRetentionPolicy } from '../store/retention.ts';
import { Annotation, annotationOf, isNewRequest } from './annotations.ts';
import { conclude, concludeProgress, type ReconcileDecision, type ReconcileEnd } from './conclude.ts';
import type { ReconcilePorts, TargetCluster } from './ports.ts';
import { createProgressTracker, type ProgressTracker } from './progress.ts';
import type { AppliedObservation, PinState, PreparedRender, Resolved } from './resolved.ts';

export type ReconcileResult =
  | ({
      kind: 'reconciled';
      renderRef?: string;
      warnings: string[];
      observed?: AppliedObservation;
    } & ReconcileDecision)
  | { kind: 'suspended' };

export type Reconciled = Extract<ReconcileResult, { kind: 'reconciled' }>;

/** One reconcile under way: what every step may read, and what the steps found so far. */
export interface ReconcileRun {
  release: Release;
  ports: ReconcilePorts;
  /** The run's time: status stamps and timeouts are measured from it. */
  now: Date;
  /** A new force-sync request: the dry run is skipped and a finished rollout starts again. */
  forced: boolean;
  /** Filled by the steps as they go, so a stop reports what was found. */
  resolved: Resolved;
  pin: { state?: PinState };
  /** Told to the runtime's log; also added to after the run concluded (retention). */
  warnings: string[];
  /** What every end of the run reports (conclude.ts). */
  base: ReconcileEnd;
}

/** The run's starting point: the clock read once, the force-sync request and the retention policy resolved. */
export function beginRun(release: Release, ports: ReconcilePorts): ReconcileRun {
  const now = ports.now();
  const resolved: Resolved = {};
  const forceRequest = annotationOf(release, Annotation.forceSyncRequestedAt);
  const forced = isNewRequest(forceRequest, release.status?.lastHandledForceSyncAt);
  const base: ReconcileEnd = {
    release,
    now,
    resolved,
    retention: resolveRetentionPolicy(release.spec.retentionPolicy, ports.retentionDefault),
    ...(forced && forceRequest !== undefined ? { handledForceSyncAt: forceRequest } : {}),
  };
  return { release, ports, now, forced, resolved, pin: {}, warnings: [], base };
}

/** The run ends here: what it found and `end` (a stop, or every step done) become status and an Outcome. */
export function finishRun(run: ReconcileRun, end: Partial<ReconcileEnd>): Reconciled {
  return {
    kind: 'reconciled',
    ...(run.resolved.renderRef ? { renderRef: run.resolved.renderRef } : {}),
    warnings: run.warnings,
    ...conclude({ ...run.base, ...(run.pin.state ? { pinState: run.pin.state } : {}), ...end }),
  };
}

/** What the steps after prepareRender share: the run, and the render on its way to the cluster. */
export interface SyncRun {
  release: Release;
  ports: ReconcilePorts;
  now: Date;
  forced: boolean;
  target: TargetCluster;
  objects: KubeObject[];
  renderRef: string;
  /** A Progressing rollout of this same render: the run resumes it rather than starts one. */
  inFlight: boolean;
  /** Progress writes of a long run (progress.ts); undefined when the runtime takes none. */
  tracker: ProgressTracker | undefined;
}

export function syncRunOf(run: ReconcileRun, prepared: PreparedRender): SyncRun {
  const { release, ports, now, forced } = run;
  const { target, objects, renderRef } = prepared;
  const rollout = release.status?.rollout;
  return {
    release,
    ports,
    now,
    forced,
    target,
    objects,
    renderRef,
    inFlight: rollout?.renderRef === renderRef && rollout.state === 'Progressing',
    tracker: progressTracker(run, objects.length),
  };
}

/** The run's progress tracker (progress.ts), when the runtime takes progress writes. */
function progressTracker(run: ReconcileRun, total: number): ProgressTracker | undefined {
  const { release, ports, now, resolved } = run;
  const progress = ports.progress;
  if (progress === undefined) return undefined;
  return createProgressTracker({
    policy: progress.policy,
    clock: () => ports.now().getTime(),
    startedAtMs: now.getTime(),
    total,
    write: (counts) => progress.write(concludeProgress({ release, now, resolved }, counts, ports.now())),
  });
}
