// Checks of a synthesized Convoy template shared by the unit test (the construct from source) and
// the package test (the construct from the installed tarball).
import { latestNodeRuntime } from '../../infra/node-runtime.ts';

export interface CfnTemplate {
  Resources: Record<
    string,
    { Type: string; Properties?: Record<string, unknown>; Metadata?: Record<string, unknown> }
  >;
}

type Statement = { Effect?: string; Action?: unknown; Resource?: unknown };

const list = (v: unknown): unknown[] => (Array.isArray(v) ? v : v === undefined ? [] : [v]);

/** A resource is a wildcard when it is "*" or a string/Fn::Join ending in "*". */
function isWildcard(resource: unknown): boolean {
  if (typeof resource === 'string') return resource.includes('*');
  if (typeof resource === 'object' && resource !== null && 'Fn::Join' in resource) {
    const parts = (resource as { 'Fn::Join': [string, unknown[]] })['Fn::Join'][1];
    return parts.some((p) => typeof p === 'string' && p.includes('*'));
  }
  return false;
}

function suppressionReasons(metadata: Record<string, unknown> | undefined): { id: string; reason: string }[] {
  const nag = metadata?.['cdk_nag'] as { rules_to_suppress?: { id: string; reason: string }[] } | undefined;
  return nag?.rules_to_suppress ?? [];
}

/** convoy's functions: reconcile, drift, health and fleet (ReleaseSets). */
export const CONVOY_FUNCTION_COUNT = 4;

/**
 * Problems found (empty: the template is fine): every function on `expectedRuntime` (the newest
 * Node.js runtime the synthesizing aws-cdk-lib knows, infra/node-runtime.ts) with a DLQ'd queue
 * feeding it through ReportBatchItemFailures, alarms on its errors and throttles, on its queue's
 * oldest message and on its dead-letter queue's depth, and no wildcard resource in an IAM policy
 * without a written IAM5 suppression reason.
 */
export function checkTemplate(
  template: CfnTemplate,
  expectedRuntime: string = latestNodeRuntime().name,
): string[] {
  const problems: string[] = [];
  const resources = Object.entries(template.Resources);
  const of = (type: string) => resources.filter(([, r]) => r.Type === type);
  const functions = of('AWS::Lambda::Function').filter(([, r]) =>
    String((r.Properties?.['Description'] as string | undefined) ?? '').startsWith('convoy '),
  );
  if (functions.length !== CONVOY_FUNCTION_COUNT)
    problems.push(`expected ${CONVOY_FUNCTION_COUNT} convoy functions, found ${functions.length}`);
  const alarmOn = (metric: string, resourceId: string) =>
    of('AWS::CloudWatch::Alarm').some(
      ([, a]) =>
        a.Properties?.['MetricName'] === metric &&
        JSON.stringify(a.Properties?.['Dimensions']).includes(`"${resourceId}"`),
    );
  for (const [id, fn] of functions) {
    const runtime = String(fn.Properties?.['Runtime']);
    if (runtime !== expectedRuntime) problems.push(`${id}: runtime ${runtime}, not ${expectedRuntime}`);
    const mappings = of('AWS::Lambda::EventSourceMapping').filter(([, m]) =>
      JSON.stringify(m.Properties?.['FunctionName']).includes(id),
    );
    if (mappings.length !== 1) problems.push(`${id}: ${mappings.length} event source mappings`);
    for (const [mid, m] of mappings) {
      if (!list(m.Properties?.['FunctionResponseTypes']).includes('ReportBatchItemFailures'))
        problems.push(`${mid}: no ReportBatchItemFailures`);
      const queueRef = JSON.stringify(m.Properties?.['EventSourceArn']);
      const queue = resources.find(([qid]) => queueRef.includes(`"${qid}"`));
      const redrive = queue?.[1].Properties?.['RedrivePolicy'] as
        { deadLetterTargetArn?: { 'Fn::GetAtt'?: [string, string] } } | undefined;
      if (!redrive) problems.push(`${id}: its queue has no dead-letter queue`);
      if (queue !== undefined && !alarmOn('ApproximateAgeOfOldestMessage', queue[0]))
        problems.push(`${id}: no age alarm on its queue ${queue[0]}`);
      const dlq = redrive?.deadLetterTargetArn?.['Fn::GetAtt']?.[0];
      if (dlq !== undefined && !alarmOn('ApproximateNumberOfMessagesVisible', dlq))
        problems.push(`${id}: no depth alarm on its dead-letter queue ${dlq}`);
    }
    const alarmsOf = (metric: string) =>
      of('AWS::CloudWatch::Alarm').filter(
        ([, a]) =>
          a.Properties?.['MetricName'] === metric &&
          JSON.stringify(a.Properties?.['Dimensions']).includes(id),
      );
    for (const metric of ['Errors', 'Throttles'])
      if (alarmsOf(metric).length === 0) problems.push(`${id}: no ${metric} alarm`);
  }
  for (const [id, policy] of [...of('AWS::IAM::Policy'), ...of('AWS::IAM::ManagedPolicy')]) {
    const statements = list(
      (policy.Properties?.['PolicyDocument'] as { Statement?: unknown } | undefined)?.Statement,
    ) as Statement[];
    const wild = statements.filter((s) => list(s.Resource).some(isWildcard));
    if (wild.length === 0) continue;
    const reasons = suppressionReasons(policy.Metadata).filter(
      (r) => r.id.includes('AwsSolutions-IAM5') && r.reason.trim().length >= 20,
    );
    if (reasons.length === 0)
      problems.push(
        `${id}: wildcard resource (${JSON.stringify(wild.map((s) => s.Action))}) without a written AwsSolutions-IAM5 suppression reason`,
      );
  }
  return problems;
}
