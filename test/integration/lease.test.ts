/**
 * The Lease port (adapters/kube/lease.ts) on the real kube-apiserver: one
 * holder per Release and loop, taken by compare-and-swap (JSON patch tests, resourceVersion),
 * the one recorded follow-up, takeover of an expired holder, and removal of
 * every Lease of a deleted Release.
 */
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { CoordinationV1Api, type KubeConfig } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { fromKubeconfigFile } from '../../adapters/kube/kubeconfig.ts';
import { createLeasePort } from '../../adapters/kube/lease.ts';
import { leaseName, type HeldLease, type LeasePort } from '../../domain/runtime/lease.ts';
import { holderAfterEarlier } from '../../domain/runtime/lease-close.ts';
import { freshNamespace, kubeConfigFor, type FreshNamespace } from '../harness/kube.ts';

let kc: KubeConfig;
let ns: FreshNamespace;
let leases: LeasePort;
let coordination: CoordinationV1Api;

beforeAll(async () => {
  kc = kubeConfigFor(inject('kubeconfigPath'));
  ns = await freshNamespace(kc, 'lease');
  leases = createLeasePort(fromKubeconfigFile(inject('kubeconfigPath')), ns.name);
  coordination = kc.makeApiClient(CoordinationV1Api);
});

afterAll(async () => {
  await ns?.delete();
});

function held(result: Awaited<ReturnType<LeasePort['acquire']>>): HeldLease {
  if (result.kind !== 'acquired')
    throw new Error(`expected the Lease to be acquired, it is busy (holder ${result.holder})`);
  return result.lease;
}

const readLease = (name: string) => coordination.readNamespacedLease({ name, namespace: ns.name });

async function leaseNames(): Promise<string[]> {
  const list = await coordination.listNamespacedLease({ namespace: ns.name });
  return list.items.map((l) => l.metadata?.name ?? '').sort();
}

