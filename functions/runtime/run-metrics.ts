/**
 * CloudWatch metrics of each run, as Embedded Metric Format lines written by Powertools for AWS
 * Lambda Metrics: Lambda sends stdout to CloudWatch Logs, which extracts the metrics.
 *
 * One line per record: Runs (1), Duration (ms), ReceiveCount, LeaseBusy (1 when the record waited
 * for another run's Lease), dimension sets [Loop] and [Loop, Outcome]; the Release key and the
 * reason are metadata (not dimensions: unbounded). Powertools' default `service` dimension is
 * cleared: the namespace already says convoy, and the dimension sets stay the two above.
 *
 * Records run in parallel, so each gets its own Metrics instance (a shared one would mix their
 * dimensions and values); one instance costs ~0.1 ms of CPU, against ~0.3 ms for four
 * singleMetric() lines (docs/decisions.md, "Function logs and metrics").
 */
import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import type { Outcome } from '../../domain/runtime/outcome.ts';
import type { MessageLoop, QueueMessage } from '../../domain/runtime/queue-message.ts';
import type { Logger } from '../../platform/logger.ts';
import type { RecordHandler } from './sqs-batch-handler.ts';

export const EMF_NAMESPACE = 'Convoy';

/** How one run ended, as the metrics see it. */
export interface RunResult {
  readonly loop: MessageLoop;
  readonly message: QueueMessage;
  readonly receiveCount: number;
  readonly outcome: Outcome | 'threw';
  readonly durationMs: number;
}

const outcomeReason = (outcome: Outcome): string | undefined =>
  'reason' in outcome && typeof outcome.reason === 'string' ? outcome.reason : undefined;

/** Writes one EMF line (Powertools prints it on stdout) for a run. */
export function publishRunMetrics(run: RunResult, log: Logger): void {
  const kind = run.outcome === 'threw' ? 'threw' : run.outcome.kind;
  const reason = run.outcome === 'threw' ? undefined : outcomeReason(run.outcome);
  const metrics = new Metrics({ namespace: EMF_NAMESPACE, logger: powertoolsWarnings(log) });
  // Loop is the default dimension, which Powertools puts in every set: the empty set is [Loop],
  // the next [Loop, Outcome]. (Naming Loop in both sets instead makes 2.36 warn on every line that
  // the key is defined twice.)
  metrics.clearDefaultDimensions();
  metrics.setDefaultDimensions({ Loop: run.loop });
  metrics.addDimensions({});
  metrics.addDimensions({ Outcome: kind });
  metrics.addMetric('Runs', MetricUnit.Count, 1);
  metrics.addMetric('Duration', MetricUnit.Milliseconds, run.durationMs);
  metrics.addMetric('ReceiveCount', MetricUnit.Count, run.receiveCount);
  metrics.addMetric('LeaseBusy', MetricUnit.Count, reason?.startsWith('lease held by') === true ? 1 : 0);
  metrics.addMetadata('release', `${run.message.namespace}/${run.message.name}`);
  if (reason !== undefined) metrics.addMetadata('reason', reason.slice(0, 256));
  metrics.publishStoredMetrics();
}

/** Powertools' own warnings (an invalid dimension, a metric CloudWatch would skip) on the record's log. */
function powertoolsWarnings(log: Logger) {
  const line =
    (level: 'debug' | 'info' | 'warn' | 'error') =>
    (...content: unknown[]) =>
      log[level]('metrics', {
        detail: content.map((c) => (typeof c === 'string' ? c : String(c))).join(' '),
      });
  return { debug: line('debug'), info: line('info'), warn: line('warn'), error: line('error') };
}

/** Wraps a record handler so that each record ends with one EMF line; `publish` false (convoy dev, tests): none. */
export function withRunMetrics(
  loop: MessageLoop,
  handler: RecordHandler,
  publish: boolean,
  now: () => number = Date.now,
): RecordHandler {
  if (!publish) return handler;
  return async (message, ctx) => {
    const started = now();
    const publishAs = (outcome: Outcome | 'threw'): void => {
      try {
        publishRunMetrics(
          { loop, message, receiveCount: ctx.receiveCount, outcome, durationMs: now() - started },
          ctx.logger,
        );
      } catch (error) {
        // The run's outcome stands; only its metrics are lost.
        ctx.logger.warn("could not write the run's metrics", {
          error: error instanceof Error ? error : new Error(String(error)),
        });
      }
    };
    try {
      const outcome = await handler(message, ctx);
      publishAs(outcome);
      return outcome;
    } catch (error) {
      publishAs('threw');
      throw error;
    }
  };
}
