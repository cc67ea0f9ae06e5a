/**
 * An informer that does not stay down. A list-and-watch session re-watches
 * after the server ends a watch and relists after a 410 (Gone); on any other
 * error (a failed list, a refused or broken watch) it emits `error` and
 * stops for good. This wrapper runs one session at a time and replaces it:
 *
 * - after any error, with exponential backoff (1 s doubling to 30 s; the
 *   backoff resets once a session has lived longer than the maximum);
 * - every `relistIntervalMs` (default 10 min), to catch anything a watch
 *   may have missed.
 *
 * Each session starts with a full list. The wrapper keeps its own map of
 * the objects it has reported and diffs every list against it: an object
 * never seen is "added", one whose resourceVersion changed is "modified"
 * (with the old object), one missing from the list is "deleted", and one
 * with the same resourceVersion is not reported again. A new informer has
 * an empty map, so after a relay restart every object counts as new.
 *
 * A session is a ListWatchLike: by default list-watch.ts (a list, then a watch resumed from
 * the last resourceVersion, over convoy's own transport). Every callback here catches and logs
 * its own errors, so a failing handler never ends a watch.
 */
import type { KubeClientConfig } from '../../adapters/kube/kubeconfig.ts';
import type { Logger } from '../../platform/logger.ts';
import {
  createListWatch as createKubeListWatch,
  kubeWatch,
  type KubeObjectLike,
  type ListFunction,
  type ListWatchLike,
} from './list-watch.ts';

export type InformerEventType = 'added' | 'modified' | 'deleted';

export interface InformerEvent<T> {
  readonly type: InformerEventType;
  /** The object now; for a delete, the last state seen. */
  readonly object: T;
  /** The object as last reported before this event (modified and deleted). */
  readonly old: T | undefined;
  /** The event came from a list (start, restart, periodic relist), not from the watch. */
  readonly fromList: boolean;
  /** The event came from this informer's first successful list. */
  readonly initial: boolean;
}

/** Callbacks for metrics; all optional. */
export interface InformerHooks {
  onConnect?(): void;
  onError?(error: unknown, restartInMs: number): void;
  onRestart?(): void;
  onRelist?(objects: number): void;
  onEvent?(type: InformerEventType): void;
}

export interface ResilientInformerOptions<T extends KubeObjectLike> {
  /** For logs, e.g. "Release". */
  readonly name: string;
  /** Watch path, e.g. /apis/convoy.dev/v1alpha1/releases or /api/v1/configmaps. */
  readonly path: string;
  /** Lists every object (with the same label selector as the watch). */
  readonly list: ListFunction<T>;
  readonly labelSelector?: string;
  readonly onEvent: (event: InformerEvent<T>) => void;
  readonly hooks?: InformerHooks;
  readonly logger: Logger;
  readonly backoff?: { readonly initialMs: number; readonly maxMs: number };
  readonly relistIntervalMs?: number;
  /** Needed unless createListWatch is given. */
  readonly kube?: KubeClientConfig;
  /** Accept header of the watch (e.g. metadata only); default JSON objects. */
  readonly watchAccept?: string;
  /**
   * Makes one session; default list-watch.ts over `kube`. `transform` is this informer's: the
   * session applies it to every watched object, as the informer applies it to every listed one.
   */
  readonly createListWatch?: (list: ListFunction<T>, transform: (object: T) => T) => ListWatchLike<T>;
  /**
   * Applied to every object listed or watched before anything keeps it (e.g. relay/watch/slim.ts:
   * only the fields the relay reads); it must be idempotent (slim.ts once()). Default: none.
   */
  readonly transform?: (object: T) => T;
  readonly now?: () => number;
}

export interface ResilientInformer<T> {
  start(): void;
  stop(): Promise<void>;
  /** True once a list has been applied. */
  hasSynced(): boolean;
  get(namespace: string, name: string): T | undefined;
  list(namespace: string): T[];
  /** Ends the current session and starts a new one (a full list) now. */
  relist(): void;
}

export class InformerConfigError extends Error {
  override name = 'InformerConfigError';
}

