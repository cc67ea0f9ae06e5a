/**
 * What the reconcile's Events are about (domain/status/release-events.ts decides them): the
 * target cluster port is wrapped for one run so that every object written by apply and deleted
 * by prune is known; the run's decision carries the Events, which the runtime writes before the
 * status write (functions/runtime/run-commit.ts). A failed Event write is logged, never fails the
 * reconcile.
 */
import type { Release } from '../../domain/api/index.ts';
import type { ReconcilePorts, TargetCluster } from '../../domain/reconcile/ports.ts';
import { describeObject } from '../../domain/render/kube-object.ts';
import { reconcileEvents, type EventIntent } from '../../domain/status/release-events.ts';
import type { ReleaseSlice } from '../../domain/status/slices.ts';

export interface ObservedWrites {
  /** The ports of this run, with the target cluster recording its writes. */
  readonly ports: ReconcilePorts;
  /** The Events of this run, given the slice it writes. */
  events(release: Release, slice: ReleaseSlice): EventIntent[];
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
    events: (release, slice) => reconcileEvents(release, slice, { written, pruned }),
  };
}
