import type { Condition } from '../api/common.ts';

export type ConditionStatus = Condition['status'];

export interface ConditionInput {
  type: string;
  status: ConditionStatus;
  reason: string;
  message: string;
}

/**
 * Builds the condition to write, given the one currently on the object.
 * observedGeneration is always stamped; lastTransitionTime changes only when
 * status, reason or message change, so re-applying an unchanged condition is a no-op.
 */
export function nextCondition(
  previous: readonly Condition[] | undefined,
  input: ConditionInput,
  stamp: { generation: number; now: Date },
): Condition {
  const before = previous?.find((c) => c.type === input.type);
  const message = truncateMessage(input.message);
  const unchanged =
    before !== undefined &&
    before.status === input.status &&
    before.reason === input.reason &&
    before.message === message;
  return {
    type: input.type,
    status: input.status,
    reason: input.reason,
    message,
    lastTransitionTime: unchanged ? before.lastTransitionTime : toRfc3339(stamp.now),
    observedGeneration: stamp.generation,
  };
}

export function findCondition(
  conditions: readonly Condition[] | undefined,
  type: string,
): Condition | undefined {
  return conditions?.find((c) => c.type === type);
}

const MAX_MESSAGE = 32768;

function truncateMessage(message: string): string {
  return message.length <= MAX_MESSAGE ? message : `${message.slice(0, MAX_MESSAGE - 15)} …(truncated)`;
}

/** Kubernetes timestamps have second precision; anything finer makes every write look like a change. */
export function toRfc3339(date: Date): string {
  return new Date(Math.floor(date.getTime() / 1000) * 1000).toISOString().replace('.000Z', 'Z');
}
