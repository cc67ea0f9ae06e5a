import { describe, expect, it } from 'vitest';
import {
  FLEET_LOOP,
  LOOPS,
  QUEUE_LOOPS,
  chainIdOf,
  parseQueueMessage,
  queueMessageBody,
  resentMessageBody,
} from '../../../domain/runtime/queue-message.ts';
import type { QueueMessage } from '../../../domain/runtime/queue-message.ts';

const valid: QueueMessage = {
  v: 1,
  loop: 'reconcile',
  namespace: 'shop',
  name: 'checkout.v2',
  uid: '0b1c2d3e-4f50-4617-8293-a4b5c6d7e8f9',
  cause: 'release generation changed',
  sentAt: '2025-06-01T12:00:00.000Z',
};

const body = (overrides: Record<string, unknown>, without: string[] = []) => {
  const object: Record<string, unknown> = { ...valid, ...overrides };
  for (const key of without) delete object[key];
  return JSON.stringify(object);
};

function errorOf(input: string): string {
  const result = parseQueueMessage(input);
  if (result.ok) throw new Error(`expected ${input} to be refused`);
  return result.error;
}

describe('parseQueueMessage', () => {
  it('a valid body parses to the message', () => {
    expect(parseQueueMessage(JSON.stringify(valid))).toEqual({ ok: true, message: valid });
  });

  it("a fleet message parses: namespace, name and uid are the ReleaseSet's", () => {
    const fleet: QueueMessage = {
      ...valid,
      loop: FLEET_LOOP,
      name: 'web-fleet',
      cause: 'watch: ReleaseSet added',
    };
    expect(parseQueueMessage(queueMessageBody(fleet))).toEqual({ ok: true, message: fleet });
    expect(QUEUE_LOOPS).toEqual([...LOOPS, 'fleet']);
    expect(LOOPS).not.toContain('fleet');
  });

  it('a timestamp with an offset is accepted', () => {
    expect(parseQueueMessage(body({ sentAt: '2025-06-01T14:00:00+02:00' })).ok).toBe(true);
  });

  it('unknown extra fields are ignored (forward compatible within v1)', () => {
    const result = parseQueueMessage(body({ traceId: 'abc' }));
    expect(result).toEqual({ ok: true, message: valid });
  });

  it('a body that is not JSON says so, without echoing the body', () => {
    const error = errorOf('{"v":1, secret-ish garbage');
    expect(error).toMatch(/not JSON/);
    expect(error).not.toContain('garbage');
  });

  it('a JSON value that is not an object names the message body', () => {
    expect(errorOf('42')).toMatch(/message body: .*expected object/);
  });

  it('a wrong version names v', () => {
    expect(errorOf(body({ v: 2 }))).toMatch(/\bv: .*expected 1/);
  });

  it('an unknown loop names loop', () => {
    expect(errorOf(body({ loop: 'prune' }))).toMatch(/loop: .*"reconcile"\|"drift"\|"health"\|"fleet"/);
  });

  it.each(['namespace', 'name', 'uid', 'cause', 'sentAt'])('a missing %s names that field', (field) => {
    expect(errorOf(body({}, [field]))).toMatch(new RegExp(`\\b${field}: `));
  });

  it('a namespace that is not a DNS label names namespace', () => {
    expect(errorOf(body({ namespace: 'Shop_1' }))).toMatch(/namespace: must be a Kubernetes namespace name/);
  });

  it('a sentAt that is not an ISO datetime names sentAt', () => {
    expect(errorOf(body({ sentAt: 'yesterday' }))).toMatch(/sentAt: /);
  });

  it('several bad fields are all named', () => {
    const error = errorOf(body({ v: 0, uid: '' }));
    expect(error).toMatch(/\bv: /);
    expect(error).toMatch(/\buid: /);
  });
});

describe('queueMessageBody', () => {
  it('round-trips through parseQueueMessage', () => {
    expect(parseQueueMessage(queueMessageBody(valid))).toEqual({ ok: true, message: valid });
  });

  it('refuses to build an invalid message', () => {
    expect(() => queueMessageBody({ ...valid, name: '' })).toThrow(/name/);
  });

  it('is plain printable ASCII whatever text it carries (SQS refuses NUL, U+FFFE and, in the embedded server, emoji), and parses back to the same value', () => {
    const cause = 'pin \u0000 ҥ 😭 \u007f \ufeff \ud800 "quoted" \\ end';
    const text = queueMessageBody({ ...valid, cause });
    expect(text).toMatch(/^[\x20-\x7e]*$/);
    const parsed = parseQueueMessage(text);
    expect(parsed.ok && parsed.message.cause).toBe(cause);
  });
});

describe('a message sent again as a new one (followUpOf)', () => {
  it('carries the id of the first message of its chain, kept through every further resend; the rest of the body is unchanged', () => {
    const first = parseQueueMessage(resentMessageBody(valid, 'id-1'));
    expect(first).toEqual({ ok: true, message: { ...valid, followUpOf: 'id-1' } });
    if (!first.ok) return;
    expect(chainIdOf(first.message, 'id-2')).toBe('id-1');
    const second = parseQueueMessage(resentMessageBody(first.message, 'id-2'));
    expect(second).toEqual({ ok: true, message: { ...valid, followUpOf: 'id-1' } });
    expect(chainIdOf(valid, 'id-3')).toBe('id-3');
  });

  it('an empty or oversized followUpOf names the field', () => {
    expect(errorOf(body({ followUpOf: '' }))).toContain('followUpOf');
    expect(errorOf(body({ followUpOf: 'x'.repeat(129) }))).toContain('followUpOf');
  });
});
