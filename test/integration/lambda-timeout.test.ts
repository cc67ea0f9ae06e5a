/**
 * A function killed by its timeout mid-run, under the Lambda runtime emulator (dev/lambda), with the
 * shortest function timeout the construct accepts (13 s: timeout + the 60-s Lease must stay under
 * the 6 × timeout visibility, domain/runtime/timings.ts) — the promise "a function killed
 * by its timeout mid-run leaves no overlapping run and nothing dead-lettered that was valid work".
 *
 * The Release's Git source sits behind a proxy that holds every connection unanswered while it is
 * stalled, so the first reconcile run takes the Lease and then hangs on its fetch until the emulator
 * kills it. Then the source is made fast again. Asserted causally: the emulator answered with its
 * timeout, the mapping failed the whole batch (nothing deleted), the same message came back as its
 * second receive no sooner than the queue's visibility timeout, the killed run's stalled connection
 * was closed by the kill, its Lease was never renewed after the kill and every later holder took it
 * only after it expired (so no two runs of the Release were at work at once), and the Release ends
 * Applied with nothing in the dead-letter queue. Wall time ~2-3 min: the visibility is 78 s.
 */
import { createConnection, createServer, type Server, type Socket } from 'node:net';
import { Duration } from 'aws-cdk-lib';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { kubeConfigFor } from '../harness/kube.ts';
import { appliedOf, startRuntimeEnv, until, type RuntimeEnv } from '../harness/runtime-env.ts';
import { LEASE_SECONDS, VISIBILITY_PER_TIMEOUT } from '../../domain/runtime/timings.ts';
import type { InvocationRecord } from '../../dev/lambda/esm-driver.ts';

/** The smallest functionTimeout the construct accepts (T + LEASE_SECONDS < 6 T). */
const TIMEOUT_SECONDS = Math.floor(LEASE_SECONDS / (VISIBILITY_PER_TIMEOUT - 1)) + 1;

const configMap = (name: string) =>
  `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\ndata: {k: v}\n`;

/** A TCP proxy to the git server that, while stalled, accepts connections and never answers them. */
interface StallingProxy {
  readonly port: number;
  stalled: boolean;
  /** Connections held unanswered, and whether the client closed each. */
  readonly held: { closedByClient: boolean }[];
  stop(): Promise<void>;
}

