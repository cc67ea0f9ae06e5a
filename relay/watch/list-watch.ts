/**
 * One informer session's list and watch over convoy's own Kubernetes transport
 * (adapters/kube/http.ts, adapters/kube/watch-stream.ts), without @kubernetes/client-node
 * (loading client-node alone cost the relay ~87 MiB). It keeps no cache of its own:
 * the resilient informer keeps the one map of what it reported (resilient-informer.ts).
 *
 * start() lists (the informer's list function: pages, each item transformed as it arrives),
 * emits `connect`, then watches from the list's resourceVersion with bookmarks. A watch the
 * server ends (its timeout) is resumed from the last resourceVersion seen; a 410 Gone (that
 * version is compacted away) lists again, as client-go and client-node do. Any other failure
 * (a refused list or watch, a broken connection) goes to `error` and ends the session: the
 * informer replaces it with backoff. stop() ends the watch; it emits nothing.
 */
import { KubeApiError, createKubeHttp } from '../../adapters/kube/http.ts';
import type { KubeClientConfig } from '../../adapters/kube/kubeconfig.ts';
import { watchStream, type WatchEvent } from '../../adapters/kube/watch-stream.ts';

/** What the informer reads of every object: its namespace, name and resourceVersion. */
export interface KubeObjectLike {
  apiVersion?: string | undefined;
  kind?: string | undefined;
  metadata?:
    | {
        name?: string | undefined;
        namespace?: string | undefined;
        uid?: string | undefined;
        resourceVersion?: string | undefined;
      }
    | undefined;
}

/**
 * One session: start() lists and watches (it resolves at once; failures go to `error`), each
 * object listed or watched goes to add/update/delete, `connect` once listed; tests pass a fake.
 */
export interface ListWatchLike<T> {
  on(verb: 'add' | 'update' | 'delete', callback: (object: T) => void): void;
  on(verb: 'error' | 'connect', callback: (error?: unknown) => void): void;
  start(): Promise<void>;
  stop(): Promise<void>;
}

/** Every object of the kind (one consistent snapshot) and the resourceVersion to watch from. */
export type ListFunction<T> = () => Promise<{
  metadata?: { resourceVersion?: string | undefined } | undefined;
  items: T[];
}>;

/** Streams one watch from `resourceVersion` until the server ends it (resolves) or it fails (rejects). */
export type WatchFunction = (
  resourceVersion: string,
  onEvent: (event: WatchEvent) => void,
  signal: AbortSignal,
) => Promise<void>;

/** Server-side watch timeout: 5 to 10 minutes, spread, as client-go's reflector asks. */
const watchTimeoutSeconds = () => 300 + Math.floor(Math.random() * 300);

/** A watch of `path` (a collection of every namespace) over `config`; `accept` e.g. for metadata only. */
export function kubeWatch(
  config: KubeClientConfig,
  path: string,
  options: { labelSelector?: string | undefined; accept?: string | undefined } = {},
): WatchFunction {
  return (resourceVersion, onEvent, signal) =>
    watchStream(
      config,
      {
        path,
        resourceVersion,
        labelSelector: options.labelSelector,
        timeoutSeconds: watchTimeoutSeconds(),
        signal,
        accept: options.accept,
        userAgent: 'convoy-relay',
      },
      onEvent,
    );
}

/** An ERROR event of a watch (a Status object); code 410 means: list again. */
export class WatchEventError extends Error {
  override name = 'WatchEventError';
  readonly code: number | undefined;
  constructor(message: string, code: number | undefined) {
    super(message);
    this.code = code;
  }
}

type Callback<T> = (arg: T) => void;

