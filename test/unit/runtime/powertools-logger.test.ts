import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createPowertoolsLogger, type LambdaContext } from '../../../functions/runtime/powertools-logger.ts';
import { captureProcessOutput } from './process-output.ts';

const context = (awsRequestId: string): LambdaContext => ({
  awsRequestId,
  functionName: 'convoy-reconcile',
  functionVersion: '$LATEST',
  invokedFunctionArn: 'arn:aws:lambda:eu-west-1:123456789012:function:convoy-reconcile',
  memoryLimitInMB: '1024',
});

let output: ReturnType<typeof captureProcessOutput>;
beforeEach(() => {
  // What the Lambda runtime sets on an on-demand container; Powertools reads it at construction.
  vi.stubEnv('AWS_LAMBDA_INITIALIZATION_TYPE', 'on-demand');
  vi.stubEnv(
    '_X_AMZN_TRACE_ID',
    'Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1',
  );
  output = captureProcessOutput();
});
afterEach(() => {
  output.restore();
  vi.unstubAllEnvs();
});

describe('the Powertools logger behind the Logger port', () => {
  it('writes Powertools lines with fn, the call fields and the trace id', () => {
    const logger = createPowertoolsLogger({ fn: 'reconcile', level: 'info' });
    logger.info('applied', { objects: 3 });
    expect(output.json()).toEqual([
      expect.objectContaining({
        level: 'INFO',
        message: 'applied',
        service: 'convoy',
        fn: 'reconcile',
        objects: 3,
        xray_trace_id: '1-5759e988-bd862e3fe1be46a994272793',
      }),
    ]);
  });

  it('a child is a separate logger: its fields go on its lines only, a grandchild adds its own', () => {
    const logger = createPowertoolsLogger({ fn: 'drift', level: 'info' });
    const a = logger.child({ messageId: 'a', loop: 'drift' });
    const b = logger.child({ messageId: 'b', loop: 'drift' });
    const a2 = a.child({ namespace: 'shop', name: 'web' });
    a.info('one');
    b.info('two');
    a2.info('three');
    logger.info('four');
    expect(
      output.json().map(({ message, messageId, namespace }) => ({ message, messageId, namespace })),
    ).toEqual([
      { message: 'one', messageId: 'a', namespace: undefined },
      { message: 'two', messageId: 'b', namespace: undefined },
      { message: 'three', messageId: 'a', namespace: 'shop' },
      { message: 'four', messageId: undefined, namespace: undefined },
    ]);
  });

  it('children made during an invocation carry its context; the cold start is true only on the first', () => {
    const logger = createPowertoolsLogger({ fn: 'reconcile', level: 'info' });
    logger.addContext(context('req-1'));
    logger.child({ messageId: 'm-1' }).child({ name: 'web' }).info('first');
    logger.addContext(context('req-2'));
    logger.child({ messageId: 'm-2' }).child({ name: 'web' }).info('second');
    logger.info('root');
    const [first, second, root] = output.json();
    expect(first).toMatchObject({
      function_request_id: 'req-1',
      cold_start: true,
      function_name: 'convoy-reconcile',
      messageId: 'm-1',
      name: 'web',
    });
    // Powertools alone would say true here: createChild() re-asks each new child's own flag.
    expect(second).toMatchObject({ function_request_id: 'req-2', cold_start: false, messageId: 'm-2' });
    expect(root).toMatchObject({ function_request_id: 'req-2', cold_start: false });
  });

  it('the level comes from CONVOY_LOG_LEVEL and children keep it', () => {
    const quiet = createPowertoolsLogger({ fn: 'health', level: 'warn' });
    quiet.info('hidden');
    quiet.child({ a: 1 }).debug('hidden');
    quiet.child({ a: 1 }).warn('shown');
    const verbose = createPowertoolsLogger({ fn: 'health', level: 'debug' });
    verbose.child({ a: 1 }).debug('shown too');
    expect(output.json().map((l) => [l['level'], l['message']])).toEqual([
      ['WARN', 'shown'],
      ['DEBUG', 'shown too'],
    ]);
  });

  it('errors are name, message, code and cause only — never their other properties — and the stack only at error level', () => {
    const logger = createPowertoolsLogger({ fn: 'reconcile', level: 'info' });
    const leaky = Object.assign(new Error('HTTP-Code: 403'), {
      code: 403,
      body: { data: { token: 'c2VjcmV0' } },
      headers: { authorization: 'Bearer s3cr3t' },
    });
    logger.warn('retrying', { error: new TypeError('apply failed', { cause: leaky }) });
    logger.error('gave up', { error: leaky, nested: { errors: [leaky] } });
    const [warn, error] = output.json();
    expect(warn['error']).toEqual({
      name: 'TypeError',
      message: 'apply failed',
      cause: { name: 'Error', message: 'HTTP-Code: 403', code: 403 },
    });
    expect(error['error']).toMatchObject({
      name: 'Error',
      message: 'HTTP-Code: 403',
      code: 403,
      stack: expect.stringContaining('HTTP-Code: 403') as unknown,
    });
    expect(error['nested']).toEqual({ errors: [{ name: 'Error', message: 'HTTP-Code: 403', code: 403 }] });
    const text = JSON.stringify(output.json());
    expect(text).not.toContain('c2VjcmV0');
    expect(text).not.toContain('s3cr3t');
  });

  it('never throws into its caller', () => {
    const logger = createPowertoolsLogger({ fn: 'reconcile', level: 'info' });
    const hostile = {
      get boom(): never {
        throw new Error('getter failed');
      },
    };
    expect(() => logger.info('odd fields', hostile)).not.toThrow();
    expect(output.json()).toEqual([
      expect.objectContaining({
        level: 'INFO',
        message: 'odd fields',
        logError: expect.stringContaining('getter failed') as unknown,
      }),
    ]);
  });
});
