import { describe, expect, it } from 'vitest';
import { done } from '../../../domain/runtime/outcome.ts';
import { queueMessageBody } from '../../../domain/runtime/queue-message.ts';
import { lambdaEntry, xrayTraceId } from '../../../functions/runtime/lambda-entry.ts';
import { createLogger } from '../../../functions/runtime/logger.ts';
import { createSqsBatchHandler } from '../../../functions/runtime/sqs-batch-handler.ts';
import type { SQSEvent } from '../../../functions/runtime/sqs-event.ts';

const event = (): SQSEvent => ({
  Records: [
    {
      messageId: 'm-1',
      receiptHandle: 'rh-1',
      body: queueMessageBody({ v: 1, loop: 'health', namespace: 'shop', name: 'web', uid: 'u', cause: 'timer', sentAt: '2026-12-01T12:00:00Z' }),
      attributes: { ApproximateReceiveCount: '1', SentTimestamp: '0', SenderId: 'x', ApproximateFirstReceiveTimestamp: '0' },
      messageAttributes: {},
      md5OfBody: '',
      eventSource: 'aws:sqs',
      eventSourceARN: 'arn:aws:sqs:eu-west-1:123456789012:convoy-health',
      awsRegion: 'eu-west-1',
    },
  ],
});

describe('the Lambda entry point', () => {
  it('reads the Root of the X-Ray trace header', () => {
    expect(xrayTraceId('Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1')).toBe('1-5759e988-bd862e3fe1be46a994272793');
    expect(xrayTraceId('Parent=53995c3f42cd8ad8')).toBeUndefined();
    expect(xrayTraceId(undefined)).toBeUndefined();
  });

  it('builds the container once, and every log line carries the request id, the cold start and the trace id', async () => {
    const lines: Record<string, unknown>[] = [];
    let built = 0;
    const env = { _X_AMZN_TRACE_ID: 'Root=1-abc-def;Sampled=1' };
    const handler = lambdaEntry(() => {
      built += 1;
      const logger = createLogger({ base: { fn: 'health' }, write: (l) => lines.push(JSON.parse(l) as Record<string, unknown>) });
      return Promise.resolve(createSqsBatchHandler({ loop: 'health', handleRecord: () => Promise.resolve(done()), sqs: { changeVisibility: () => Promise.resolve() }, logger }));
    }, env);
    expect(await handler(event(), { awsRequestId: 'req-1' })).toEqual({ batchItemFailures: [] });
    expect(await handler(event(), { awsRequestId: 'req-2' })).toEqual({ batchItemFailures: [] });
    expect(built).toBe(1);
    const outcomes = lines.filter((l) => l['name'] === 'web');
    expect(outcomes.length).toBeGreaterThanOrEqual(2);
    expect(outcomes[0]).toMatchObject({ fn: 'health', requestId: 'req-1', coldStart: true, xrayTraceId: '1-abc-def', messageId: 'm-1' });
    expect(outcomes.at(-1)).toMatchObject({ requestId: 'req-2', coldStart: false });
  });
});
