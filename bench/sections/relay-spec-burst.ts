// The spec-change burst of relayScale (relay-scale.ts): the spec of many Releases changed at once,
// and the lag from the bench's own watch seeing each change to the relay's message for it (its
// sentAt), read from the reconcile queue.
import { DeleteMessageBatchCommand, ReceiveMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import {
  CustomObjectsApi,
  PatchStrategy,
  setHeaderOptions,
  Watch,
  type KubeConfig,
} from '@kubernetes/client-node';
import { API_GROUP, API_VERSION } from '../../domain/api/common.ts';
import { parseQueueMessage } from '../../domain/runtime/queue-message.ts';
import { inPool } from '../flux/side-process.ts';
import type { FleetRelease } from '../lib/release-fleet.ts';
import { percentile } from '../lib/stats.ts';
import { log } from '../lib/stdout.ts';

/** Changes the spec of each Release; the lag runs from the bench's watch seeing the change to the message's sentAt. */
export async function specChangeBurst(
  kc: KubeConfig,
  sqs: SQSClient,
  queueUrl: string,
  releases: readonly FleetRelease[],
): Promise<{
  changes: number;
  received: number;
  relaySent: number;
  notSeenByBenchWatch: number;
  p50Ms?: number;
  p99Ms?: number;
  maxMs?: number;
  burstMs: number;
}> {
  const key = (ns: string, name: string) => `${ns}/${name}`;
  const wanted = new Set(releases.map((r) => key(r.namespace, r.name)));
  const seenAt = new Map<string, number>();
  const custom = kc.makeApiClient(CustomObjectsApi);
  const path = `/apis/${API_GROUP}/${API_VERSION}/releases`;
  const list = (await custom.listClusterCustomObject({
    group: API_GROUP,
    version: API_VERSION,
    plural: 'releases',
    limit: 1,
  })) as { metadata?: { resourceVersion?: string } };
  const watch = new Watch(kc);
  // Restarted from the last resourceVersion it saw when the server or the client ends it, so a
  // watch that times out mid-burst loses no change.
  let resourceVersion = list.metadata?.resourceVersion ?? '0';
  let controller: AbortController | undefined;
  let stopped = false;
  const start = async (): Promise<void> => {
    controller = await watch.watch(
      path,
      { resourceVersion, allowWatchBookmarks: true },
      (
        _phase: string,
        obj: {
          metadata?: { namespace?: string; name?: string; generation?: number; resourceVersion?: string };
        },
      ) => {
        if (obj.metadata?.resourceVersion !== undefined) resourceVersion = obj.metadata.resourceVersion;
        const k = key(obj.metadata?.namespace ?? '', obj.metadata?.name ?? '');
        if ((obj.metadata?.generation ?? 1) >= 2 && wanted.has(k) && !seenAt.has(k))
          seenAt.set(k, Date.now());
      },
      (error: unknown) => {
        if (stopped) return;
        if (error)
          log(
            `relayScale: watch ended (restarted from ${resourceVersion}): ${error instanceof Error ? error.message : JSON.stringify(error)}`,
          );
        void start().catch((e: unknown) => log(`relayScale: watch restart failed: ${String(e)}`));
      },
    );
  };
  await start();
  const lags: number[] = [];
  const t = performance.now();
  try {
    await inPool(releases, 16, async (r) => {
      await custom.patchNamespacedCustomObject(
        {
          group: API_GROUP,
          version: API_VERSION,
          namespace: r.namespace,
          plural: 'releases',
          name: r.name,
          body: { spec: { syncPolicy: { interval: '6m' } } },
        },
        setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
      );
    });
    const burstMs = Math.round(performance.now() - t);
    const deadline = Date.now() + 60_000;
    const done = new Set<string>();
    // Releases the relay sent a 'spec changed' message for, whether or not the bench's own watch saw the change.
    const relaySent = new Set<string>();
    while (done.size < releases.length && Date.now() < deadline) {
      const { Messages = [] } = await sqs.send(
        new ReceiveMessageCommand({ QueueUrl: queueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 1 }),
      );
      for (const m of Messages) {
        const parsed = parseQueueMessage(m.Body ?? '');
        if (!parsed.ok || !parsed.message.cause.includes('spec changed')) continue;
        const k = key(parsed.message.namespace, parsed.message.name);
        if (wanted.has(k)) relaySent.add(k);
        const seen = seenAt.get(k);
        if (!wanted.has(k) || done.has(k) || seen === undefined) continue;
        done.add(k);
        lags.push(Date.parse(parsed.message.sentAt) - seen);
      }
      if (Messages.length > 0) {
        await sqs.send(
          new DeleteMessageBatchCommand({
            QueueUrl: queueUrl,
            Entries: Messages.map((m, i) => ({ Id: `d${i}`, ReceiptHandle: m.ReceiptHandle ?? '' })),
          }),
        );
      }
    }
    return {
      changes: releases.length,
      received: lags.length,
      relaySent: relaySent.size,
      notSeenByBenchWatch: [...relaySent].filter((k) => !seenAt.has(k)).length,
      p50Ms: percentile(lags, 50),
      p99Ms: percentile(lags, 99),
      maxMs: percentile(lags, 100),
      burstMs,
    };
  } finally {
    stopped = true;
    controller?.abort();
  }
}
