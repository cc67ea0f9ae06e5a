/**
 * The reconcile's Events (domain/status/release-events.ts decides them): the
 * target cluster port is wrapped for one run so that every object written by
 * apply and deleted by prune is known, and after the status write the Events
 * are recorded. A failed Event write is logged, never fails the reconcile.
 */
import type { Release } from '../../domain/api/index.ts';
import type { ReconcilePorts, TargetCluster } from '../../domain/reconcile/ports.ts';
import { describeObject } from '../../domain/render/kube-object.ts';
import { driftEvents, reconcileEvents, type EventIntent } from '../../domain/status/release-events.ts';
import type { Condition } from '../../domain/api/common.ts';
import type { ReleaseSlice } from '../../domain/status/slices.ts';
import type { EventRecorder } from '../../adapters/kube/events.ts';
import type { Logger } from '../../platform/logger.ts';

export interface ObservedWrites {
  /** The ports of this run, with the target cluster recording its writes. */
  readonly ports: ReconcilePorts;
  /** Records the Events of this run, after its status write. */
  emit(events: EventRecorder | undefined, release: Release, slice: ReleaseSlice, log: Logger): Promise<void>;
}

function recordingTarget(target: TargetCluster, written: string[], pruned: string[]): TargetCluster {
  const wrapped: TargetCluster = Object.create(target) as TargetCluster;
  wrapped.apply = async (object) => {
    await target.apply(object);
    written.push(describeObject(object));
  };
  wrapped.prune = async (object) => {
    const result = await target.prune(object);
    if (result === 'deleted') pruned.push(describeObject(object));
    return result;
  };
  return wrapped;
}

export function observeWrites(ports: ReconcilePorts): ObservedWrites {
  const written: string[] = [];
  const pruned: string[] = [];
  const cluster = {
    resolve: async (release: Release) =>
      recordingTarget(await ports.cluster.resolve(release), written, pruned),
  };
  return {
    ports: { ...ports, cluster },
    async emit(events, release, slice, log) {
      if (events === undefined) return;
      await emitEvents(events, release, reconcileEvents(release, slice, { written, pruned }), log);
    },
  };
}

export async function emitDriftEvents(
  events: EventRecorder | undefined,
  release: Release,
  inSync: Condition | undefined,
  log: Logger,
): Promise<void> {
  if (events === undefined || inSync === undefined) return;
  await emitEvents(events, release, driftEvents(release, inSync), log);
}

async function emitEvents(
  events: EventRecorder,
  release: Release,
  intents: readonly EventIntent[],
  log: Logger,
): Promise<void> {
  if (intents.length === 0) return;
  const subject = {
    namespace: release.metadata.namespace ?? 'default',
    name: release.metadata.name ?? '',
    uid: release.metadata.uid,
  };
  const failed = await events.record(subject, intents);
  for (const error of failed) log.warn('an Event could not be written', { error: error.message });
}