export function createListWatch<T extends KubeObjectLike>(
  list: ListFunction<T>,
  watch: WatchFunction,
  transform: (object: T) => T,
): ListWatchLike<T> {
  const callbacks = {
    add: [] as Callback<T>[],
    update: [] as Callback<T>[],
    delete: [] as Callback<T>[],
    connect: [] as Callback<unknown>[],
    error: [] as Callback<unknown>[],
  };
  const controller = new AbortController();
  let stopped = false;
  const fire = <K extends keyof typeof callbacks>(
    verb: K,
    arg: Parameters<(typeof callbacks)[K][number]>[0],
  ) => {
    if (stopped) return;
    for (const callback of callbacks[verb] as Callback<typeof arg>[]) callback(arg);
  };

  const onEvent = (event: WatchEvent, versionSeen: (version: string) => void) => {
    if (event.type === 'ERROR') {
      const status = event.object as { code?: number; message?: string; reason?: string };
      throw new WatchEventError(
        `watch error: ${status.code ?? '?'} ${status.reason ?? ''} ${status.message ?? ''}`.trim(),
        status.code,
      );
    }
    const version = (event.object as { metadata?: { resourceVersion?: string } }).metadata?.resourceVersion;
    if (event.type === 'BOOKMARK') {
      if (version !== undefined) versionSeen(version);
      return;
    }
    const object = transform(event.object as unknown as T);
    if (version !== undefined) versionSeen(version);
    fire(event.type === 'ADDED' ? 'add' : event.type === 'MODIFIED' ? 'update' : 'delete', object);
  };

  const run = async () => {
    for (;;) {
      const listed = await list();
      if (stopped) return;
      let version = listed.metadata?.resourceVersion ?? '';
      fire('connect', undefined);
      for (;;) {
        try {
          await watch(version, (event) => onEvent(event, (seen) => (version = seen)), controller.signal);
        } catch (error) {
          if (stopped) return;
          const gone =
            (error instanceof WatchEventError && error.code === 410) ||
            (error instanceof KubeApiError && error.status === 410);
          if (gone) break; // list again
          throw error;
        }
        if (stopped) return;
      }
    }
  };

  return {
    on(verb: keyof typeof callbacks, callback: Callback<never>) {
      (callbacks[verb] as Callback<never>[]).push(callback);
    },
    start() {
      // Like client-node's ListWatch: start() resolves; failures go to `error`.
      void run().catch((error: unknown) => fire('error', error));
      return Promise.resolve();
    },
    stop() {
      stopped = true;
      controller.abort();
      return Promise.resolve();
    },
  };
}

/** Every object of `path`, by pages of `pageSize`, each item transformed as its page arrives. */
export function pagedList<T extends KubeObjectLike>(
  config: KubeClientConfig,
  path: string,
  transform: (object: T) => T,
  options: {
    pageSize: number;
    labelSelector?: string | undefined;
    accept?: string | undefined;
    expectKind?: string | undefined;
  },
): ListFunction<T> {
  const http = createKubeHttp(config, { userAgent: 'convoy-relay' });
  return async () => {
    const items: T[] = [];
    let next: string | undefined;
    let resourceVersion: string | undefined;
    do {
      const response = await http({
        method: 'GET',
        path,
        query: { limit: String(options.pageSize), continue: next, labelSelector: options.labelSelector },
        accept: options.accept,
      });
      const page = response.body as
        | { kind?: string; items?: T[] | null; metadata?: { resourceVersion?: string; continue?: string } }
        | undefined;
      if (
        response.status !== 200 ||
        (options.expectKind !== undefined && page?.kind !== options.expectKind)
      ) {
        const kind =
          page?.kind !== undefined && response.status === 200
            ? ` (${page.kind}, not ${options.expectKind})`
            : '';
        throw new KubeApiError(`list of ${path} answered HTTP ${response.status}${kind}`, response);
      }
      for (const item of page?.items ?? []) items.push(transform(item));
      // Every page answers at the first page's resourceVersion (one consistent snapshot).
      resourceVersion ??= page?.metadata?.resourceVersion;
      next = page?.metadata?.continue || undefined;
    } while (next !== undefined);
    return { metadata: { resourceVersion }, items };
  };
}
