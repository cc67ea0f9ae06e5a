// What convoy's alarms share: construct ids per loop, and the SNS topic their state changes go to.
import type * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as cwActions from 'aws-cdk-lib/aws-cloudwatch-actions';
import type * as sns from 'aws-cdk-lib/aws-sns';
import type { QueueLoop } from '../domain/runtime/queue-message.ts';

/** `reconcile` → `Reconcile`: the prefix of a loop's alarm construct ids. */
export const alarmIdPrefix = (loop: QueueLoop): string => loop.charAt(0).toUpperCase() + loop.slice(1);

/** Sends every alarm's ALARM and OK transitions to the topic, when one is given. */
export function notifyTopic(alarms: readonly cloudwatch.Alarm[], topic: sns.ITopic | undefined): void {
  if (topic === undefined) return;
  const action = new cwActions.SnsAction(topic);
  for (const alarm of alarms) {
    alarm.addAlarmAction(action);
    alarm.addOkAction(action);
  }
}
