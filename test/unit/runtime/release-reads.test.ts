/**
 * functions/runtime/release-reads.ts — what a message may make a loop do before anything is
 * verified (a message is a hint, never an authority). The source is a fake that counts
 * its reads; `guarded` stands for the Lease guard and the record handler behind it.
 */
import { describe, expect, it } from 'vitest';
import { dropped, done, type Outcome } from '../../../domain/runtime/outcome.ts';
import type { Loop, QueueMessage } from '../../../domain/runtime/queue-message.ts';
import { FieldManager } from '../../../domain/status/field-managers.ts';
import { parseRelease } from '../../../domain/api/objects.ts';
import type { ReleaseSource } from '../../../adapters/kube/release-source.ts';
import { appliedHint, hintKey, type HintKey } from '../../../functions/runtime/applied-hint.ts';
import { createLogger } from '../../../platform/logger.ts';
import { sharedReleaseReads } from '../../../functions/runtime/release-reads.ts';
import type { RecordContext, RecordHandler } from '../../../functions/runtime/sqs-batch-handler.ts';
import type { SQSRecord } from '../../../functions/runtime/sqs-event.ts';

const NOW = new Date('2026-12-02T10:00:10Z');
/** The installation's hint key: the reconcile seals with it, the observers check with it. */
const KEY = hintKey('the functions key');

const live = {
  apiVersion: 'convoy.dev/v1alpha1',
  kind: 'Release',
  metadata: { name: 'web', namespace: 'team-a', uid: 'u-live', generation: 2, resourceVersion: '42' },
  spec: {
    cluster: { name: 'local' },
    source: { git: { url: 'https://git.example/app.git', ref: { branch: 'main' }, path: 'app' } },
  },
  status: {
    reconciledAt: '2026-12-02T10:00:00Z',
    healthSummary: {
      renderRef: 'sha256:x',
      checkedAt: '2026-12-02T09:59:00Z',
      total: 0,
      healthy: 0,
      progressing: 0,
      degraded: 0,
      missing: 0,
      unknown: 0,
      objects: [],
    },
  },
};

const message = (over: Partial<QueueMessage> = {}): QueueMessage => ({
  v: 1,
  loop: 'reconcile',
  namespace: 'team-a',
  name: 'web',
  uid: 'u-live',
  cause: 'watch: Release added',
  sentAt: '2026-12-02T10:00:05.000Z',
  ...over,
});

/** `key`: the loop's hint key (default KEY; undefined: a loop built without one). */
function rig(
  loop: Loop,
  { missing = false, ...opts }: { missing?: boolean; key?: HintKey | undefined } = {},
) {
  const key = 'key' in opts ? opts.key : KEY;
  const stored: unknown = missing ? undefined : live;
  const gets: string[] = [];
  const lines: { level: string; msg: string; [k: string]: unknown }[] = [];
  const source: ReleaseSource = {
    get(namespace, name) {
      gets.push(`${namespace}/${name}`);
      return Promise.resolve(stored);
    },
  };
  const reads = sharedReleaseReads(source, loop, { hintKey: key, now: () => NOW });
  const ctx: RecordContext = {
    logger: createLogger({
      level: 'debug',
      write: (line) => lines.push(JSON.parse(line) as (typeof lines)[number]),
    }),
    receiveCount: 1,
    messageId: 'm-1',
    record: {} as SQSRecord,
  };
  const seen: unknown[] = [];
  // What the Lease guard and the record handler do with the message: take the mark, read the Release.
  const guarded: RecordHandler = async (m, c) => {
    await reads.marks.mark(m, c, false);
    seen.push(await reads.releases.get(m.namespace, m.name, m));
    return done();
  };
  const run = (m: QueueMessage): Promise<Outcome> => {
    if (reads.marks.admit === undefined) throw new Error('no admit');
    return reads.marks.admit(guarded)(m, ctx);
  };
  return { gets, lines, ctx, seen, run, reads };
}

