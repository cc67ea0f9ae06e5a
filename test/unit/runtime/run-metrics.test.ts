/**
 * The functions' EMF lines against the Embedded Metric Format specification
 * (CloudWatch_Embedded_Metric_Format_Specification): its JSON schema, written
 * here from the spec's text, plus the rules the schema cannot say (every
 * dimension key and metric name is a root member of the right type).
 */
import { Ajv } from 'ajv';
import { describe, expect, it } from 'vitest';
import type { QueueMessage } from '../../../domain/runtime/queue-message.ts';
import { runMetricsLine, withRunMetrics } from '../../../functions/runtime/run-metrics.ts';

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
const ctx = { receiveCount: 3 } as Parameters<Parameters<typeof withRunMetrics>[1]>[1];

describe('EMF from each function', () => {
  it.each(['reconcile', 'drift', 'health'] as const)(
    'a %s run line is valid EMF with Runs, Duration, ReceiveCount, LeaseBusy',
    async (loop) => {
      const lines: string[] = [];
      let t = 1_000;
      const handler = withRunMetrics(
        loop,
        () => Promise.resolve({ kind: 'done' as const }),
        (l) => lines.push(l),
        () => (t += 5),
      );
      await handler({ ...message, loop }, ctx);
      expect(lines).toHaveLength(1);
      const doc = JSON.parse(lines[0]) as Record<string, unknown>;
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
      });
    },
  );

  it('counts a busy Lease and keeps the reason as a property', () => {
    const line = runMetricsLine(
      'drift',
      message,
      1,
      {
        kind: 'requeueAfter',
        delayMs: 1000,
        reason: 'lease held by reconcile-x until …',
        asNewMessage: true,
      },
      12,
      1_700_000_000_000,
    );
    const doc = JSON.parse(line) as Record<string, unknown>;
    expect(validate(doc)).toBe(true);
    expect(doc).toMatchObject({
      Outcome: 'requeueAfter',
      LeaseBusy: 1,
      reason: 'lease held by reconcile-x until …',
    });
  });

  it('a run that throws is counted (Outcome threw) and the error goes on', async () => {
    const lines: string[] = [];
    const handler = withRunMetrics(
      'health',
      () => Promise.reject(new Error('boom')),
      (l) => lines.push(l),
    );
    await expect(handler(message, ctx)).rejects.toThrow('boom');
    const doc = JSON.parse(lines[0]) as Record<string, unknown>;
    expect(validate(doc)).toBe(true);
    expect(doc['Outcome']).toBe('threw');
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
