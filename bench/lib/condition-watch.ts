// Watches every object of one kind (all namespaces) and notes when each first satisfies a
// predicate, e.g. a Kustomization's Ready or a Release's Applied condition True for its
// current generation. The watch restarts when the server ends it (a missed change comes
// back as ADDED of the restarted watch's initial list).
import { Watch, type KubeConfig } from '@kubernetes/client-node';

export interface ConditionLike {
  type?: string;
  status?: string;
  reason?: string;
  message?: string;
  observedGeneration?: number;
}

export interface WatchedObject {
  metadata?: { name?: string; namespace?: string; generation?: number; uid?: string };
  status?: { conditions?: ConditionLike[]; observedGeneration?: number } & Record<string, unknown>;
}

/** True when condition `type` is True and observed the object's current generation. */
export function conditionTrue(obj: WatchedObject, type: string): boolean {
  const c = obj.status?.conditions?.find((x) => x.type === type);
  if (c?.status !== 'True') return false;
  const observed = c.observedGeneration ?? obj.status?.observedGeneration ?? 0;
  return observed >= (obj.metadata?.generation ?? 1);
}

export interface ConditionWatch {
  /** Date.now() when each `namespace/name` first satisfied the predicate. */
  readonly reachedAt: ReadonlyMap<string, number>;
  /** Date.now() when each first satisfied `alsoTrack` (when given). */
  readonly alsoReachedAt: ReadonlyMap<string, number>;
  /** The latest object seen per `namespace/name`. */
  readonly latest: ReadonlyMap<string, WatchedObject>;
  /** Resolves once `count` objects have reached it; rejects after `timeoutMs` saying how many did. */
  waitForCount(count: number, timeoutMs: number): Promise<void>;
  stop(): void;
}

export class ConditionWaitTimeoutError extends Error {
  override name = 'ConditionWaitTimeoutError';
}

export async function watchCondition(
  kc: KubeConfig,
  path: string,
  predicate: (obj: WatchedObject) => boolean,
  onError: (error: unknown) => void,
  alsoTrack?: (obj: WatchedObject) => boolean,
): Promise<ConditionWatch> {
  const reachedAt = new Map<string, number>();
  const alsoReachedAt = new Map<string, number>();
  const latest = new Map<string, WatchedObject>();
  const wakers = new Set<() => void>();
  const watch = new Watch(kc);
  let stopped = false;
  let controller: AbortController | undefined;
  const onEvent = (phase: string, obj: WatchedObject): void => {
    const key = `${obj.metadata?.namespace ?? ''}/${obj.metadata?.name ?? ''}`;
    if (phase === 'DELETED') {
      latest.delete(key);
      return;
    }
    latest.set(key, obj);
    if (alsoTrack !== undefined && !alsoReachedAt.has(key) && alsoTrack(obj))
      alsoReachedAt.set(key, Date.now());
    if (reachedAt.has(key) || !predicate(obj)) return;
    reachedAt.set(key, Date.now());
    for (const wake of wakers) wake();
  };
  const start = async (): Promise<void> => {
    controller = await watch.watch(path, {}, onEvent, (error: unknown) => {
      if (stopped) return;
      if (error !== null && error !== undefined) onError(error);
      setTimeout(() => void start().catch(onError), 100);
    });
  };
  await start();
  return {
    reachedAt,
    alsoReachedAt,
    latest,
    waitForCount(count, timeoutMs) {
      return new Promise((resolve, reject) => {
        if (reachedAt.size >= count) return resolve();
        const check = (): void => {
          if (reachedAt.size < count) return;
          clearTimeout(timer);
          wakers.delete(check);
          resolve();
        };
        const timer = setTimeout(() => {
          wakers.delete(check);
          reject(
            new ConditionWaitTimeoutError(
              `${reachedAt.size} of ${count} objects at ${path} reached the condition within ${timeoutMs} ms`,
            ),
          );
        }, timeoutMs);
        wakers.add(check);
      });
    },
    stop() {
      stopped = true;
      controller?.abort();
    },
  };
}
