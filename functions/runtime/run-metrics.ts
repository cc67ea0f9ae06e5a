/**
 * CloudWatch metrics of each run, as Embedded Metric Format lines
 * (https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/CloudWatch_Embedded_Metric_Format_Specification.html):
 * Lambda sends stdout to CloudWatch Logs, which extracts the metrics. No
 * dependency (Powertools Metrics was not added: see the issue-12 report).
 *
 * One line per record: Runs (1), Duration (ms), ReceiveCount, LeaseBusy (1 when
 * the record waited for another run's Lease), dimensions Loop and Loop+Outcome;
 * the Release key and reason are properties (not dimensions: unbounded).
 */
import type { Outcome } from '../../domain/runtime/outcome.ts';
import type { Loop, QueueMessage } from '../../domain/runtime/queue-message.ts';
import type { RecordHandler } from './sqs-batch-handler.ts';

export const EMF_NAMESPACE = 'Convoy';

export interface EmfMetric {
  readonly name: string;
  readonly unit: 'Count' | 'Milliseconds';
  readonly value: number;
}

export interface EmfInput {
  readonly timestamp: number;
  readonly dimensions: Readonly<Record<string, string>>;
  readonly dimensionSets: readonly (readonly string[])[];
  readonly metrics: readonly EmfMetric[];
  readonly properties?: Readonly<Record<string, unknown>>;
}

/** One EMF log line (a JSON object, no newline). */
export function emfLine(input: EmfInput): string {
  const root: Record<string, unknown> = {
    ...input.properties,
    ...input.dimensions,
    ...Object.fromEntries(input.metrics.map((m) => [m.name, m.value])),
    _aws: {
      Timestamp: input.timestamp,
      CloudWatchMetrics: [
        {
          Namespace: EMF_NAMESPACE,
          Dimensions: input.dimensionSets.map((set) => [...set]),
          Metrics: input.metrics.map((m) => ({ Name: m.name, Unit: m.unit })),
        },
      ],
    },
  };
  return JSON.stringify(root);
}

const outcomeReason = (outcome: Outcome): string | undefined =>
  'reason' in outcome && typeof outcome.reason === 'string' ? outcome.reason : undefined;

export function runMetricsLine(
  loop: Loop,
  message: QueueMessage,
  receiveCount: number,
  outcome: Outcome | 'threw',
  durationMs: number,
  at: number,
): string {
  const kind = outcome === 'threw' ? 'threw' : outcome.kind;
  const reason = outcome === 'threw' ? undefined : outcomeReason(outcome);
  const leaseBusy = reason !== undefined && reason.startsWith('lease held by') ? 1 : 0;
  return emfLine({
    timestamp: at,
    dimensions: { Loop: loop, Outcome: kind },
    dimensionSets: [['Loop'], ['Loop', 'Outcome']],
    metrics: [
      { name: 'Runs', unit: 'Count', value: 1 },
      { name: 'Duration', unit: 'Milliseconds', value: durationMs },
      { name: 'ReceiveCount', unit: 'Count', value: receiveCount },
      { name: 'LeaseBusy', unit: 'Count', value: leaseBusy },
    ],
    properties: {
      release: `${message.namespace}/${message.name}`,
      ...(reason === undefined ? {} : { reason: reason.slice(0, 256) }),
    },
  });
}

/** Wraps a record handler so that each record ends with one EMF line; `write` undefined: nothing is written. */
export function withRunMetrics(
  loop: Loop,
  handler: RecordHandler,
  write: ((line: string) => void) | undefined,
  now: () => number = Date.now,
): RecordHandler {
  if (write === undefined) return handler;
  return async (message, ctx) => {
    const started = now();
    try {
      const outcome = await handler(message, ctx);
      write(runMetricsLine(loop, message, ctx.receiveCount, outcome, now() - started, now()));
      return outcome;
    } catch (error) {
      write(runMetricsLine(loop, message, ctx.receiveCount, 'threw', now() - started, now()));
      throw error;
    }
  };
}
