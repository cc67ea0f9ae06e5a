/**
 * Two runs of one loop for one Release never overlap with the one-request Leases,
 * including a run longer than the Lease duration: the real Lease guard (functions/runtime/
 * lease-guard.ts), run commit (run-commit.ts), Lease port and status writer on the real
 * kube-apiserver, where each run's status write — carrying its mark — closes its Lease
 * (domain/runtime/lease-close.ts).
 *
 * The record handler counts the runs at work. A run's work ends when it returns its decision, just
 * before the runtime makes its status write:
 * from that write on the next run may hold the Lease, so a second run at work at the same time
 * is an overlap. Messages are delivered as SQS would: several at once, and one that finds the
 * Lease busy comes back as a new message after the delay the guard asks for.
 */
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { CoordinationV1Api } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { fromKubeconfigFile } from '../../adapters/kube/kubeconfig.ts';
import { createLeasePort } from '../../adapters/kube/lease.ts';
import { createStatusWriter } from '../../adapters/kube/status-writer.ts';
import { leaseName } from '../../domain/runtime/lease.ts';
import { done, type Outcome } from '../../domain/runtime/outcome.ts';
import type { QueueMessage } from '../../domain/runtime/queue-message.ts';
import { FieldManager } from '../../domain/status/field-managers.ts';
import type { ReleaseSlice } from '../../domain/status/slices.ts';
import { releaseSliceWith } from '../harness/release-slice.ts';
import { createReleaseSource } from '../../adapters/kube/release-source.ts';
import type { RunDecision } from '../../domain/runtime/run-decision.ts';
import type { AnySlice } from '../../domain/status/slices.ts';
import { withLease } from '../../functions/runtime/lease-guard.ts';
import { releaseCommitPorts, type DecisionHandler } from '../../functions/runtime/run-commit.ts';
import { createLogger } from '../../platform/logger.ts';
import { sharedReleaseReads } from '../../functions/runtime/release-reads.ts';
import { freshNamespace, kubeConfigFor, type FreshNamespace } from '../harness/kube.ts';
import { convoyApi } from '../harness/releases.ts';

const LEASE_SECONDS = 5;
const LONG_RUN_MS = 7_500;

let ns: FreshNamespace;

beforeAll(async () => {
  ns = await freshNamespace(kubeConfigFor(inject('kubeconfigPath')), 'lease-excl');
});
afterAll(async () => {
  await ns?.delete();
});

const slice = (mark: string): ReleaseSlice => releaseSliceWith({ reconciledAt: mark });

/**
 * A run's decision: a status write carrying the mark the runtime gives it (its Lease mark when the
 * write may close the Lease), which `wrote` sees as the write is made.
 */
const writeMark = (wrote: (mark: string) => void): RunDecision<AnySlice> => ({
  write: {
    slice: (mark) => {
      if (mark === undefined) throw new Error('the guard gave the run no mark');
      wrote(mark);
      return { manager: FieldManager.release, slice: slice(mark) };
    },
  },
  before: [],
  after: [],
  outcome: done(),
});

