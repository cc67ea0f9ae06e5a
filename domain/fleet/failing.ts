/**
 * status.failing: the first 20 failing Clusters (in step order, then by name), each with the
 * signal its combined verdict names first, that condition's reason, a message of at most 256
 * characters and since when; failingOmitted counts the rest. Bounded whatever the fleet size.
 */
import type { FailingCluster } from '../api/release-set.ts';
import type { Release } from '../api/objects.ts';
import type { Verdict } from '../status/verdict.ts';
import { toRfc3339 } from '../status/conditions.ts';
import { conditionOfSignal } from './child-state.ts';

export const MAX_FAILING = 20;
export const MAX_FAILING_MESSAGE = 256;

export interface FailingInput {
  readonly cluster: string;
  readonly release: Release;
  readonly verdict: Verdict;
  /** Set when the Cluster failed because its step passed its deadline. */
  readonly timedOut?: string;
  readonly now: Date;
}

export function cutMessage(message: string, max = MAX_FAILING_MESSAGE): string {
  return message.length <= max ? message : `${message.slice(0, max - 1)}…`;
}

export function failingEntry(input: FailingInput): FailingCluster {
  const { verdict, release } = input;
  const signal = verdict.ready ? 'Ready' : verdict.signal;
  const condition = verdict.ready ? undefined : conditionOfSignal(release, verdict.signal);
  const reason = input.timedOut !== undefined ? 'StepTimeout' : (condition?.reason ?? signal);
  const message = input.timedOut !== undefined ? `${input.timedOut}: ${verdict.message}` : verdict.message;
  const since = input.timedOut === undefined ? condition?.lastTransitionTime : undefined;
  return {
    cluster: input.cluster,
    release: release.metadata.name,
    signal,
    reason,
    message: cutMessage(message),
    since: since ?? toRfc3339(input.now),
  };
}

export function failingList(entries: readonly FailingCluster[]): {
  failing: FailingCluster[];
  failingOmitted: number;
} {
  return {
    failing: entries.slice(0, MAX_FAILING),
    failingOmitted: Math.max(0, entries.length - MAX_FAILING),
  };
}
