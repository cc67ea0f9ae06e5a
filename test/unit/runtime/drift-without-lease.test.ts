/**
 * Drift's check before the Lease: a message whose sealed hint alone decides
 * the run, and whose run would change nothing — InSync as the hinted Release has it, no
 * correction — ends there (no Lease, no request); anything else goes on under the Lease.
 * Pure: the hint is built by appliedHint as the reconcile builds it; no port is involved.
 */
import { describe, expect, it } from 'vitest';
import type { StatusWriter } from '../../../adapters/kube/status-writer.ts';
import type { Condition } from '../../../domain/api/index.ts';
import type { QueueMessage } from '../../../domain/runtime/queue-message.ts';
import { FieldManager } from '../../../domain/status/field-managers.ts';
import type { AnySlice } from '../../../domain/status/slices.ts';
import { createDriftRecordHandler, createDriftWithoutLease } from '../../../functions/drift/drift-record.ts';
import { appliedHint, hintKey, sealHint } from '../../../functions/runtime/applied-hint.ts';
import { createLogger } from '../../../platform/logger.ts';
import type { RecordContext } from '../../../functions/runtime/sqs-batch-handler.ts';
import type { SQSRecord } from '../../../functions/runtime/sqs-event.ts';
import {
  appliedStatus,
  configMap,
  deployment,
  liveDeploymentDone,
  NOW,
  RENDER_A,
  release,
} from '../observe/fixtures.ts';

const KEY = hintKey('the functions key');
const applied = {
  type: 'Applied',
  status: 'True',
  reason: 'Applied',
  message: 'applied',
  lastTransitionTime: '2026-11-29T09:59:59Z',
  observedGeneration: 3,
};
const write = {
  manager: FieldManager.release,
  slice: { conditions: [applied], observedGeneration: 3 },
} as never;
const ctx = (receiveCount = 1): RecordContext => ({
  logger: createLogger({ write: () => undefined }),
  receiveCount,
  messageId: 'm-1',
  record: {} as SQSRecord,
});

function message(conditions: Condition[] = []): QueueMessage {
  const r = release({}, { ...appliedStatus(RENDER_A), conditions: [applied, ...conditions] });
  const hint = appliedHint(
    KEY,
    r,
    write,
    { renderRef: RENDER_A, objects: [configMap(), deployment()], live: [configMap(), liveDeploymentDone()] },
    NOW,
  );
  if (hint === undefined) throw new Error('no hint');
  return {
    v: 1,
    loop: 'drift',
    namespace: 'team-a',
    name: 'web',
    uid: 'u-1',
    cause: `settled ${RENDER_A}`,
    sentAt: NOW.toISOString(),
    applied: hint,
  };
}

/** The InSync condition the drift run writes for the hinted check (the record handler, under no Lease). */
async function inSyncWritten(): Promise<Condition> {
  const writes: AnySlice[] = [];
  const statusWriter: StatusWriter = {
    apply: (_key, w) => (writes.push(w), Promise.resolve({ resourceVersion: '2' })),
  };
  const unused = () => Promise.reject(new Error('not used with a hint'));
  await createDriftRecordHandler({
    releases: { get: unused },
    statusWriter,
    targets: { resolve: unused },
    renders: undefined,
    notify: unused,
    hintKey: KEY,
    now: () => NOW,
  })(message(), ctx());
  const condition = (writes[0]?.slice as { conditions?: Condition[] } | undefined)?.conditions?.[0];
  if (condition === undefined) throw new Error('drift wrote no InSync');
  return condition;
}

describe('drift before the Lease: a sealed hint that changes nothing ends the message', () => {
  const check = createDriftWithoutLease({ hintKey: KEY, now: () => NOW });

  it('InSync already as the hint shows it: the run ends (stop: the next check comes from a tick), no Lease', async () => {
    const inSync = await inSyncWritten();
    expect(inSync).toMatchObject({ type: 'InSync', status: 'True', reason: 'InSync' });
    expect(await check(message([inSync]), ctx())).toMatchObject({ kind: 'stop' });
  });

  it('InSync would change (none yet, Drifted, an older generation): the run goes on under the Lease', async () => {
    const inSync = await inSyncWritten();
    expect(await check(message(), ctx())).toBeUndefined();
    expect(
      await check(
        message([
          { ...inSync, status: 'False', reason: 'Drifted', message: 'Deployment team-a/web: /spec/replicas' },
        ]),
        ctx(),
      ),
    ).toBeUndefined();
    expect(await check(message([{ ...inSync, observedGeneration: 2 }]), ctx())).toBeUndefined();
  });

  it('a hint it may not use — a redelivery, a forged seal, none at all, no key — decides nothing', async () => {
    const inSync = await inSyncWritten();
    const good = message([inSync]);
    expect(await check(good, ctx(2))).toBeUndefined();
    const applied = good.applied;
    if (applied === undefined) throw new Error('no hint');
    expect(
      await check({ ...good, applied: { ...applied, mac: `${applied.mac ?? ''}x` } }, ctx()),
    ).toBeUndefined();
    const { applied: _none, ...bare } = good;
    expect(await check(bare, ctx())).toBeUndefined();
    expect(
      await createDriftWithoutLease({ hintKey: undefined, now: () => NOW })(good, ctx()),
    ).toBeUndefined();
  });

  it('a hint without the render (too large for the message): the run goes on under the Lease and loads it', async () => {
    const inSync = await inSyncWritten();
    const good = message([inSync]);
    const applied = good.applied;
    if (applied === undefined) throw new Error('no hint');
    const { objects: _objects, mac: _mac, ...withoutRender } = applied;
    expect(await check({ ...good, applied: sealHint(KEY, withoutRender) }, ctx())).toBeUndefined();
  });
});
