/**
 * The functions' EMF lines against the Embedded Metric Format specification
 * (CloudWatch_Embedded_Metric_Format_Specification): its JSON schema, written
 * here from the spec's text, plus the rules the schema cannot say (every
 * dimension key and metric name is a root member of the right type). The lines
 * are what Powertools Metrics actually prints on stdout, captured.
 */
import { Ajv } from 'ajv';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Outcome } from '../../../domain/runtime/outcome.ts';
import type { QueueMessage } from '../../../domain/runtime/queue-message.ts';
import { createLogger } from '../../../platform/logger.ts';
import { withRunMetrics } from '../../../functions/runtime/run-metrics.ts';
import type { RecordContext } from '../../../functions/runtime/sqs-batch-handler.ts';
import { captureProcessOutput } from './process-output.ts';

const UNITS = [
  'Seconds',
  'Microseconds',
  'Milliseconds',
  'Bytes',
  'Kilobytes',
  'Megabytes',
  'Gigabytes',
  'Terabytes',
  'Bits',
  'Kilobits',
  'Megabits',
  'Gigabits',
  'Terabits',
  'Percent',
  'Count',
  'Bytes/Second',
  'Kilobytes/Second',
  'Megabytes/Second',
  'Gigabytes/Second',
  'Terabytes/Second',
  'Bits/Second',
  'Kilobits/Second',
  'Megabits/Second',
  'Gigabits/Second',
  'Terabits/Second',
  'Count/Second',
  'None',
];

const EMF_SCHEMA = {
  type: 'object',
  required: ['_aws'],
  properties: {
    _aws: {
      type: 'object',
      required: ['Timestamp', 'CloudWatchMetrics'],
      properties: {
        Timestamp: { type: 'integer', minimum: 0 },
        CloudWatchMetrics: {
          type: 'array',
          items: {
            type: 'object',
            required: ['Namespace', 'Dimensions', 'Metrics'],
            properties: {
              Namespace: { type: 'string', minLength: 1, maxLength: 1024 },
              Dimensions: {
                type: 'array',
                items: {
                  type: 'array',
                  maxItems: 30,
                  items: { type: 'string', minLength: 1, maxLength: 250 },
                },
              },
              Metrics: {
                type: 'array',
                maxItems: 100,
                items: {
                  type: 'object',
                  required: ['Name'],
                  properties: {
                    Name: { type: 'string', minLength: 1, maxLength: 1024 },
                    Unit: { type: 'string', enum: UNITS },
                    StorageResolution: { type: 'integer', enum: [1, 60] },
                  },
                },
              },
            },
          },
        },
      },
    },
  },
} as const;

const validate = new Ajv({ allErrors: true }).compile(EMF_SCHEMA);

interface Directive {
  Dimensions: string[][];
  Metrics: { Name: string }[];
}

/** The spec's member rules: dimension values are strings, metric values numbers (or arrays of ≤ 100 numbers). */
function memberErrors(doc: Record<string, unknown>): string[] {
  const errors: string[] = [];
  for (const d of (doc['_aws'] as { CloudWatchMetrics: Directive[] }).CloudWatchMetrics) {
    for (const key of d.Dimensions.flat())
      if (typeof doc[key] !== 'string') errors.push(`dimension ${key} is not a string member`);
    for (const m of d.Metrics) {
      const v = doc[m.Name];
      const ok =
        typeof v === 'number' ||
        (Array.isArray(v) && v.length <= 100 && v.every((x) => typeof x === 'number'));
      if (!ok) errors.push(`metric ${m.Name} is not a number member`);
    }
  }
  return errors;
}

const message: QueueMessage = {
  v: 1,
  loop: 'reconcile',
  namespace: 'team-a',
  name: 'web',
  uid: 'u',
  cause: 'test',
  sentAt: '2026-12-01T10:00:00Z',
};

let output: ReturnType<typeof captureProcessOutput>;
beforeEach(() => {
  output = captureProcessOutput();
});
afterEach(() => {
  output.restore();
});

/** The EMF documents Powertools printed (the record logger's lines are captured separately). */
const emfDocs = () => output.json().filter((doc) => '_aws' in doc);

function recordContext(receiveCount: number) {
  const logLines: Record<string, unknown>[] = [];
  const logger = createLogger({ write: (l) => logLines.push(JSON.parse(l) as Record<string, unknown>) });
  return { ctx: { receiveCount, logger, messageId: 'm', record: {} } as unknown as RecordContext, logLines };
}

async function run(loop: QueueMessage['loop'], outcome: Outcome | Error, receiveCount = 3) {
  const { ctx, logLines } = recordContext(receiveCount);
  let t = 1_000;
  const handler = withRunMetrics(
    loop,
    () => (outcome instanceof Error ? Promise.reject(outcome) : Promise.resolve(outcome)),
    true,
    () => (t += 5),
  );
  const result = await handler({ ...message, loop }, ctx).then(
    (value) => ({ value }),
    (error: unknown) => ({ error }),
  );
  return { result, docs: emfDocs(), logLines };
}

