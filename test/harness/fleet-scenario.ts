// The ReleaseSet scenario tests' setting: convoy's runtime as `convoy dev` starts it
// (runtime-env.ts: the relay, fauxqs, the function handlers on their pollers, as the install's
// identities) on the run's management apiserver, plus real target apiservers registered as
// Clusters of the test namespace (fleet.ts), and helpers to wait for what the set reports.
import { SendMessageCommand } from '@aws-sdk/client-sqs';
import { type KubeConfig } from '@kubernetes/client-node';
import { inject } from 'vitest';
import type { ReleaseSet } from '../../domain/api/release-set.ts';
import { QUEUE_MESSAGE_VERSION, type QueueMessage } from '../../domain/runtime/queue-message.ts';
import { kubeConfigFor } from './kube.ts';
import { startRuntimeEnv, until, type RuntimeEnv } from './runtime-env.ts';
import {
  conditionOf,
  createTargetNamespace,
  fleetChart,
  registerClusters,
  releaseSetApi,
  startFleetTargets,
  stopFleetTargets,
  type ChartRevision,
  type FleetTarget,
  type ReleaseSetApi,
  type TargetSpec,
} from './fleet.ts';

export interface FleetScenario {
  readonly admin: KubeConfig;
  readonly env: RuntimeEnv;
  readonly targets: readonly FleetTarget[];
  readonly sets: ReleaseSetApi;
  /** The test namespace on the management apiserver (the sets, their children, the Clusters). */
  readonly namespace: string;
  target(name: string): FleetTarget;
  /** A Git repo `name` holding the chart at revision 1, and the namespace `name` on every target. */
  app(name: string): Promise<{ url: string; commit: string }>;
  /** Commits the chart at `revision` to the repo `name`. */
  commitRevision(name: string, revision: ChartRevision): Promise<{ commit: string }>;
  /**
   * Sends the set one fleet message. Tests use it where nothing else would wake a set (a new
   * commit of its source after its rollout succeeded, as a Git webhook would). Every other message
   * comes from the runtime's relay and the fleet function's own rechecks.
   */
  kick(name: string, cause: string): Promise<void>;
  /**
   * Polls the set until `check` returns a value; fails after timeoutMs naming `what` and the last
   * status. It only reads: the set is woken by the relay and its own rechecks, never by the wait.
   */
  waitForSet<T>(
    name: string,
    what: string,
    check: (set: ReleaseSet) => T | undefined | false,
    timeoutMs?: number,
  ): Promise<T>;
  /** How many times the fleet function decided for the set so far (its 'fleet decided' log lines). */
  fleetRuns(name: string): number;
  /** Waits until RolloutSucceeded is True at the set's generation and the rollout Succeeded. */
  succeeded(name: string, timeoutMs?: number): Promise<ReleaseSet>;
  close(): Promise<void>;
}

/** Whether RolloutSucceeded is True for the set's current generation and the rollout state Succeeded. */
export function hasSucceeded(set: ReleaseSet): boolean {
  const condition = conditionOf(set, 'RolloutSucceeded');
  return (
    condition?.status === 'True' &&
    condition.observedGeneration === set.metadata.generation &&
    set.status?.rollout?.state === 'Succeeded'
  );
}

/**
 * Starts the runtime env and one target apiserver per spec; registers each target as a Cluster of
 * the test namespace under its name and labels unless `register` is false (the test registers its
 * own Clusters with registerCluster, e.g. several per target).
 */
export async function startFleetScenario(
  prefix: string,
  targetSpecs: readonly TargetSpec[],
  options: { register?: boolean } = {},
): Promise<FleetScenario> {
  const admin = kubeConfigFor(inject('kubeconfigPath'));
  const [envResult, targetsResult] = await Promise.allSettled([
    // The targets' apiservers start beside the env on loopback ports not known yet: the egress
    // policy (which a Cluster's kubeconfig server goes through) allows loopback here.
    startRuntimeEnv(admin, prefix, { egressAllow: ['127.0.0.0/8'] }),
    startFleetTargets(targetSpecs),
  ]);
  if (envResult.status === 'rejected' || targetsResult.status === 'rejected') {
    if (envResult.status === 'fulfilled') await envResult.value.close();
    if (targetsResult.status === 'fulfilled') await stopFleetTargets(targetsResult.value);
    throw envResult.status === 'rejected'
      ? envResult.reason
      : (targetsResult as PromiseRejectedResult).reason;
  }
  const env = envResult.value;
  const targets = targetsResult.value;
  const namespace = env.ns.name;
  if (options.register !== false) await registerClusters(admin, namespace, targets);
  const sets = releaseSetApi(admin, namespace);
  const kick = async (name: string, cause: string): Promise<void> => {
    const set = await sets.get(name);
    // Read at each send: env.restart() starts a new runtime with new queues.
    const queueUrl = (env.runtime.queues as unknown as Record<string, { queueUrl: string } | undefined>)[
      'fleet'
    ]?.queueUrl;
    if (queueUrl === undefined)
      throw new Error('the runtime has no fleet queue (dev/runtime.ts queues.fleet)');
    const message: QueueMessage = {
      v: QUEUE_MESSAGE_VERSION,
      loop: 'fleet',
      namespace,
      name,
      uid: set.metadata.uid ?? '',
      cause: `test: ${cause}`,
      sentAt: new Date().toISOString(),
    };
    await env.runtime.sqs.send(
      new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: JSON.stringify(message) }),
    );
  };

  const waitForSet = async <T>(
    name: string,
    what: string,
    check: (set: ReleaseSet) => T | undefined | false,
    timeoutMs = 180_000,
  ): Promise<T> => {
    let last: ReleaseSet | undefined;
    try {
      return await until(
        `${name}: ${what}`,
        async () => {
          last = await sets.get(name);
          const value = check(last);
          return value === undefined || value === false ? undefined : value;
        },
        { timeoutMs, intervalMs: 250 },
      );
    } catch (error) {
      throw new Error(`${(error as Error).message}; last status: ${JSON.stringify(last?.status)}`, {
        cause: error,
      });
    }
  };

  return {
    admin,
    env,
    targets,
    sets,
    namespace,
    target(name) {
      const found = targets.find((t) => t.name === name);
      if (found === undefined) throw new Error(`no target ${name}`);
      return found;
    },
    async app(name) {
      const repo = await env.repo(name, fleetChart({ revision: 1 }));
      await createTargetNamespace(targets, name);
      return repo;
    },
    commitRevision: (name, revision) => env.commit(name, fleetChart(revision)),
    kick,
    fleetRuns: (name) =>
      env.logs.filter(
        (l) =>
          l['loop'] === 'fleet' &&
          l['namespace'] === namespace &&
          l['name'] === name &&
          l.msg === 'fleet decided',
      ).length,
    waitForSet,
    succeeded: (name, timeoutMs) =>
      waitForSet(name, 'the rollout succeeded', (set) => hasSucceeded(set) && set, timeoutMs),
    async close() {
      await env.close();
      await stopFleetTargets(targets);
    },
  };
}
