/**
 * The drift and health record handlers on a message that carries the applied hint with the
 * render (`applied.objects`): they read neither the Release, the target nor the render store.
 * The ports are fakes that count their calls; the hint is built by appliedHint as the reconcile
 * builds it. A hint without `objects` (an older sender, a render too large) reads the store.
 */
import { describe, expect, it } from 'vitest';
import type { ObserverTargetResolver } from '../../../adapters/kube/observer-target.ts';
import type { StatusWriter } from '../../../adapters/kube/status-writer.ts';
import type { KubeObject } from '../../../domain/render/kube-object.ts';
import type { QueueMessage } from '../../../domain/runtime/queue-message.ts';
import { FieldManager } from '../../../domain/status/field-managers.ts';
import type { AnySlice } from '../../../domain/status/slices.ts';
import type { RenderStore } from '../../../domain/store/render-store.ts';
import { createDriftRecordHandler } from '../../../functions/drift/drift-record.ts';
import { createHealthRecordHandler } from '../../../functions/health/health-record.ts';
import type { ReleaseSource } from '../../../adapters/kube/release-source.ts';
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

const applied = {
  type: 'Applied',
  status: 'True',
  reason: 'Applied',
  message: 'applied',
  lastTransitionTime: '2026-11-29T09:59:59Z',
  observedGeneration: 3,
};
/** The key the reconcile sealed with and the observers check with (one installation's). */
const KEY = hintKey('the functions key');
const write = {
  manager: FieldManager.release,
  slice: { conditions: [applied], observedGeneration: 3 },
} as never;

const applyingRelease = () => release({}, appliedStatus(RENDER_A));
const secret = (): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Secret',
  metadata: { name: 'creds', namespace: 'team-a' },
  data: { password: 'aHVudGVyMg==' },
});
/** With a Secret: the hint carries it as metadata only, which must still check as in sync and healthy. */
const rendered = () => [configMap(), secret(), deployment()];

function hintedMessage(loop: 'drift' | 'health', withRender: boolean): QueueMessage {
  const hint = appliedHint(
    KEY,
    applyingRelease(),
    write,
    { renderRef: RENDER_A, objects: rendered(), live: [configMap(), secret(), liveDeploymentDone()] },
    NOW,
  );
  if (hint === undefined) throw new Error('no hint');
  // As the reconcile sends a hint too large with its render: without it, sealed again.
  const { objects: _objects, mac: _mac, ...withoutRender } = hint;
  return {
    v: 1,
    loop,
    namespace: 'team-a',
    name: 'web',
    uid: 'u-1',
    cause: `applied ${RENDER_A}`,
    sentAt: NOW.toISOString(),
    applied: withRender ? hint : sealHint(KEY, withoutRender),
  };
}

const ctx: RecordContext = {
  logger: createLogger({ write: () => undefined }),
  receiveCount: 1,
  messageId: 'm-1',
  record: {} as SQSRecord,
};

/** Fakes that count every call; the render store holds the render. */
function fakes() {
  const calls: string[] = [];
  const writes: AnySlice[] = [];
  const releases: ReleaseSource = {
    get: () => {
      calls.push('releases.get');
      return Promise.resolve(applyingRelease());
    },
  };
  const statusWriter: StatusWriter = {
    apply: (_key, w) => {
      writes.push(w);
      return Promise.resolve({ resourceVersion: '2' });
    },
  };
  const targets: ObserverTargetResolver = {
    resolve: () => {
      calls.push('targets.resolve');
      return Promise.reject(new Error('the target is not read in these tests'));
    },
  };
  const meta = {
    renderRef: RENDER_A,
    namespace: 'team-a',
    release: 'web',
    createdAt: '2026-11-29T09:59:00Z',
    objectCount: 3,
  };
  const renders: RenderStore = {
    put: () => {
      calls.push('renders.put');
      return Promise.resolve();
    },
    get: () => {
      calls.push('renders.get');
      return Promise.resolve({ meta, objects: rendered() });
    },
    has: () => {
      calls.push('renders.has');
      return Promise.resolve(true);
    },
    list: () => {
      calls.push('renders.list');
      return Promise.resolve([meta]);
    },
    delete: () => {
      calls.push('renders.delete');
      return Promise.resolve();
    },
  };
  return { calls, writes, releases, statusWriter, targets, renders };
}

const conditionOf = (w: AnySlice | undefined) =>
  (w?.slice as { conditions?: { type: string; status: string }[] } | undefined)?.conditions?.[0];

describe('drift and health after an apply, from a hint that carries the render', () => {
  it('health: assessed from the hint, nothing read from the render store, the Release or the target', async () => {
    const f = fakes();
    const handler = createHealthRecordHandler({ ...f, hintKey: KEY, now: () => NOW });
    await handler(hintedMessage('health', true), ctx);
    expect(f.calls).toEqual([]);
    expect(f.writes).toHaveLength(1);
    expect(conditionOf(f.writes[0])).toMatchObject({ type: 'Healthy', status: 'True' });
    expect((f.writes[0]?.slice as { healthSummary?: { total: number } }).healthSummary?.total).toBe(3);
    expect(JSON.stringify(f.writes)).not.toContain('aHVudGVyMg==');
  });

  it('drift: checked from the hint, nothing read from the render store, the Release or the target', async () => {
    const f = fakes();
    const handler = createDriftRecordHandler({
      ...f,
      notify: () => Promise.reject(new Error('no notify expected')),
      hintKey: KEY,
      now: () => NOW,
    });
    await handler(hintedMessage('drift', true), ctx);
    expect(f.calls).toEqual([]);
    expect(f.writes).toHaveLength(1);
    expect(conditionOf(f.writes[0])).toMatchObject({ type: 'InSync', status: 'True' });
  });

  it('a hint without the render: each loads it from the render store once, and still reads nothing else', async () => {
    const health = fakes();
    await createHealthRecordHandler({ ...health, hintKey: KEY, now: () => NOW })(
      hintedMessage('health', false),
      ctx,
    );
    expect(health.calls).toEqual(['renders.get']);
    expect(conditionOf(health.writes[0])).toMatchObject({ type: 'Healthy', status: 'True' });

    const drift = fakes();
    await createDriftRecordHandler({
      ...drift,
      notify: () => Promise.resolve(),
      hintKey: KEY,
      now: () => NOW,
    })(hintedMessage('drift', false), ctx);
    expect(drift.calls).toEqual(['renders.get']);
    expect(conditionOf(drift.writes[0])).toMatchObject({ type: 'InSync', status: 'True' });
  });
});
