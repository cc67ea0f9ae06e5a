import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { done } from '../../../domain/runtime/outcome.ts';
import { queueMessageBody } from '../../../domain/runtime/queue-message.ts';
import { lambdaEntry, type LambdaContext } from '../../../functions/runtime/lambda-entry.ts';
import { createPowertoolsLogger } from '../../../functions/runtime/powertools-logger.ts';
import { createSqsBatchHandler } from '../../../functions/runtime/sqs-batch-handler.ts';
import type { SQSEvent, SQSRecord } from '../../../functions/runtime/sqs-event.ts';
import { captureProcessOutput } from './process-output.ts';

const record = (messageId: string, name: string): SQSRecord => ({
  messageId,
  receiptHandle: `rh-${messageId}`,
  body: queueMessageBody({
    v: 1,
    loop: 'health',
    namespace: 'shop',
    name,
    uid: 'u',
    cause: 'timer',
    sentAt: '2026-12-01T12:00:00Z',
  }),
  attributes: {
    ApproximateReceiveCount: '1',
    SentTimestamp: '0',
    SenderId: 'x',
    ApproximateFirstReceiveTimestamp: '0',
  },
  messageAttributes: {},
  md5OfBody: '',
  eventSource: 'aws:sqs',
  eventSourceARN: 'arn:aws:sqs:eu-west-1:123456789012:convoy-health',
  awsRegion: 'eu-west-1',
});
const event = (): SQSEvent => ({ Records: [record('m-1', 'web'), record('m-2', 'api')] });
const context = (awsRequestId: string): LambdaContext => ({
  awsRequestId,
  functionName: 'convoy-health',
  functionVersion: '$LATEST',
  invokedFunctionArn: 'arn:aws:lambda:eu-west-1:123456789012:function:convoy-health',
  memoryLimitInMB: '512',
});

let output: ReturnType<typeof captureProcessOutput>;
beforeEach(() => {
  vi.stubEnv('AWS_LAMBDA_INITIALIZATION_TYPE', 'on-demand');
  output = captureProcessOutput();
});
afterEach(() => {
  output.restore();
  vi.unstubAllEnvs();
});

describe('the Lambda entry point', () => {
  it('builds the container once; every line of an invocation, from children made during it, carries its request id, cold start and trace id', async () => {
    let built = 0;
    const handler = lambdaEntry(() => {
      built += 1;
      const logger = createPowertoolsLogger({ fn: 'health', level: 'info' });
      const batch = createSqsBatchHandler({
        loop: 'health',
        // A record handler's own child, as health-record.ts makes one per observation.
        handleRecord: (message, ctx) => {
          ctx.logger.child({ renderRef: `r-${message.name}` }).info('assessed');
          return Promise.resolve(done());
        },
        sqs: { changeVisibility: () => Promise.resolve() },
        logger,
      });
      return Promise.resolve({ batch, logger });
    });

    // The Lambda runtime sets the trace header per invocation.
    vi.stubEnv(
      '_X_AMZN_TRACE_ID',
      'Root=1-aaaaaaaa-111111111111111111111111;Parent=53995c3f42cd8ad8;Sampled=1',
    );
    expect(await handler(event(), context('req-1'))).toEqual({ batchItemFailures: [] });
    const first = output.json();
    vi.stubEnv(
      '_X_AMZN_TRACE_ID',
      'Root=1-bbbbbbbb-222222222222222222222222;Parent=53995c3f42cd8ad8;Sampled=1',
    );
    expect(await handler(event(), context('req-2'))).toEqual({ batchItemFailures: [] });
    const second = output.json().slice(first.length);
    expect(built).toBe(1);

    for (const [lines, requestId, coldStart, traceId] of [
      [first, 'req-1', true, '1-aaaaaaaa-111111111111111111111111'],
      [second, 'req-2', false, '1-bbbbbbbb-222222222222222222222222'],
    ] as const) {
      // Per record: the handler's child line and the batch handler's outcome line.
      expect(lines).toHaveLength(4);
      for (const line of lines) {
        expect(line).toMatchObject({
          fn: 'health',
          function_request_id: requestId,
          cold_start: coldStart,
          xray_trace_id: traceId,
          function_name: 'convoy-health',
        });
      }
      for (const [messageId, name] of [
        ['m-1', 'web'],
        ['m-2', 'api'],
      ]) {
        // Each record's fields stay on its own lines, though the records ran in parallel.
        expect(lines).toContainEqual(
          expect.objectContaining({
            message: 'assessed',
            messageId,
            namespace: 'shop',
            name,
            renderRef: `r-${name}`,
          }),
        );
        expect(lines).toContainEqual(
          expect.objectContaining({
            message: 'done',
            messageId,
            loop: 'health',
            namespace: 'shop',
            name,
            outcome: 'done',
            durationMs: expect.any(Number) as unknown,
          }),
        );
      }
    }
  });

  it('a container that failed to build is built again on the next invocation', async () => {
    let attempts = 0;
    const handler = lambdaEntry(() => {
      attempts += 1;
      if (attempts === 1) return Promise.reject(new Error('CONVOY_NAMESPACE: required'));
      const logger = createPowertoolsLogger({ fn: 'health', level: 'info' });
      return Promise.resolve({
        batch: createSqsBatchHandler({
          loop: 'health',
          handleRecord: () => Promise.resolve(done()),
          sqs: { changeVisibility: () => Promise.resolve() },
          logger,
        }),
        logger,
      });
    });
    await expect(handler(event(), context('req-1'))).rejects.toThrow('CONVOY_NAMESPACE: required');
    expect(await handler(event(), context('req-2'))).toEqual({ batchItemFailures: [] });
    expect(attempts).toBe(2);
  });
});
