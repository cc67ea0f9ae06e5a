// Small Kubernetes helpers of the benchmark.
import { AppsV1Api, PatchStrategy, setHeaderOptions, Watch, type KubeConfig } from '@kubernetes/client-node';
import { API_GROUP, API_VERSION } from '../../domain/api/common.ts';

/**
 * The test control plane runs no kube-controller-manager, so a Deployment never
 * gets a status. This plays the Deployment controller once: every Deployment in
 * `namespace` reports its generation observed and all replicas available.
 */
export async function markDeploymentsAvailable(kc: KubeConfig, namespace: string): Promise<number> {
  const apps = kc.makeApiClient(AppsV1Api);
  const list = await apps.listNamespacedDeployment({ namespace });
  const merge = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
  for (const d of list.items) {
    const replicas = d.spec?.replicas ?? 1;
    await apps.patchNamespacedDeploymentStatus(
      {
        namespace,
        name: d.metadata?.name ?? '',
        body: {
          status: {
            observedGeneration: d.metadata?.generation ?? 1,
            replicas,
            updatedReplicas: replicas,
            readyReplicas: replicas,
            availableReplicas: replicas,
          },
        },
      },
      merge,
    );
  }
  return list.items.length;
}

interface ReleaseLike {
  metadata?: { name?: string; generation?: number };
  status?: { conditions?: { type?: string; status?: string; observedGeneration?: number }[] };
}

function isApplied(obj: ReleaseLike): boolean {
  const applied = obj.status?.conditions?.find((c) => c.type === 'Applied');
  return applied?.status === 'True' && (applied.observedGeneration ?? 0) >= (obj.metadata?.generation ?? 1);
}

export class WaitTimeoutError extends Error {
  override name = 'WaitTimeoutError';
}

export interface AppliedWatch {
  /** performance.now() when the watch first saw the Release with Applied True (for its generation). */
  readonly appliedAt: ReadonlyMap<string, number>;
  /** Resolves with the time Applied was first seen; rejects after timeoutMs. */
  waitFor(name: string, timeoutMs: number): Promise<number>;
  /** Resolves once every name is Applied; rejects after timeoutMs naming how many are not. */
  waitForAll(names: readonly string[], timeoutMs: number): Promise<void>;
  stop(): void;
}

/** Watches the Releases of `namespace` and notes when each first reaches Applied True. */
export async function watchApplied(
  kc: KubeConfig,
  namespace: string,
  onError: (error: unknown) => void,
): Promise<AppliedWatch> {
  const appliedAt = new Map<string, number>();
  const waiters = new Set<() => void>();
  const path = `/apis/${API_GROUP}/${API_VERSION}/namespaces/${namespace}/releases`;
  const watch = new Watch(kc);
  let stopped = false;
  let controller: AbortController | undefined;

  const onEvent = (phase: string, obj: ReleaseLike): void => {
    const name = obj.metadata?.name;
    if (name === undefined || phase === 'DELETED' || appliedAt.has(name) || !isApplied(obj)) return;
    appliedAt.set(name, performance.now());
    for (const wake of waiters) wake();
  };
  const start = async (): Promise<void> => {
    controller = await watch.watch(path, {}, onEvent, (error: unknown) => {
      if (stopped) return;
      // The server ends watches now and then; start again (a missed Applied comes back as ADDED).
      if (error !== null && error !== undefined) onError(error);
      setTimeout(() => void start().catch(onError), 100);
    });
  };
  await start();

  const until = (done: () => boolean, timeoutMs: number, what: () => string): Promise<void> =>
    new Promise((resolve, reject) => {
      if (done()) return resolve();
      const check = (): void => {
        if (!done()) return;
        clearTimeout(timer);
        waiters.delete(check);
        resolve();
      };
      const timer = setTimeout(() => {
        waiters.delete(check);
        reject(new WaitTimeoutError(`${what()} after ${timeoutMs} ms`));
      }, timeoutMs);
      waiters.add(check);
    });

  return {
    appliedAt,
    async waitFor(name, timeoutMs) {
      await until(
        () => appliedAt.has(name),
        timeoutMs,
        () => `Release ${namespace}/${name} did not reach Applied True`,
      );
      return appliedAt.get(name) ?? Number.NaN;
    },
    waitForAll(names, timeoutMs) {
      return until(
        () => names.every((n) => appliedAt.has(n)),
        timeoutMs,
        () =>
          `${names.filter((n) => !appliedAt.has(n)).length} of ${names.length} Releases in ${namespace} did not reach Applied True`,
      );
    },
    stop() {
      stopped = true;
      controller?.abort();
    },
  };
}