export function createResilientInformer<T extends KubeObjectLike>(
  options: ResilientInformerOptions<T>,
): ResilientInformer<T> {
  const { logger, hooks = {}, name } = options;
  const initialMs = options.backoff?.initialMs ?? 1_000;
  const maxMs = options.backoff?.maxMs ?? 30_000;
  const relistIntervalMs = options.relistIntervalMs ?? 10 * 60_000;
  const now = options.now ?? Date.now;
  const transform = options.transform ?? ((object: T) => object);
  const createListWatch =
    options.createListWatch ??
    ((list: ListFunction<T>, slim: (object: T) => T) => {
      if (options.kube === undefined)
        throw new InformerConfigError(`informer ${name}: pass kube (a KubeClientConfig) or createListWatch`);
      const watch = kubeWatch(options.kube, options.path, {
        labelSelector: options.labelSelector,
        accept: options.watchAccept,
      });
      return createKubeListWatch<T>(list, watch, slim);
    });

  /** namespace → name → object, as last reported. */
  const known = new Map<string, Map<string, T>>();
  let session = 0;
  let current: ListWatchLike<T> | undefined;
  let sessionStartedAt = 0;
  let failures = 0;
  let synced = false;
  let running = false;
  let restartTimer: NodeJS.Timeout | undefined;
  let relistTimer: NodeJS.Timeout | undefined;
  const stopping = new Set<Promise<void>>();

  const keyOf = (object: T) => ({
    namespace: object.metadata?.namespace ?? '',
    name: object.metadata?.name ?? '',
  });
  const lookup = (object: T) => {
    const { namespace, name: objectName } = keyOf(object);
    return known.get(namespace)?.get(objectName);
  };
  const remember = (object: T) => {
    const { namespace, name: objectName } = keyOf(object);
    let names = known.get(namespace);
    if (names === undefined) known.set(namespace, (names = new Map<string, T>()));
    names.set(objectName, object);
  };
  const forget = (object: T) => {
    const { namespace, name: objectName } = keyOf(object);
    const names = known.get(namespace);
    names?.delete(objectName);
    if (names?.size === 0) known.delete(namespace);
  };

  const emit = (event: InformerEvent<T>) => {
    try {
      hooks.onEvent?.(event.type);
      options.onEvent(event);
    } catch (error) {
      const { namespace, name: objectName } = keyOf(event.object);
      logger.error('informer event handler failed', {
        informer: name,
        type: event.type,
        namespace,
        name: objectName,
        error,
      });
    }
  };

  const sameVersion = (a: T, b: T) =>
    a.metadata?.resourceVersion !== undefined && a.metadata.resourceVersion === b.metadata?.resourceVersion;

  const applyList = (items: readonly T[]) => {
    const initial = !synced;
    const listed = new Set<string>();
    for (const item of items) {
      const { namespace, name: objectName } = keyOf(item);
      listed.add(`${namespace}/${objectName}`);
      const old = lookup(item);
      if (old !== undefined && sameVersion(old, item)) continue;
      remember(item);
      emit({ type: old === undefined ? 'added' : 'modified', object: item, old, fromList: true, initial });
    }
    for (const [namespace, names] of [...known]) {
      for (const [objectName, old] of [...names]) {
        if (listed.has(`${namespace}/${objectName}`)) continue;
        forget(old);
        emit({ type: 'deleted', object: old, old, fromList: true, initial });
      }
    }
    synced = true;
    hooks.onRelist?.(items.length);
  };

  const onWatched = (id: number, type: 'added' | 'deleted' | 'update', object: T) => {
    if (id !== session || !running) return;
    const old = lookup(object);
    if (type === 'deleted') {
      if (old === undefined) return;
      forget(old);
      emit({ type: 'deleted', object, old, fromList: false, initial: false });
      return;
    }
    if (old !== undefined && sameVersion(old, object)) return;
    remember(object);
    emit({ type: old === undefined ? 'added' : 'modified', object, old, fromList: false, initial: false });
  };

  const endSession = () => {
    session += 1;
    const ending = current;
    current = undefined;
    if (ending === undefined) return;
    const stopped = ending.stop().catch((error: unknown) => {
      logger.warn('stopping a watch failed', { informer: name, error });
    });
    stopping.add(stopped);
    void stopped.finally(() => stopping.delete(stopped));
  };

  const fail = (id: number, error: unknown) => {
    if (id !== session || !running) return;
    endSession();
    if (now() - sessionStartedAt > maxMs) failures = 0;
    const delay = Math.min(initialMs * 2 ** failures, maxMs);
    failures += 1;
    hooks.onError?.(error, delay);
    logger.warn(`informer ${name} failed; restarting in ${delay} ms`, {
      informer: name,
      restartInMs: delay,
      error,
    });
    clearTimeout(restartTimer);
    restartTimer = setTimeout(() => {
      restartTimer = undefined;
      if (!running) return;
      hooks.onRestart?.();
      startSession();
    }, delay);
  };

  const startSession = () => {
    const id = ++session;
    sessionStartedAt = now();
    const list: ListFunction<T> = async () => {
      const listed = await options.list();
      // The ListWatch caches the transformed items too, not the list as it came.
      const result = { ...listed, items: (listed.items ?? []).map(transform) };
      if (id === session && running) applyList(result.items);
      return result;
    };
    let listWatch: ListWatchLike<T>;
    try {
      listWatch = createListWatch(list, transform);
    } catch (error) {
      fail(id, error);
      return;
    }
    current = listWatch;
    listWatch.on('add', (object: T) => onWatched(id, 'added', object));
    listWatch.on('update', (object: T) => onWatched(id, 'update', object));
    listWatch.on('delete', (object: T) => onWatched(id, 'deleted', object));
    listWatch.on('connect', () => {
      if (id === session && running) hooks.onConnect?.();
    });
    listWatch.on('error', (error?: unknown) =>
      fail(id, error ?? new Error(`informer ${name}: watch failed without an error`)),
    );
    listWatch.start().catch((error: unknown) => fail(id, error));
  };

  return {
    start() {
      if (running) return;
      running = true;
      startSession();
      relistTimer = setInterval(() => {
        if (restartTimer !== undefined || !running) return; // a restart (with its own list) is already due
        endSession();
        startSession();
      }, relistIntervalMs);
    },
    async stop() {
      running = false;
      clearTimeout(restartTimer);
      clearInterval(relistTimer);
      restartTimer = undefined;
      endSession();
      await Promise.all([...stopping]);
    },
    hasSynced: () => synced,
    get: (namespace, objectName) => known.get(namespace)?.get(objectName),
    list: (namespace) => [...(known.get(namespace)?.values() ?? [])],
    relist() {
      if (!running) return;
      clearTimeout(restartTimer);
      restartTimer = undefined;
      endSession();
      startSession();
    },
  };
}
