/**
 * The Notification's one condition, Delivering (docs/notifications.md): True while every
 * destination's last attempt delivered, False with reason DestinationFailing naming the first
 * destination whose last attempt failed (its index and type, the object, and the failure: never
 * a URL or token, which the adapters leave out of their reasons).
 */
import type { Condition } from '../api/common.ts';
import type { NotificationStatus } from '../api/notification.ts';
import { nextCondition } from '../status/conditions.ts';

export const DeliveringReason = {
  Delivered: 'Delivered',
  DestinationFailing: 'DestinationFailing',
} as const;

export function deliveringCondition(
  status: NotificationStatus,
  stamp: { generation: number; now: Date },
): Condition {
  for (const object of status.objects ?? []) {
    for (const delivery of object.deliveries ?? []) {
      if (delivery.lastError === undefined) continue;
      return nextCondition(
        status.conditions,
        {
          type: 'Delivering',
          status: 'False',
          reason: DeliveringReason.DestinationFailing,
          message: `spec.to[${delivery.to}] (${delivery.type}) failed for ${object.kind} ${object.name}: ${delivery.lastError}`,
        },
        stamp,
      );
    }
  }
  return nextCondition(
    status.conditions,
    {
      type: 'Delivering',
      status: 'True',
      reason: DeliveringReason.Delivered,
      message: 'every destination took the last transition it was sent',
    },
    stamp,
  );
}

/** The status with its Delivering condition brought up to date. */
export function withDelivering(
  status: NotificationStatus,
  stamp: { generation: number; now: Date },
): NotificationStatus {
  const condition = deliveringCondition(status, stamp);
  const others = (status.conditions ?? []).filter((c) => c.type !== 'Delivering');
  return { ...status, observedGeneration: stamp.generation, conditions: [...others, condition] };
}
