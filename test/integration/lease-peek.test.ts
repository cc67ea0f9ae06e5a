/**
 * The fleet loop reads its Lease before anything else (functions/runtime/lease-guard.ts
 * withLeasePeek): a set hears of every child's verdict, so most of its messages arrive while a run
 * is under way. Such a message waits (or is dropped as covered) on that one read — no read of the
 * set, no write to the Lease — and so does one that a free Lease's record shows handled. Anything
 * else goes on to the admission and the take. A message naming no set creates no Lease.
 *
 * The real Lease guard and Lease port on the real kube-apiserver (the fleet loop's request budget).
 */
import { randomUUID } from 'node:crypto';
import { CoordinationV1Api } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { fromKubeconfigFile } from '../../adapters/kube/kubeconfig.ts';
import { createLeasePort } from '../../adapters/kube/lease.ts';
import { leaseName } from '../../domain/runtime/lease.ts';
import { done, dropped, type Outcome } from '../../domain/runtime/outcome.ts';
import type { QueueMessage } from '../../domain/runtime/queue-message.ts';
import { withLease, withLeasePeek } from '../../functions/runtime/lease-guard.ts';
import { createLogger } from '../../platform/logger.ts';
import type { RecordHandler } from '../../functions/runtime/sqs-batch-handler.ts';
import { freshNamespace, kubeConfigFor, type FreshNamespace } from '../harness/kube.ts';

let ns: FreshNamespace;

beforeAll(async () => {
  ns = await freshNamespace(kubeConfigFor(inject('kubeconfigPath')), 'lease-peek');
});
afterAll(async () => {
  await ns?.delete();
});

/** An outcome's reason, prefixed with `dropped: ` for a drop. */
function reasonOf(outcome: Outcome): string {
  if (outcome.kind === 'dropped') return `dropped: ${outcome.reason}`;
  return 'reason' in outcome && typeof outcome.reason === 'string' ? outcome.reason : outcome.kind;
}

describe('a fleet message reads the Lease first', () => {
  it('waits or drops on one read while a run holds the Lease or has handled it; goes on otherwise; creates no Lease for an unknown uid', async () => {
    const config = fromKubeconfigFile(inject('kubeconfigPath'));
    const kc = kubeConfigFor(inject('kubeconfigPath'));
    const leases = createLeasePort(config, ns.name);
    const uid = randomUUID();
    const logger = createLogger({ base: { test: 'lease-peek' }, level: 'error' });
    let openGate: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => {
      openGate = resolve;
    });
    const ran: string[] = [];
    const run: RecordHandler = async (message): Promise<Outcome> => {
      ran.push(message.cause);
      if (message.cause === 'the run') await gate;
      return done();
    };
    // What comes after the read: the admission (here it only counts), then the Lease guard.
    const admitted: string[] = [];
    const guarded = withLease(run, { loop: 'fleet', leases, durationSeconds: 30 });
    const peeked = withLeasePeek(
      async (message, ctx) => {
        admitted.push(message.cause);
        return message.uid === uid ? guarded(message, ctx) : dropped('no such ReleaseSet');
      },
      { loop: 'fleet', leases },
    );
    const deliver = (message: QueueMessage) =>
      peeked(message, { logger, receiveCount: 1, messageId: randomUUID(), record: {} as never });
    const at = (offsetMs: number) => new Date(Date.now() + offsetMs).toISOString();
    const message = (cause: string, sentAt: string, forUid = uid): QueueMessage => ({
      v: 1,
      loop: 'fleet',
      namespace: ns.name,
      name: 'wave',
      uid: forUid,
      cause,
      sentAt,
    });
    const leaseVersion = async () => {
      const lease = await kc
        .makeApiClient(CoordinationV1Api)
        .readNamespacedLease({ name: leaseName('fleet', uid), namespace: ns.name });
      return lease.metadata?.resourceVersion;
    };

    // A run holds the Lease (its message sent at +0).
    const running = deliver(message('the run', at(0)));
    await expect.poll(() => ran.includes('the run')).toBe(true);
    const held = await leaseVersion();

    // Sent after the run's message: waits as a new message, on the read alone.
    const waits = await deliver(message('a child became Ready', at(5_000)));
    expect(waits).toMatchObject({ kind: 'requeueAfter', asNewMessage: true });
    expect(reasonOf(waits)).toMatch(/^lease held by fleet-/);
    // Sent before it: the run in progress covers it.
    expect(reasonOf(await deliver(message('an older notice', at(-5_000))))).toMatch(
      /^dropped: covered by the run in progress/,
    );
    expect(admitted).toEqual(['the run']);
    expect(await leaseVersion()).toBe(held);

    openGate();
    expect(await running).toMatchObject({ kind: 'done' });
    const free = await leaseVersion();

    // Free, and its record says a run started after this message was sent finished: dropped on the read.
    expect(reasonOf(await deliver(message('a late copy', at(-1_000))))).toMatch(/^dropped: already handled/);
    expect(admitted).toEqual(['the run']);
    expect(await leaseVersion()).toBe(free);

    // Free and not handled: on to the admission and the take, and it runs.
    expect(await deliver(message('a new notice', at(10_000)))).toMatchObject({ kind: 'done' });
    expect(admitted).toEqual(['the run', 'a new notice']);
    expect(ran).toEqual(['the run', 'a new notice']);

    // A uid no set has: no Lease to read, the admission refuses, and no Lease is written.
    const unknown = randomUUID();
    expect(await deliver(message('forged', at(0), unknown))).toMatchObject({
      kind: 'dropped',
      reason: 'no such ReleaseSet',
    });
    expect(await leases.peek('fleet', unknown)).toEqual({ kind: 'missing' });
  });
});
