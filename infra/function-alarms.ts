// CloudWatch alarms on convoy's four functions (reconcile, drift, health, fleet): any error or throttle in 5 minutes.
import { Duration } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import type * as sns from 'aws-cdk-lib/aws-sns';
import type { Construct } from 'constructs';
import { QUEUE_LOOPS, type QueueLoop } from '../domain/runtime/queue-message.ts';
import { alarmIdPrefix, notifyTopic } from './alarm-actions.ts';

export function functionAlarms(
  scope: Construct,
  props: { functions: Readonly<Record<QueueLoop, lambda.IFunction>>; topic?: sns.ITopic },
): cloudwatch.Alarm[] {
  const alarms: cloudwatch.Alarm[] = [];
  for (const loop of QUEUE_LOOPS) {
    const name = alarmIdPrefix(loop);
    const fn = props.functions[loop];
    alarms.push(
      fn
        .metricErrors({ period: Duration.minutes(5), statistic: cloudwatch.Stats.SUM })
        .createAlarm(scope, `${name}FunctionErrorsAlarm`, {
          alarmDescription: `convoy ${loop} function: invocations failed (a crash, not a Release or ReleaseSet failure: those are reported per record)`,
          threshold: 1,
          evaluationPeriods: 1,
          comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
          treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
        }),
      fn
        .metricThrottles({ period: Duration.minutes(5), statistic: cloudwatch.Stats.SUM })
        .createAlarm(scope, `${name}FunctionThrottlesAlarm`, {
          alarmDescription: `convoy ${loop} function: invocations throttled (account concurrency exhausted)`,
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