describe('EMF from each function (Powertools Metrics output)', () => {
  it.each(['reconcile', 'drift', 'health'] as const)(
    'a %s run line is valid EMF with Runs, Duration, ReceiveCount, LeaseBusy',
    async (loop) => {
      const { docs, logLines } = await run(loop, { kind: 'done' });
      expect(docs).toHaveLength(1);
      const doc = docs[0];
      expect(validate(doc), JSON.stringify(validate.errors)).toBe(true);
      expect(memberErrors(doc)).toEqual([]);
      expect(doc).toMatchObject({
        Loop: loop,
        Outcome: 'done',
        Runs: 1,
        Duration: 5,
        ReceiveCount: 3,
        LeaseBusy: 0,
        release: 'team-a/web',
        _aws: {
          CloudWatchMetrics: [
            {
              Namespace: 'Convoy',
              Dimensions: [['Loop'], ['Loop', 'Outcome']],
              Metrics: [
                { Name: 'Runs', Unit: 'Count' },
                { Name: 'Duration', Unit: 'Milliseconds' },
                { Name: 'ReceiveCount', Unit: 'Count' },
                { Name: 'LeaseBusy', Unit: 'Count' },
              ],
            },
          ],
        },
      });
      // No `service` dimension, and Powertools had nothing to warn about.
      expect(doc).not.toHaveProperty('service');
      expect(logLines).toEqual([]);
    },
  );

  it('counts a busy Lease and keeps the reason as metadata, not a dimension', async () => {
    const { docs } = await run(
      'drift',
      {
        kind: 'requeueAfter',
        delayMs: 1000,
        reason: 'lease held by reconcile-x until …',
        asNewMessage: true,
      },
      1,
    );
    const doc = docs[0];
    expect(validate(doc)).toBe(true);
    expect(memberErrors(doc)).toEqual([]);
    expect(doc).toMatchObject({
      Outcome: 'requeueAfter',
      LeaseBusy: 1,
      ReceiveCount: 1,
      reason: 'lease held by reconcile-x until …',
    });
    const dimensions = (
      doc['_aws'] as { CloudWatchMetrics: Directive[] }
    ).CloudWatchMetrics[0].Dimensions.flat();
    expect(dimensions).not.toContain('reason');
    expect(dimensions).not.toContain('release');
  });

  it('a run that throws is counted (Outcome threw) and the error goes on', async () => {
    const { result, docs } = await run('health', new Error('boom'));
    expect(result).toEqual({ error: new Error('boom') });
    expect(validate(docs[0])).toBe(true);
    expect(docs[0]['Outcome']).toBe('threw');
  });

  it('records running in parallel each get their own line with their own values', async () => {
    const { ctx } = recordContext(2);
    const handler = withRunMetrics(
      'reconcile',
      async (m) => {
        await new Promise((resolve) => setTimeout(resolve, m.name === 'slow' ? 20 : 1));
        return m.name === 'slow' ? { kind: 'stop' as const } : { kind: 'done' as const };
      },
      true,
    );
    await Promise.all([
      handler({ ...message, name: 'slow' }, ctx),
      handler({ ...message, name: 'fast' }, ctx),
    ]);
    const docs = emfDocs();
    expect(docs.map((d) => [d['release'], d['Outcome'], d['Runs']])).toEqual([
      ['team-a/fast', 'done', 1],
      ['team-a/slow', 'stop', 1],
    ]);
  });

  it('metrics Powertools refuses are logged and the run keeps its outcome', async () => {
    const { ctx, logLines } = recordContext(Number.NaN);
    const broken = { ...ctx, receiveCount: 'two' as unknown as number };
    const outcome = await withRunMetrics(
      'drift',
      () => Promise.resolve({ kind: 'done' as const }),
      true,
    )(message, broken);
    expect(outcome).toEqual({ kind: 'done' });
    expect(emfDocs()).toEqual([]);
    expect(logLines).toEqual([
      expect.objectContaining({
        level: 'warn',
        msg: "could not write the run's metrics",
        error: expect.objectContaining({ name: 'RangeError' }) as unknown,
      }),
    ]);
  });

  it('publishes nothing when not asked to (convoy dev, tests)', async () => {
    const { ctx } = recordContext(1);
    await withRunMetrics('drift', () => Promise.resolve({ kind: 'done' as const }), false)(message, ctx);
    expect(emfDocs()).toEqual([]);
  });

  it('the schema refuses what the spec refuses', () => {
    expect(validate({ _aws: { Timestamp: 'now', CloudWatchMetrics: [] } })).toBe(false);
    expect(
      validate({
        _aws: {
          Timestamp: 1,
          CloudWatchMetrics: [{ Namespace: 'x', Dimensions: [], Metrics: [{ Name: 'a', Unit: 'Furlongs' }] }],
        },
      }),
    ).toBe(false);
    expect(
      memberErrors({
        _aws: {
          Timestamp: 1,
          CloudWatchMetrics: [{ Namespace: 'x', Dimensions: [['Loop']], Metrics: [{ Name: 'Runs' }] }],
        },
      }),
    ).toEqual(['dimension Loop is not a string member', 'metric Runs is not a number member']);
  });
});
