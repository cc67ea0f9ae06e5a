// CloudWatch alarms on convoy's four queues (reconcile, drift, health, fleet): work piling up, and anything dead-lettered.
import { Duration } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import type * as sns from 'aws-cdk-lib/aws-sns';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import type { Construct } from 'constructs';
import { QUEUE_LOOPS, type QueueLoop } from '../domain/runtime/queue-message.ts';
import { alarmIdPrefix, notifyTopic } from './alarm-actions.ts';

export interface QueueAlarmProps {
  queues: Readonly<Record<QueueLoop, sqs.IQueue>>;
  dlqs: Readonly<Record<QueueLoop, sqs.IQueue>>;
  maxReceiveCount: number;
  ageThreshold: Duration;
  /** Alarm and OK actions of every alarm go here. */
  topic?: sns.ITopic;
}

export function queueAlarms(scope: Construct, props: QueueAlarmProps): cloudwatch.Alarm[] {
  const alarms: cloudwatch.Alarm[] = [];
  for (const loop of QUEUE_LOOPS) {
    const name = alarmIdPrefix(loop);
    alarms.push(
      props.queues[loop]
        .metricApproximateAgeOfOldestMessage({
          period: Duration.minutes(5),
          statistic: cloudwatch.Stats.MAXIMUM,
        })
        .createAlarm(scope, `${name}QueueAgeAlarm`, {
          alarmDescription: `convoy ${loop} queue: oldest message older than ${props.ageThreshold.toHumanString()} (functions failing, throttled, or maxConcurrency too low)`,
          threshold: props.ageThreshold.toSeconds(),
          evaluationPeriods: 2,
          comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
          treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
        }),
      props.dlqs[loop]
        .metricApproximateNumberOfMessagesVisible({
          period: Duration.minutes(5),
          statistic: cloudwatch.Stats.MAXIMUM,
        })
        .createAlarm(scope, `${name}DeadLetterAlarm`, {
          alarmDescription: `convoy ${loop} dead-letter queue holds messages: invalid bodies, or Releases (ReleaseSets on the fleet queue) that failed ${props.maxReceiveCount} receives`,
          threshold: 1,
          evaluationPeriods: 1,
          comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
          treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
        }),
    );
  }
  notifyTopic(alarms, props.topic);
  return alarms;
}
