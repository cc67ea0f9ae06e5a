import type {
  ErrorCallback,
  KubernetesListObject,
  KubernetesObject,
  ObjectCallback,
} from '@kubernetes/client-node';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createLogger } from '../../../platform/logger.ts';
import type { ListFunction, ListWatchLike } from '../../../relay/watch/list-watch.ts';
import { createResilientInformer, type InformerEvent } from '../../../relay/watch/resilient-informer.ts';

type Obj = KubernetesObject;
type Callback = (arg?: unknown) => void;
type Verb = 'add' | 'update' | 'delete' | 'change' | 'error' | 'connect';

/** Behaves like client-node's ListWatch: start() lists, emits add/update for the items, then "watches". */
class FakeListWatch implements ListWatchLike<Obj> {
  readonly callbacks: Record<string, Callback[]> = {
    add: [],
    update: [],
    delete: [],
    error: [],
    connect: [],
  };
  stopped = false;
  private readonly list: ListFunction<Obj>;
  constructor(list: ListFunction<Obj>) {
    this.list = list;
  }
  on(verb: 'add' | 'update' | 'delete' | 'change', cb: ObjectCallback<Obj>): void;
  on(verb: 'error' | 'connect', cb: ErrorCallback): void;
  on(verb: Verb, cb: ObjectCallback<Obj> | ErrorCallback): void {
    this.callbacks[verb]?.push(cb as Callback);
  }
  off(): void {}
  async start(): Promise<void> {
    this.fire('connect');
    let result: KubernetesListObject<Obj>;
    try {
      result = await this.list();
    } catch (error) {
      this.fire('error', error); // like ListWatch: start() resolves, the failure goes to `error`
      return;
    }
    for (const item of result.items) this.fire('add', item);
  }
  stop(): Promise<void> {
    this.stopped = true;
    this.fire('error', Object.assign(new Error('aborted'), { name: 'AbortError' })); // what the real one does on stop
    return Promise.resolve();
  }
  fire(verb: string, arg?: unknown): void {
    for (const cb of this.callbacks[verb] ?? []) cb(arg);
  }
}

const obj = (name: string, resourceVersion: string): Obj => ({
  metadata: { name, namespace: 'ns', resourceVersion },
});

function setup(lists: (() => Obj[] | Error)[]) {
  const sessions: FakeListWatch[] = [];
  const events: InformerEvent<Obj>[] = [];
  const hooks = { errors: 0, restarts: 0, relists: 0, delays: [] as number[] };
  let call = 0;
  const informer = createResilientInformer<Obj>({
    name: 'Thing',
    path: '/things',
    list: () => {
      const next = lists[Math.min(call++, lists.length - 1)]();
      if (next instanceof Error) return Promise.reject(next);
      return Promise.resolve({ items: next, metadata: { resourceVersion: '1' } });
    },
    onEvent: (event) => events.push(event),
    hooks: {
      onError: (_e, delay) => {
        hooks.errors += 1;
        hooks.delays.push(delay);
      },
      onRestart: () => (hooks.restarts += 1),
      onRelist: () => (hooks.relists += 1),
    },
    logger: createLogger({ write: () => {} }),
    createListWatch: (list) => {
      const lw = new FakeListWatch(list);
      sessions.push(lw);
      return lw;
    },
    relistIntervalMs: 60_000,
  });
  const summary = () =>
    events.map(
      (e) =>
        `${e.type} ${e.object.metadata?.name}@${e.object.metadata?.resourceVersion}${e.initial ? ' initial' : ''}`,
    );
  return { informer, sessions, events, hooks, summary };
}

