/**
 * The runtime's commit of a decision (functions/runtime/run-commit.ts) through in-memory ports:
 * it performs exactly commitSteps' order, tells the Lease what the status carries once the write
 * landed (also when an effect after it then fails), falls back once on a refused write, and ends
 * a write that finds the object deleted as the decision says.
 */
import { describe, expect, it } from 'vitest';
import { markAfter } from '../../../domain/runtime/lease-close.ts';
import { done, dropped, stop, type Outcome } from '../../../domain/runtime/outcome.ts';
import type { QueueMessage } from '../../../domain/runtime/queue-message.ts';
import type { RunDecision, RunEffect } from '../../../domain/runtime/run-decision.ts';
import {
  commitRun,
  type CommitPorts,
  type RunLease,
  type WriteResult,
} from '../../../functions/runtime/run-commit.ts';
import { createLogger } from '../../../platform/logger.ts';
import { release } from '../observe/fixtures.ts';

const MARK = '2026-11-29T10:00:05Z';
const message: QueueMessage = {
  v: 1,
  loop: 'reconcile',
  namespace: 'team-a',
  name: 'web',
  uid: 'u-1',
  cause: 'test',
  sentAt: '2026-11-29T10:00:00Z',
};

/** A status write as the slice it carries: `<name>@<stamp>`. */
type Slice = string;

function rig(answers: WriteResult[] = []) {
  const done: string[] = [];
  const lines: Record<string, unknown>[] = [];
  const written: (string | undefined)[] = [];
  const ports: CommitPorts<Slice> = {
    write(_message, slice) {
      done.push(`write ${slice}`);
      return Promise.resolve(answers.shift() ?? { kind: 'written' });
    },
    markOf: (slice) => slice.split('@')[1],
    events: {
      record(_subject, intents) {
        done.push(`events ${intents.map((e) => e.reason).join(',')}`);
        return Promise.resolve(
          intents.some((e) => e.reason === 'Unwritable') ? [new Error('events are forbidden')] : [],
        );
      },
    },
    notify(loop) {
      done.push(`notify ${loop}`);
      return loop === 'health' ? Promise.reject(new Error('the queue is gone')) : Promise.resolve();
    },
  };
  const lease: RunLease = { mark: MARK, closes: () => true, written: (mark) => void written.push(mark) };
  const logger = createLogger({
    write: (line) => void lines.push(JSON.parse(line) as Record<string, unknown>),
  });
  const commit = (decided: Outcome | RunDecision<Slice>, withPorts = true) =>
    commitRun(decided, { loop: 'reconcile', message, logger, ports: withPorts ? ports : undefined, lease });
  return { done, lines, written, commit };
}

const events = (reason: string): RunEffect => ({
  kind: 'events',
  subject: { namespace: 'team-a', name: 'web' },
  intents: [{ type: 'Normal', reason, action: 'Apply', note: reason }],
});
const notify = (loop: 'drift' | 'health'): RunEffect => ({
  kind: 'notify',
  loop,
  release: release(),
  cause: 'applied',
});
const decision = (over: Partial<RunDecision<Slice>> = {}): RunDecision<Slice> => ({
  write: { slice: (stamp) => `first@${stamp ?? 'own time'}` },
  before: [],
  after: [],
  outcome: done(),
  ...over,
});

describe('commitRun', () => {
  it('runs the effects before the write, the write, the effects after it, then logs the report; the Lease learns the mark the status carries', async () => {
    const r = rig();
    const outcome = await r.commit(
      decision({
        before: [events('RenderApplied')],
        after: [notify('drift')],
        report: { message: 'reconciled', fields: { applied: 'Applied' } },
        logContext: { renderRef: 'sha256:a' },
      }),
    );
    expect(outcome).toEqual(done());
    expect(r.done).toEqual(['events RenderApplied', `write first@${markAfter(MARK)}`, 'notify drift']);
    expect(r.written).toEqual([markAfter(MARK)]);
    expect(r.lines.at(-1)).toMatchObject({ msg: 'reconciled', applied: 'Applied', renderRef: 'sha256:a' });
  });

  it("with nothing after the write and a Lease with nothing to record, the write carries the run's mark", async () => {
    const r = rig();
    await r.commit(decision());
    expect(r.done).toEqual([`write first@${MARK}`]);
    expect(r.written).toEqual([MARK]);
  });

  it("a refused write: the error is logged, the fallback is committed instead, and the refused decision's effects after its write never run", async () => {
    const r = rig([{ kind: 'refused', error: new Error('status.waves: Too big') }]);
    const outcome = await r.commit(
      decision({
        before: [events('RenderApplied')],
        after: [notify('drift')],
        onRefused: {
          instead: 'writing Applied False/DeployFailed instead',
          decide: (refusal) =>
            decision({ write: { slice: (stamp) => `refused(${refusal})@${stamp ?? ''}` }, outcome: stop() }),
        },
      }),
    );
    expect(outcome).toEqual(stop());
    expect(r.done).toEqual([
      'events RenderApplied',
      `write first@${markAfter(MARK)}`,
      `write refused(status.waves: Too big)@${MARK}`,
    ]);
    expect(r.written).toEqual([MARK]);
    expect(r.lines.find((l) => l['level'] === 'error')).toMatchObject({
      msg: 'the reconcile status was refused; writing Applied False/DeployFailed instead',
    });
  });

  it('a refused write without a fallback, or a refused fallback, fails the run with the refusal', async () => {
    const refusal = new Error('refused');
    await expect(rig([{ kind: 'refused', error: refusal }]).commit(decision())).rejects.toBe(refusal);
    const twice = rig([
      { kind: 'refused', error: new Error('first') },
      { kind: 'refused', error: refusal },
    ]);
    await expect(
      twice.commit(decision({ onRefused: { instead: 'x', decide: () => decision() } })),
    ).rejects.toBe(refusal);
    expect(twice.written).toEqual([]);
  });

  it('a write that finds the object deleted ends as the decision says (dropped, gone), else fails the run; nothing after it runs', async () => {
    const gone = dropped('the Release was deleted during the reconcile', { gone: true });
    const notFound = new Error('HTTP 404');
    const r = rig([{ kind: 'gone', error: notFound }]);
    expect(
      await r.commit(decision({ write: { slice: () => 'first@x', ifGone: gone }, after: [notify('drift')] })),
    ).toEqual(gone);
    expect(r.done).toEqual(['write first@x']);
    await expect(rig([{ kind: 'gone', error: notFound }]).commit(decision())).rejects.toBe(notFound);
  });

  it('an effect after the write that fails fails the run, and the Lease already knows what the status carries', async () => {
    const r = rig();
    await expect(r.commit(decision({ after: [notify('health')] }))).rejects.toThrow('the queue is gone');
    expect(r.written).toEqual([markAfter(MARK)]);
  });

  it('an Event that cannot be written is logged and the run goes on', async () => {
    const r = rig();
    expect(await r.commit(decision({ before: [events('Unwritable')] }))).toEqual(done());
    expect(r.lines.find((l) => l['level'] === 'warn')).toMatchObject({
      msg: 'an Event could not be written',
      error: 'events are forbidden',
    });
  });

  it('a bare Outcome needs no port; a decision for a runtime without commit ports fails naming the loop', async () => {
    const r = rig();
    expect(await r.commit(stop(), false)).toEqual(stop());
    await expect(r.commit(decision(), false)).rejects.toThrow(
      'the reconcile loop decided a status write or an effect',
    );
    expect(r.done).toEqual([]);
  });
});