describe('Leases on the real apiserver', () => {
  it('acquire → busy for a second holder → release with a follow-up → the next acquire sees the follow-up', async () => {
    const uid = randomUUID();
    const first = held(await leases.acquire('reconcile', uid, 'holder-a', 60));
    expect(first).toMatchObject({
      name: leaseName('reconcile', uid),
      holder: 'holder-a',
      followUp: undefined,
    });
    expect((await readLease(first.name)).spec?.holderIdentity).toBe('holder-a');

    expect(await leases.acquire('reconcile', uid, 'holder-b', 60)).toMatchObject({
      kind: 'busy',
      holder: 'holder-a',
    });

    const dueAt = new Date(Date.now() + 10_000).toISOString();
    await leases.release(first, { messageId: 'msg-1', dueAt });
    const stored = await readLease(first.name);
    expect(stored.spec?.holderIdentity ?? '').toBe('');
    expect(stored.metadata?.annotations).toMatchObject({ 'convoy.dev/follow-up-message-id': 'msg-1' });

    const second = held(await leases.acquire('reconcile', uid, 'holder-b', 60));
    expect(second.followUp).toEqual({ messageId: 'msg-1', dueAt });
    // Released without a follow-up, the Lease is kept free: the next acquire is one JSON patch.
    await leases.release(second, undefined, { failures: 0, handledSentAt: '2026-01-01T00:00:00.000Z' });
    expect(await leaseNames()).toContain(first.name);
    expect((await readLease(first.name)).spec?.holderIdentity ?? '').toBe('');
    const third = held(await leases.acquire('reconcile', uid, 'holder-c', 60));
    expect(third).toMatchObject({
      followUp: undefined,
      failures: 0,
      handledSentAt: '2026-01-01T00:00:00.000Z',
    });
    await leases.forget(third);
    expect(await leaseNames()).not.toContain(first.name);
  });

  it('a busy answer names the holder, the sentAt of its message and when it renewed; renew moves renewTime', async () => {
    const uid = randomUUID();
    const sentAt = new Date().toISOString();
    const lease = held(await leases.acquire('health', uid, 'holder-a', 60, sentAt));
    const busy = await leases.acquire('health', uid, 'holder-b', 60, sentAt);
    expect(busy).toMatchObject({
      kind: 'busy',
      holder: 'holder-a',
      holderSentAt: sentAt,
      durationSeconds: 60,
    });
    const before = (await readLease(lease.name)).spec?.renewTime;
    await sleep(20);
    expect(await leases.renew(lease)).toBe(true);
    expect(new Date((await readLease(lease.name)).spec?.renewTime ?? 0).getTime()).toBeGreaterThan(
      new Date(before ?? 0).getTime(),
    );
    await leases.release(lease, undefined, { failures: 3 });
    const again = held(await leases.acquire('health', uid, 'holder-c', 60));
    expect(again.failures).toBe(3);
    expect(await leases.renew(lease)).toBe(false);
    await leases.forget(again);
  });

  it('an expired holder can be taken over, and its late release does not undo the takeover', async () => {
    // The late release is a JSON patch that tests the holder is still the crashed one, so it fails
    // and is swallowed, with or without a follow-up.
    for (const late of [undefined, { messageId: 'stale' }]) {
      const uid = randomUUID();
      const crashed = held(await leases.acquire('reconcile', uid, 'crashed', 1));
      expect(await leases.acquire('reconcile', uid, 'early', 60)).toMatchObject({
        kind: 'busy',
        holder: 'crashed',
      });
      await sleep(1_300); // leaseDurationSeconds 1, through the apiserver's MicroTime round trip
      const next = held(await leases.acquire('reconcile', uid, 'successor', 60));
      expect((await readLease(next.name)).spec?.holderIdentity).toBe('successor');

      await leases.release(crashed, late);
      const after = await readLease(next.name);
      expect(after.spec?.holderIdentity).toBe('successor');
      expect(after.metadata?.annotations?.['convoy.dev/follow-up-message-id']).toBeUndefined();
      expect(await leases.acquire('reconcile', uid, 'third', 60)).toMatchObject({
        kind: 'busy',
        holder: 'successor',
      });
      expect(await leases.renew(crashed)).toBe(false);
      await leases.release(next, undefined);
    }
  });

  it('five concurrent acquires of a new Lease → exactly one acquired', async () => {
    const uid = randomUUID();
    const results = await Promise.all(
      [1, 2, 3, 4, 5].map((i) => leases.acquire('reconcile', uid, `racer-${i}`, 60)),
    );
    const winners = results.filter((r) => r.kind === 'acquired');
    expect(winners).toHaveLength(1);
    expect(results.filter((r) => r.kind === 'busy')).toHaveLength(4);
    const winner = held(winners[0]);
    expect((await readLease(winner.name)).spec?.holderIdentity).toBe(winner.holder);
    await leases.release(winner, undefined);
  });

  it('five concurrent acquires of a released Lease → exactly one acquired', async () => {
    const uid = randomUUID();
    await leases.release(held(await leases.acquire('reconcile', uid, 'before', 60)), { messageId: 'm' });
    const results = await Promise.all(
      [1, 2, 3, 4, 5].map((i) => leases.acquire('reconcile', uid, `racer-${i}`, 60)),
    );
    const winners = results.filter((r) => r.kind === 'acquired');
    expect(winners).toHaveLength(1);
    const winner = held(winners[0]);
    expect(winner.followUp).toEqual({ messageId: 'm' });
    expect((await readLease(winner.name)).spec?.holderIdentity).toBe(winner.holder);
    await leases.release(winner, undefined);
  });

  it('a Lease closed by a run since the caller read the Release is taken with a holder after that run’s mark, never with one equal to the free value', async () => {
    const uid = randomUUID();
    // A first run took it as reconcile@…:01 and its status write closed it (the holder then means free).
    const first = held(
      await leases.acquire('reconcile', uid, 'reconcile@2026-12-02T00:00:01Z', 60, undefined, {
        createFirst: true,
      }),
    );
    expect(first.holder).toBe('reconcile@2026-12-02T00:00:01Z');
    // A second run read the Release before that write (its view: mark …:00), so it expects "reconcile@…:00".
    const second = held(
      await leases.acquire('reconcile', uid, 'reconcile@2026-12-02T00:00:01Z', 60, undefined, {
        closedAs: 'reconcile@2026-12-02T00:00:00Z',
        reread: () => Promise.resolve('reconcile@2026-12-02T00:00:01Z'),
        holderAfter: (free) => `${free}+1s`,
      }),
    );
    expect(second.holder).toBe('reconcile@2026-12-02T00:00:01Z+1s');
    expect((await readLease(second.name)).spec?.holderIdentity).toBe('reconcile@2026-12-02T00:00:01Z+1s');
    // So a third run that read the first run's write finds it busy, not free.
    expect(
      await leases.acquire('reconcile', uid, 'reconcile@2026-12-02T00:00:02Z', 60, undefined, {
        closedAs: 'reconcile@2026-12-02T00:00:01Z',
      }),
    ).toMatchObject({
      kind: 'busy',
      holder: 'reconcile@2026-12-02T00:00:01Z+1s',
    });
  });

  it('a run given back without a status write leaves the free value unchanged, yet the next run in the same second never repeats its holder', async () => {
    const uid = randomUUID();
    const now = new Date('2026-12-02T10:00:05.200Z');
    const unique = (planned: string, earlier: string) =>
      holderAfterEarlier('reconcile', planned, earlier, now);
    const options = { closedAs: 'reconcile@2026-12-02T10:00:00Z', unique, createFirst: true };
    // A run dropped after its take (e.g. superseded) gives the Lease back closed as the value it found.
    const dropped = held(
      await leases.acquire('reconcile', uid, 'reconcile@2026-12-02T10:00:05Z', 60, undefined, options),
    );
    await leases.release(dropped, undefined, {}, { closeAs: 'reconcile@2026-12-02T10:00:00Z' });
    expect((await readLease(dropped.name)).spec?.holderIdentity).toBe('reconcile@2026-12-02T10:00:00Z');
    // The next run found the same status mark in the same second: it planned the same holder.
    const next = held(
      await leases.acquire('reconcile', uid, 'reconcile@2026-12-02T10:00:05Z', 60, undefined, options),
    );
    expect(next.holder).toBe('reconcile@2026-12-02T10:00:06Z');
    expect((await readLease(next.name)).spec?.holderIdentity).toBe('reconcile@2026-12-02T10:00:06Z');
    // And it holds the Lease: a third run expecting the old free value finds it busy.
    expect(
      await leases.acquire('reconcile', uid, 'reconcile@2026-12-02T10:00:05Z', 60, undefined, options),
    ).toMatchObject({ kind: 'busy', holder: 'reconcile@2026-12-02T10:00:06Z' });
    await leases.release(next, undefined, {}, { closeAs: 'reconcile@2026-12-02T10:00:00Z' });
    const third = held(
      await leases.acquire('reconcile', uid, 'reconcile@2026-12-02T10:00:05Z', 60, undefined, options),
    );
    expect(third.holder).toBe('reconcile@2026-12-02T10:00:07Z');
    await leases.release(third, undefined);
  });

  it('a Lease taken over from a crashed holder never repeats that holder', async () => {
    const uid = randomUUID();
    const unique = (planned: string, earlier: string) =>
      holderAfterEarlier('reconcile', planned, earlier, new Date('2026-12-02T10:00:05Z'));
    held(
      await leases.acquire('reconcile', uid, 'reconcile@2026-12-02T10:00:05Z', 1, undefined, {
        createFirst: true,
      }),
    );
    await sleep(2_100); // its 1-s Lease expires: the holder stopped renewing
    const taken = held(
      await leases.acquire('reconcile', uid, 'reconcile@2026-12-02T10:00:05Z', 60, undefined, {
        closedAs: 'reconcile@2026-12-02T10:00:00Z',
        unique,
      }),
    );
    expect(taken.holder).toBe('reconcile@2026-12-02T10:00:06Z');
    await leases.release(taken, undefined);
  });

  it("removeAll deletes every Lease of a Release and only that Release's", async () => {
    const gone = randomUUID();
    const kept = randomUUID();
    for (const loop of ['reconcile', 'drift', 'health']) {
      await leases.release(held(await leases.acquire(loop, gone, `h-${loop}`, 60)), {
        messageId: `next-${loop}`,
      });
    }
    const keptLease = held(await leases.acquire('reconcile', kept, 'h-kept', 60));
    expect(await leaseNames()).toEqual(
      expect.arrayContaining([
        leaseName('drift', gone),
        leaseName('health', gone),
        leaseName('reconcile', gone),
      ]),
    );

    expect(await leases.releaseUids()).toEqual(expect.arrayContaining([gone, kept]));

    await leases.removeAll(gone);

    expect(await leases.releaseUids()).not.toContain(gone);
    const names = await leaseNames();
    expect(names.filter((n) => n.endsWith(gone))).toEqual([]);
    expect(names).toContain(leaseName('reconcile', kept));
    // A holder whose Lease was removed under it (its Release was deleted) releases without an error.
    await leases.removeAll(kept);
    await leases.release(keptLease, { messageId: 'late' });
    expect((await leaseNames()).filter((n) => n.endsWith(kept))).toEqual([]);
  });
});