describe('resilient informer', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it('a first list reports every object as added, marked initial', async () => {
    const { informer, summary } = setup([() => [obj('a', '1'), obj('b', '1')]]);
    informer.start();
    await vi.advanceTimersByTimeAsync(0);
    expect(summary()).toEqual(['added a@1 initial', 'added b@1 initial']);
    expect(informer.hasSynced()).toBe(true);
    expect(informer.list('ns').map((o) => o.metadata?.name)).toEqual(['a', 'b']);
    await informer.stop();
  });

  it('a relist reports only what changed: a new resourceVersion as modified, a missing object as deleted', async () => {
    const { informer, summary, events } = setup([
      () => [obj('a', '1'), obj('b', '1')],
      () => [obj('a', '1'), obj('b', '2'), obj('c', '1')],
    ]);
    informer.start();
    await vi.advanceTimersByTimeAsync(0);
    events.length = 0;
    await vi.advanceTimersByTimeAsync(60_000); // periodic relist
    expect(summary()).toEqual(['modified b@2', 'added c@1']);
    expect(events[0]?.old?.metadata?.resourceVersion).toBe('1');
    events.length = 0;
    informer.relist();
    await vi.advanceTimersByTimeAsync(0);
    expect(summary()).toEqual([]);
    await informer.stop();
  });

  it('an object missing from a relist is reported deleted with its last state', async () => {
    const { informer, summary, events } = setup([
      () => [obj('a', '1'), obj('b', '1')],
      () => [obj('a', '1')],
    ]);
    informer.start();
    await vi.advanceTimersByTimeAsync(0);
    events.length = 0;
    informer.relist();
    await vi.advanceTimersByTimeAsync(0);
    expect(summary()).toEqual(['deleted b@1']);
    await informer.stop();
  });

  it('restarts after any error with backoff doubling from 1 s to 30 s', async () => {
    const failing = new Error('forbidden');
    const { informer, hooks, sessions } = setup([() => failing]);
    informer.start();
    await vi.advanceTimersByTimeAsync(0);
    expect(hooks.errors).toBe(1);
    for (let i = 0; i < 7; i++) await vi.advanceTimersByTimeAsync(30_000);
    expect(hooks.delays.slice(0, 7)).toEqual([1_000, 2_000, 4_000, 8_000, 16_000, 30_000, 30_000]);
    expect(hooks.restarts).toBeGreaterThanOrEqual(6);
    expect(sessions.length).toBe(hooks.restarts + 1);
    await informer.stop();
  });

  it('a watch error after a good list restarts, relists and reports what was missed', async () => {
    const { informer, sessions, summary, events, hooks } = setup([
      () => [obj('a', '1')],
      () => [obj('a', '2')],
    ]);
    informer.start();
    await vi.advanceTimersByTimeAsync(0);
    events.length = 0;
    sessions[0].fire('error', new Error('watch broke'));
    await vi.advanceTimersByTimeAsync(1_000);
    expect(hooks.restarts).toBe(1);
    expect(summary()).toEqual(['modified a@2']);
    await informer.stop();
  });

  it('watch events are deduplicated by resourceVersion; deletes of unknown objects are ignored', async () => {
    const { informer, sessions, summary, events } = setup([() => [obj('a', '1')]]);
    informer.start();
    await vi.advanceTimersByTimeAsync(0);
    events.length = 0;
    const lw = sessions[0];
    lw.fire('update', obj('a', '1'));
    lw.fire('update', obj('a', '2'));
    lw.fire('add', obj('b', '3'));
    lw.fire('delete', obj('a', '4'));
    lw.fire('delete', obj('zz', '5'));
    expect(summary()).toEqual(['modified a@2', 'added b@3', 'deleted a@4']);
    await informer.stop();
  });

  it('the AbortError a stopped session reports is not taken for a failure', async () => {
    const { informer, hooks } = setup([() => [obj('a', '1')]]);
    informer.start();
    await vi.advanceTimersByTimeAsync(0);
    informer.relist(); // stops session 1 (which reports AbortError) and starts session 2
    await informer.stop();
    expect(hooks.errors).toBe(0);
  });

  it('a handler that throws is logged and the informer goes on', async () => {
    const lines: string[] = [];
    const seen: string[] = [];
    const informer = createResilientInformer<Obj>({
      name: 'Thing',
      path: '/things',
      list: () => Promise.resolve({ items: [obj('a', '1'), obj('b', '1')] }),
      onEvent: (event) => {
        seen.push(event.object.metadata!.name!);
        if (event.object.metadata?.name === 'a') throw new Error('boom');
      },
      logger: createLogger({ write: (line) => lines.push(line) }),
      createListWatch: (list) => new FakeListWatch(list),
    });
    informer.start();
    await vi.advanceTimersByTimeAsync(0);
    expect(seen).toEqual(['a', 'b']);
    expect(lines.some((l) => l.includes('informer event handler failed'))).toBe(true);
    await informer.stop();
  });
});