async function startStallingProxy(targetPort: () => number): Promise<StallingProxy> {
  const sockets = new Set<Socket>();
  const held: { closedByClient: boolean }[] = [];
  const proxy: { stalled: boolean } = { stalled: true };
  const server: Server = createServer((client) => {
    sockets.add(client);
    client.on('close', () => sockets.delete(client));
    client.on('error', () => undefined);
    if (proxy.stalled) {
      const entry = { closedByClient: false };
      held.push(entry);
      client.on('end', () => (entry.closedByClient = true));
      client.on('close', () => (entry.closedByClient = true));
      client.resume();
      return;
    }
    const upstream = createConnection({ host: '127.0.0.1', port: targetPort() });
    sockets.add(upstream);
    upstream.on('close', () => sockets.delete(upstream));
    upstream.on('error', () => client.destroy());
    client.on('error', () => upstream.destroy());
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('the proxy has no port');
  return {
    port: address.port,
    get stalled() {
      return proxy.stalled;
    },
    set stalled(value: boolean) {
      proxy.stalled = value;
    },
    held,
    async stop() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

interface LeaseSeen {
  holder: string;
  acquireTime: string;
  renewTime: string;
  durationSeconds: number;
}

/** A Lease MicroTime (a Date from the client, a string on the wire) as RFC 3339 with milliseconds. */
const iso = (value: Date | string | undefined): string =>
  value === undefined ? '' : value instanceof Date ? value.toISOString() : new Date(value).toISOString();

describe('a function killed by its timeout under the Lambda runtime emulator', () => {
  let env: RuntimeEnv;
  let proxy: StallingProxy;
  const printed: string[] = [];

  beforeAll(async () => {
    // First the proxy (its target, the env's Git server, is read per connection): the egress
    // allow list of the env names it.
    proxy = await startStallingProxy(() => env.git.port);
    env = await startRuntimeEnv(kubeConfigFor(inject('kubeconfigPath')), 'lambda-to', {
      egressAllow: [`127.0.0.1:${proxy.port}`],
      relayTickMs: 200,
      lambda: {
        props: { maxConcurrency: 2, functionTimeout: Duration.seconds(TIMEOUT_SECONDS) },
        waitTimeSeconds: 1,
        onLine: (loop, slot, line) => {
          if (loop === 'reconcile') printed.push(`[${slot}] ${line}`);
          if (process.env['CONVOY_TEST_LOGS'] === '1') process.stderr.write(`${loop}[${slot}] ${line}\n`);
        },
      },
    });
  }, 180_000);

  afterAll(async () => {
    await env?.close();
    await proxy?.stop();
  });

  it('the template carries the shortest timeout and a visibility of 6 × it', () => {
    const fn = env.lambda()?.functions.reconcile;
    expect(fn?.timeoutSeconds).toBe(TIMEOUT_SECONDS);
    expect(fn?.eventSource.queue.visibilityTimeoutSeconds).toBe(VISIBILITY_PER_TIMEOUT * TIMEOUT_SECONDS);
  });

  it('killed by its timeout mid-run: the whole batch fails and comes back after the visibility timeout, no two runs overlap, the Release ends Applied, nothing dead-lettered', async () => {
    const lambda = env.lambda();
    if (lambda === undefined) throw new Error('no Lambda runtime');
    const visibilityMs = lambda.functions.reconcile.eventSource.queue.visibilityTimeoutSeconds * 1000;
    await env.repo('slow', { 'app/cm.yaml': configMap('killed-by-timeout') });
    const created = await env.createRelease('slow', {
      source: {
        git: { url: `http://127.0.0.1:${proxy.port}/slow.git`, ref: { branch: 'main' }, path: 'app' },
      },
    });
    const uid = created.metadata?.uid ?? '';

    // Every holder of the Release's reconcile Lease, as the functions wrote it.
    const leases: LeaseSeen[] = [];
    let watching = true;
    const watcher = (async () => {
      while (watching) {
        const lease = await env.lease(uid).catch(() => undefined);
        const spec = lease?.spec;
        if (spec?.holderIdentity !== undefined) {
          const seen = {
            holder: spec.holderIdentity,
            acquireTime: iso(spec.acquireTime),
            renewTime: iso(spec.renewTime ?? spec.acquireTime),
            durationSeconds: spec.leaseDurationSeconds ?? 0,
          };
          const last = leases.at(-1);
          if (last === undefined || last.holder !== seen.holder || last.acquireTime !== seen.acquireTime)
            leases.push(seen);
          else last.renewTime = seen.renewTime;
        }
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    })();
    const reconciles = (): InvocationRecord[] => lambda.invocations().filter((i) => i.loop === 'reconcile');

    try {
      // 1. The first run hangs on its fetch until the emulator kills it.
      const killed = await until(
        'a reconcile invocation timed out',
        () => reconciles().find((i) => i.result.timedOut),
        { timeoutMs: 120_000, intervalMs: 250 },
      );
      const killedAt = Date.now();
      expect(killed.result.error?.type).toBe('Sandbox.Timedout');
      expect(killed.result.body).toMatch(new RegExp(`^Task timed out after ${TIMEOUT_SECONDS}\\.00 seconds`));
      expect(killed.settlement.kind).toBe('batchFailed');
      expect(killed.receiveCounts[0]).toBe(1);
      // Its Lease was taken before the fetch, and its stalled connection was closed by the kill.
      expect(leases.length).toBeGreaterThan(0);
      const killedHolder = leases[0];
      expect(proxy.held.length).toBeGreaterThan(0);
      await until(
        "the killed run's stalled connections are closed",
        () => proxy.held.every((h) => h.closedByClient),
        { timeoutMs: 30_000 },
      );
      const status = await env.getRelease('slow');
      expect(appliedOf(status)).toBeUndefined();

      // 2. The source is fast again: the message comes back after its visibility timeout and the Release is applied.
      proxy.stalled = false;
      const [messageId] = killed.messageIds;
      const again = await until(
        "the killed batch's message was delivered again",
        () => reconciles().find((i) => i !== killed && i.messageIds.includes(messageId ?? '')),
        { timeoutMs: 240_000, intervalMs: 250 },
      );
      const released = await until(
        'the Release is Applied',
        async () => {
          const r = await env.getRelease('slow');
          return appliedOf(r)?.status === 'True' ? r : undefined;
        },
        { timeoutMs: 120_000, intervalMs: 250 },
      );
      expect(appliedOf(released)?.status).toBe('True');

      // The whole batch was left on the queue: its message's next delivery is its second receive,
      // no sooner than the visibility timeout after the killed receive (never deleted, never early).
      const index = again.messageIds.indexOf(messageId ?? '');
      expect(again.receiveCounts[index]).toBe(2);
      expect(again.receivedAt - killed.receivedAt).toBeGreaterThanOrEqual(visibilityMs - 1000);
      const between = reconciles().filter(
        (i) =>
          i !== killed &&
          i !== again &&
          i.messageIds.includes(messageId ?? '') &&
          i.receivedAt < again.receivedAt,
      );
      expect(between).toEqual([]);

      // 3. No overlap: the killed run never renewed its Lease after it was killed, and every later
      // holder took the Lease only after the killed holder's renewal had expired.
      watching = false;
      await watcher;
      expect(killedHolder).toBeDefined();
      if (killedHolder === undefined) return;
      const killedRenewal =
        leases
          .filter((l) => l.holder === killedHolder.holder && l.acquireTime === killedHolder.acquireTime)
          .at(-1) ?? killedHolder;
      expect(Date.parse(killedRenewal.renewTime)).toBeLessThanOrEqual(killedAt);
      const expiry = Date.parse(killedRenewal.renewTime) + killedRenewal.durationSeconds * 1000;
      const later = leases.filter(
        (l) => !(l.holder === killedHolder.holder && l.acquireTime === killedHolder.acquireTime),
      );
      expect(later.length).toBeGreaterThan(0);
      for (const holder of later)
        expect(Date.parse(holder.acquireTime), `${holder.holder} took the Lease`).toBeGreaterThanOrEqual(
          expiry,
        );
      expect(
        printed.filter((l) => l.includes('the Lease was taken over while this run was still alive')),
      ).toEqual([]);

      // 4. Nothing dead-lettered: the valid work was done, not lost.
      expect(await env.dlqMessages('reconcile')).toEqual([]);
      console.info(
        `lambda-timeout: killed after ${Math.round(killed.result.wallMs)} ms; redelivered ${again.receivedAt - killed.receivedAt} ms after the killed receive (visibility ${visibilityMs} ms); ` +
          `Lease holders ${JSON.stringify(leases)}; reconcile invocations ${reconciles().length}`,
      );
    } finally {
      watching = false;
      await watcher;
    }
  }, 420_000);
});