describe('one run per Release and loop with Leases closed by the status write', () => {
  it('concurrent and busy-retried messages, one run longer than the Lease: never two runs at work, none lost', async () => {
    const kc = kubeConfigFor(inject('kubeconfigPath'));
    const config = fromKubeconfigFile(inject('kubeconfigPath'));
    const created = await convoyApi(kc).create('Release', ns.name, 'exclusive', {
      cluster: { name: 'local' },
      source: { git: { url: 'https://git.example.invalid/apps.git', ref: { branch: 'main' } } },
    });
    const uid = String((created['metadata'] as { uid?: string }).uid);
    const statusWriter = createStatusWriter(config);
    const reads = sharedReleaseReads(createReleaseSource(config), 'reconcile');

    let atWork = 0;
    let overlaps = 0;
    const ran: { cause: string; ms: number; mark: string }[] = [];
    const handler: DecisionHandler<AnySlice> = async (message) => {
      atWork++;
      if (atWork > 1) overlaps++;
      const started = Date.now();
      await sleep(message.cause === 'long' ? LONG_RUN_MS : 200);
      atWork--;
      // The run's last act: its status write carries its mark and so closes its Lease.
      return writeMark((mark) => ran.push({ cause: message.cause, ms: Date.now() - started, mark }));
    };
    const guarded = withLease(handler, {
      loop: 'reconcile',
      leases: createLeasePort(config, ns.name),
      durationSeconds: LEASE_SECONDS,
      marks: reads.marks,
      commit: releaseCommitPorts('reconcile', { statusWriter }),
    });
    const logger = createLogger({ base: { test: 'lease-exclusive' }, level: 'error' });

    // SQS: a busy message comes back as a new one after the delay the guard asks for.
    const ended: { cause: string; outcome: Outcome['kind'] }[] = [];
    const deliver = async (cause: string, sentAt: string): Promise<void> => {
      for (;;) {
        const message: QueueMessage = {
          v: 1,
          loop: 'reconcile',
          namespace: ns.name,
          name: 'exclusive',
          uid,
          cause,
          sentAt,
        };
        const outcome = await guarded(message, {
          logger,
          receiveCount: 1,
          messageId: randomUUID(),
          record: {} as never,
        });
        if (outcome.kind === 'requeueAfter' && outcome.asNewMessage === true) {
          await sleep(outcome.delayMs);
          continue;
        }
        ended.push({ cause, outcome: outcome.kind });
        return;
      }
    };
    const sent = (offsetMs: number) => new Date(Date.now() + offsetMs).toISOString();

    const deliveries = [deliver('long', sent(0))];
    await sleep(300);
    deliveries.push(deliver('short-1', sent(1)), deliver('short-2', sent(2)));
    await sleep(2_000);
    deliveries.push(deliver('short-3', sent(3)), deliver('short-4', sent(4)));
    await sleep(4_000);
    // While the long run renews its Lease past the Lease's own duration.
    deliveries.push(deliver('short-5', sent(5)));
    await Promise.all(deliveries);

    expect(overlaps).toBe(0);
    // Every message ended: run, or dropped as covered by a run that started after it was sent.
    expect(ended.map((e) => e.cause).sort()).toEqual([
      'long',
      'short-1',
      'short-2',
      'short-3',
      'short-4',
      'short-5',
    ]);
    expect(ended.every((e) => e.outcome === 'done' || e.outcome === 'dropped')).toBe(true);
    // The long run held the Lease past its duration (the heartbeat renewed it) while others waited.
    expect(ran[0]?.cause).toBe('long');
    expect(ran[0]?.ms).toBeGreaterThan(LEASE_SECONDS * 1000);
    expect(ran.length).toBeGreaterThanOrEqual(2);
    // Runs' marks strictly increase: each run took the Lease its predecessor's write closed.
    const marks = ran.map((r) => r.mark);
    expect([...marks].sort()).toEqual(marks);
    expect(new Set(marks).size).toBe(marks.length);
    // The last run's status write left the Lease free as exactly `reconcile@<its mark>`.
    const lease = await kc
      .makeApiClient(CoordinationV1Api)
      .readNamespacedLease({ name: leaseName('reconcile', uid), namespace: ns.name });
    expect(lease.spec?.holderIdentity).toBe(`reconcile@${marks.at(-1) ?? ''}`);
    process.stdout.write(
      `lease-exclusive: ${ran.length} runs (${ran.map((r) => `${r.cause} ${r.ms} ms`).join(', ')}), ${ended.filter((e) => e.outcome === 'dropped').length} dropped\n`,
    );
  }, 60_000);

  it('a run whose view of the Release was older than the last close, dropped after its take, gives the Lease back free as the value it found — the next run takes it at once', async () => {
    const kc = kubeConfigFor(inject('kubeconfigPath'));
    const config = fromKubeconfigFile(inject('kubeconfigPath'));
    const created = await convoyApi(kc).create('Release', ns.name, 'stale-view', {
      cluster: { name: 'local' },
      source: { git: { url: 'https://git.example.invalid/apps.git', ref: { branch: 'main' } } },
    });
    const uid = String((created['metadata'] as { uid?: string }).uid);
    const statusWriter = createStatusWriter(config);
    const reads = sharedReleaseReads(createReleaseSource(config), 'reconcile');
    const leases = createLeasePort(config, ns.name);
    const logger = createLogger({ base: { test: 'lease-exclusive' }, level: 'error' });
    const writes: string[] = [];
    const handler: DecisionHandler<AnySlice> = () => Promise.resolve(writeMark((mark) => writes.push(mark)));
    const message = (cause: string, sentAt: string): QueueMessage => ({
      v: 1,
      loop: 'reconcile',
      namespace: ns.name,
      name: 'stale-view',
      uid,
      cause,
      sentAt,
    });
    const ctx = () => ({ logger, receiveCount: 1, messageId: randomUUID(), record: {} as never });
    const guard = (marks: typeof reads.marks) =>
      withLease(handler, {
        loop: 'reconcile',
        leases,
        durationSeconds: 30,
        marks,
        commit: releaseCommitPorts('reconcile', { statusWriter }),
      });

    // A first run, then a second whose write closes the Lease as reconcile@<its mark>.
    const copySentAt = new Date().toISOString();
    expect((await guard(reads.marks)(message('first', copySentAt), ctx())).kind).toBe('done');
    await sleep(1_100);
    const staleMark = writes.at(-1);
    expect((await guard(reads.marks)(message('second', new Date().toISOString()), ctx())).kind).toBe('done');
    // A copy of the first message whose read of the Release came before the second run's write:
    // its view shows the first run's mark; the take finds the Lease free as the second's, takes it
    // with a holder after that, and drops the copy as already handled.
    const staleView: typeof reads.marks = {
      mark: (m, c, fresh) => (fresh ? reads.marks.mark(m, c, true) : Promise.resolve(staleMark)),
      stale: (m) => reads.marks.stale(m),
    };
    const copy = await guard(staleView)(message('first, again', copySentAt), ctx());
    expect(copy).toMatchObject({ kind: 'dropped' });
    expect(String((copy as { reason?: string }).reason)).toContain('already handled');
    // The Lease is free as the value the Release's status means free: a run that reads it takes it at once.
    const lease = await kc
      .makeApiClient(CoordinationV1Api)
      .readNamespacedLease({ name: leaseName('reconcile', uid), namespace: ns.name });
    expect(lease.spec?.holderIdentity).toBe(`reconcile@${writes.at(-1) ?? ''}`);
    const next = await leases.acquire('reconcile', uid, 'reconcile@2099-01-01T00:00:00Z', 30, undefined, {
      closedAs: `reconcile@${writes.at(-1) ?? ''}`,
    });
    expect(next.kind).toBe('acquired');
  }, 60_000);
});