describe('the reconcile acts only on the live Release', () => {
  it('a message for a Release that does not exist is dropped after one read: no Lease, no handler', async () => {
    const r = rig('reconcile', { missing: true });
    const outcome = await r.run(
      message({ release: { ...live, metadata: { ...live.metadata, name: 'web' } } }),
    );
    expect(outcome).toMatchObject({ kind: 'dropped' });
    expect(outcome.kind === 'dropped' && outcome.reason).toMatch(/Release team-a\/web, which does not exist/);
    expect(r.gets).toEqual(['team-a/web']);
    expect(r.seen).toEqual([]);
  });

  it('a message whose uid is not the live one is dropped, naming both uids', async () => {
    const r = rig('reconcile');
    const outcome = await r.run(
      message({ uid: 'u-forged', release: { ...live, metadata: { ...live.metadata, uid: 'u-forged' } } }),
    );
    expect(outcome).toEqual(
      dropped(
        'the message is for uid u-forged, the live Release team-a/web has uid u-live (deleted and created again since, or forged): nothing is done for it',
      ),
    );
    expect(r.seen).toEqual([]);
  });

  it('the copy a message carries is never acted on: the handler gets the live read (one GET in all), and a differing copy is logged', async () => {
    const r = rig('reconcile');
    const copy = {
      ...live,
      metadata: { ...live.metadata, namespace: 'team-b', resourceVersion: '1' },
      spec: { ...live.spec, serviceAccountName: 'admin' },
    };
    expect(await r.run(message({ release: copy }))).toEqual(done());
    expect(r.seen).toEqual([live]);
    expect(r.gets).toEqual(['team-a/web']);
    const warned = r.lines.find((l) => /copy/.test(l.msg));
    expect(warned).toMatchObject({ level: 'warn', differs: ['namespace', 'spec'] });
  });

  it('a copy equal to the live Release but for its resourceVersion (a status write since the send) is not worth a warning', async () => {
    const r = rig('reconcile');
    await r.run(message({ release: { ...live, metadata: { ...live.metadata, resourceVersion: '41' } } }));
    expect(r.lines.filter((l) => l.level === 'warn')).toEqual([]);
  });

  it('the Lease mark comes from the live read, not from the copy', async () => {
    const r = rig('reconcile');
    const copy = { ...live, status: { reconciledAt: '2030-01-01T00:00:00Z' } };
    expect(await r.reads.marks.mark(message({ release: copy }), r.ctx, false)).toBe('2026-12-02T10:00:00Z');
  });
});

describe('drift and health: a sealed hint saves the read, anything else is read', () => {
  const parsed = parseRelease(live);
  if (!parsed.ok) throw new Error(parsed.error);
  const write = { manager: FieldManager.release, slice: { conditions: [], observedGeneration: 2 } } as never;
  const cm = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c', namespace: 'team-a' }, data: {} };
  const sealed = appliedHint(
    KEY,
    parsed.value,
    write,
    { renderRef: 'sha256:x', objects: [cm], live: [cm] },
    new Date('2026-12-02T10:00:05Z'),
  );
  if (sealed === undefined) throw new Error('no hint');

  it('a sealed hint: no read at all, the mark from the hint', async () => {
    const r = rig('health');
    expect(await r.run(message({ loop: 'health', applied: sealed }))).toEqual(done());
    // The fake handler above reads through `releases` once; the admit step and the mark did not.
    expect(r.gets).toEqual(['team-a/web']);
    expect(await r.reads.marks.mark(message({ loop: 'health', applied: sealed }), r.ctx, false)).toBe(
      '2026-12-02T09:59:00Z',
    );
  });

  it('a forged hint is logged and ignored: the live Release is read and decides', async () => {
    const forged = {
      ...sealed,
      release: { ...sealed.release, spec: { ...live.spec, serviceAccountName: 'admin' } },
    };
    const r = rig('drift');
    expect(await r.run(message({ loop: 'drift', applied: forged }))).toEqual(done());
    expect(r.seen).toEqual([live]);
    expect(r.lines.find((l) => l.level === 'warn')).toMatchObject({
      msg: expect.stringMatching(/hint .* not used/) as unknown,
      hint: expect.stringMatching(/seal/) as unknown,
    });
    expect(
      await r.reads.marks.mark(message({ loop: 'drift', applied: forged }), r.ctx, false),
    ).toBeUndefined();
  });

  it("a hint sealed with another key (another installation's, another container's) or met by a loop without a key is read", async () => {
    for (const key of [hintKey('another installation'), hintKey(undefined), undefined]) {
      const r = rig('drift', { key });
      expect(await r.run(message({ loop: 'drift', applied: sealed }))).toEqual(done());
      expect(r.gets).toEqual(['team-a/web']);
      expect(r.lines.find((l) => l.level === 'warn')).toMatchObject({
        hint: expect.stringMatching(/seal is not the functions'|no hint key/) as unknown,
      });
    }
  });

  it('a forged hint for a uid that is not the live one is dropped before the Lease, whatever the hint says', async () => {
    const r = rig('health');
    const forged = {
      ...sealed,
      release: { ...sealed.release, metadata: { ...live.metadata, uid: 'u-forged' } },
      mac: 'x',
    };
    expect(await r.run(message({ loop: 'health', uid: 'u-forged', applied: forged }))).toMatchObject({
      kind: 'dropped',
    });
    expect(r.seen).toEqual([]);
  });
});
