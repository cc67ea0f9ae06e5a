/**
 * A recheck is the one message that continues its object's work (the Lease's follow-up), also
 * when it had to be sent again as a new message: because it found the Lease busy, or because the
 * loop waits without spending a receive (the fleet loop's rechecks). The copy carries its chain's
 * id (queue-message.ts followUpOf), so the Lease guard still knows it as the follow-up and never
 * drops it as "already handled" by the run that scheduled it — which lost the fleet's stepTimeout
 * and soak-end rechecks whenever the recheck met another message's run.
 *
 * The real Lease guard and Lease port on the real kube-apiserver, with the fleet loop's Leases
 * (no status marks); a message that waits as a new message is sent again with the body the batch
 * runtime sends (resentMessageBody).
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { fromKubeconfigFile } from '../../adapters/kube/kubeconfig.ts';
import { createLeasePort } from '../../adapters/kube/lease.ts';
import { dropped, waitAsNewMessage, type Outcome } from '../../domain/runtime/outcome.ts';
import {
  parseQueueMessage,
  resentMessageBody,
  type QueueMessage,
} from '../../domain/runtime/queue-message.ts';
import { withLease } from '../../functions/runtime/lease-guard.ts';
import { createLogger } from '../../platform/logger.ts';
import type { RecordHandler } from '../../functions/runtime/sqs-batch-handler.ts';
import { freshNamespace, kubeConfigFor, type FreshNamespace } from '../harness/kube.ts';

let ns: FreshNamespace;

beforeAll(async () => {
  ns = await freshNamespace(kubeConfigFor(inject('kubeconfigPath')), 'lease-follow');
});
afterAll(async () => {
  await ns?.delete();
});

interface Delivery {
  readonly message: QueueMessage;
  readonly messageId: string;
}

/** The message SQS delivers after the runtime sent `delivery` again as a new one. */
function resent(delivery: Delivery): Delivery {
  const parsed = parseQueueMessage(resentMessageBody(delivery.message, delivery.messageId));
  if (!parsed.ok) throw new Error(parsed.error);
  return { message: parsed.message, messageId: randomUUID() };
}

describe('a recheck stays the follow-up through resends', () => {
  it('a recheck that found the Lease busy (held by a run that was then dropped) still runs; a stale copy without the chain is covered', async () => {
    const config = fromKubeconfigFile(inject('kubeconfigPath'));
    const uid = randomUUID();
    const logger = createLogger({ base: { test: 'lease-follow-up' }, level: 'error' });
    const ran: string[] = [];
    let openGate: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => {
      openGate = resolve;
    });
    const handler: RecordHandler = async (message): Promise<Outcome> => {
      ran.push(message.cause);
      if (message.cause === 'another message') {
        // Holds the Lease until the test lets it go, then ends without taking over the chain.
        await gate;
        return dropped('the object this message names was not worked on');
      }
      return waitAsNewMessage(1_000, 'look again');
    };
    const guarded = withLease(handler, {
      loop: 'fleet',
      leases: createLeasePort(config, ns.name),
      durationSeconds: 30,
    });
    const deliver = (delivery: Delivery) =>
      guarded(delivery.message, {
        logger,
        receiveCount: 1,
        messageId: delivery.messageId,
        record: {} as never,
      });
    const at = (offsetMs: number) => new Date(Date.now() + offsetMs).toISOString();
    const base = { v: 1, loop: 'fleet', namespace: ns.name, name: 'wave', uid } as const;

    // The first run schedules its recheck as a new message: the Lease records it as the follow-up.
    const first: Delivery = {
      message: { ...base, cause: 'recheck', sentAt: at(0) },
      messageId: randomUUID(),
    };
    expect(await deliver(first)).toMatchObject({ kind: 'requeueAfter', asNewMessage: true });
    const recheck = resent(first);
    expect(recheck.message.followUpOf).toBe(first.messageId);

    // Another message's run holds the Lease when the recheck comes: it waits as a new message again.
    const other: Delivery = {
      message: { ...base, cause: 'another message', sentAt: at(10) },
      messageId: randomUUID(),
    };
    const holding = deliver(other);
    await expect.poll(() => ran.includes('another message')).toBe(true);
    const busy = await deliver(recheck);
    expect(busy).toMatchObject({ kind: 'requeueAfter', asNewMessage: true });
    expect(busy.kind === 'requeueAfter' ? busy.reason : '').toContain('lease held by');
    const waited = resent(recheck);
    // Through every resend the copy names the first message of its chain.
    expect(waited.message.followUpOf).toBe(first.messageId);

    openGate();
    expect(await holding).toMatchObject({ kind: 'dropped' });

    // The holder ended without taking over the chain: the recheck is still the follow-up and runs.
    const recheckRuns = ran.filter((cause) => cause === 'recheck').length;
    expect(await deliver(waited)).toMatchObject({ kind: 'requeueAfter', asNewMessage: true });
    expect(ran.filter((cause) => cause === 'recheck')).toHaveLength(recheckRuns + 1);

    // A copy of the first message without its chain (a duplicate the relay sent) is covered.
    const duplicate: Delivery = { message: { ...first.message }, messageId: randomUUID() };
    const outcome = await deliver(duplicate);
    expect(outcome).toMatchObject({ kind: 'dropped' });
    expect(outcome.kind === 'dropped' ? outcome.reason : '').toContain('already handled');
  }, 60_000);

  it('a chain of rechecks sent as new messages never ages: the 30th recheck runs like the first', async () => {
    const config = fromKubeconfigFile(inject('kubeconfigPath'));
    const uid = randomUUID();
    const logger = createLogger({ base: { test: 'lease-follow-up' }, level: 'error' });
    let runs = 0;
    const guarded = withLease(
      () => {
        runs++;
        return Promise.resolve(waitAsNewMessage(1_000, 'look again'));
      },
      { loop: 'fleet', leases: createLeasePort(config, ns.name), durationSeconds: 30 },
    );
    let delivery: Delivery = {
      message: {
        v: 1,
        loop: 'fleet',
        namespace: ns.name,
        name: 'soak',
        uid,
        cause: 'recheck',
        sentAt: new Date().toISOString(),
      },
      messageId: randomUUID(),
    };
    for (let i = 0; i < 30; i++) {
      // Each copy is a first receive (SQS counts receives per message): the chain spends none.
      const outcome = await guarded(delivery.message, {
        logger,
        receiveCount: 1,
        messageId: delivery.messageId,
        record: {} as never,
      });
      expect(outcome).toMatchObject({ kind: 'requeueAfter', asNewMessage: true });
      delivery = resent(delivery);
    }
    expect(runs).toBe(30);
  }, 60_000);
});
