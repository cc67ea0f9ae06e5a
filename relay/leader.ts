/**
 * Leader election with a coordination.k8s.io Lease (default
 * `convoy-relay-leader` in the installation namespace). The leader renews
 * every renewIntervalMs by one replace of its own last write; a follower takes the Lease over once it has seen
 * it unchanged for leaseDurationMs (domain/relay/leader-lease.ts). Every
 * write carries the resourceVersion it read, so of two replicas that race
 * exactly one wins. A leader that cannot renew within renewDeadlineMs, or
 * finds another holder, stops leading before the Lease can expire for
 * the others. stop() gives the Lease up, so a successor starts at once.
 */
import { createKubeClient, isKubeApiError, resourcePath } from '../adapters/kube/http.ts';
import type { KubeClientConfig } from '../adapters/kube/kubeconfig.ts';
import { microTime } from '../adapters/kube/lease.ts';
import {
  leaseDecision,
  observeLease,
  type LeaseObservation,
  type LeaseRecord,
} from '../domain/relay/leader-lease.ts';
import type { Logger } from '../platform/logger.ts';

export const LEADER_LEASE_NAME = 'convoy-relay-leader';

export interface LeaderElectionOptions {
  readonly kube: KubeClientConfig;
  readonly namespace: string;
  /** Default convoy-relay-leader. */
  readonly name?: string;
  /** Unique per replica, e.g. pod name + random suffix. */
  readonly identity: string;
  /** Default 10 s. */
  readonly leaseDurationMs?: number;
  /** Default 2 s. */
  readonly renewIntervalMs?: number;
  /** Default leaseDuration − 2 × renewInterval (6 s). */
  readonly renewDeadlineMs?: number;
  readonly logger: Logger;
  readonly onStartedLeading: () => void;
  readonly onStoppedLeading: () => void;
  readonly now?: () => Date;
}

export interface LeaderElector {
  isLeader(): boolean;
  /** True once the Lease has been read (or created) at least once. */
  hasObserved(): boolean;
  /** Stops electing; a leader gives the Lease up and calls onStoppedLeading. */
  stop(): Promise<void>;
}

const isStatus = (error: unknown, ...codes: number[]) =>
  isKubeApiError(error) && codes.includes(error.status);

/** A coordination.k8s.io Lease as this elector reads and writes it. */
interface V1Lease {
  apiVersion?: string;
  kind?: string;
  metadata?: { name?: string; namespace?: string; resourceVersion?: string; [field: string]: unknown };
  spec?: {
    holderIdentity?: string;
    leaseDurationSeconds?: number;
    acquireTime?: string;
    renewTime?: string;
    leaseTransitions?: number;
    [field: string]: unknown;
  };
}

export function startLeaderElection(options: LeaderElectionOptions): LeaderElector {
  const { namespace, identity, logger } = options;
  const name = options.name ?? LEADER_LEASE_NAME;
  const leaseDurationMs = options.leaseDurationMs ?? 10_000;
  const renewIntervalMs = options.renewIntervalMs ?? 2_000;
  const renewDeadlineMs =
    options.renewDeadlineMs ?? Math.max(renewIntervalMs, leaseDurationMs - 2 * renewIntervalMs);
  const now = options.now ?? (() => new Date());
  // A request still unanswered after a Lease duration cannot keep the lead anyway.
  const client = createKubeClient(options.kube, { userAgent: 'convoy-relay', timeoutMs: leaseDurationMs });
  const leasePath = (leaseName?: string) =>
    resourcePath('coordination.k8s.io/v1', 'leases', namespace, leaseName);
  const api = {
    replaceNamespacedLease: ({ name: leaseName, body }: { name: string; namespace: string; body: V1Lease }) =>
      client.replace<V1Lease>(leasePath(leaseName), body),
    readNamespacedLease: ({ name: leaseName }: { name: string; namespace: string }) =>
      client.get<V1Lease>(leasePath(leaseName)),
    createNamespacedLease: ({ body }: { namespace: string; body: V1Lease }) =>
      client.create<V1Lease>(leasePath(), body),
  };
  const log = logger.child({ lease: `${namespace}/${name}`, identity });

  let running = true;
  let leading = false;
  let observed = false;
  let observation: LeaseObservation | undefined;
  let lastRenewAt = 0;
  /** Our Lease as last written, to give it up on stop. */
  let ours: V1Lease | undefined;
  let timer: NodeJS.Timeout | undefined;
  let attempt: Promise<void> = Promise.resolve();

  const leaseDurationSeconds = Math.max(1, Math.ceil(leaseDurationMs / 1000));

  const callback = (which: 'onStartedLeading' | 'onStoppedLeading') => {
    try {
      options[which]();
    } catch (error) {
      log.error(`${which} failed`, { error });
    }
  };

  const setLeading = (value: boolean) => {
    if (value === leading) return;
    leading = value;
    log.info(value ? 'started leading' : 'stopped leading');
    callback(value ? 'onStartedLeading' : 'onStoppedLeading');
  };

  /** Returns 'held' when we hold the Lease after this attempt, 'other' when someone else does, 'unknown' on errors. */
  const tryAcquireOrRenew = async (): Promise<'held' | 'other' | 'unknown'> => {
    const stamp = now();
    // The leader renews from its own last write (its resourceVersion): one request, not a read
    // and a write. A conflict or a missing Lease means it changed since: read it.
    if (leading && ours !== undefined) {
      try {
        ours = await api.replaceNamespacedLease({
          name,
          namespace,
          body: {
            ...ours,
            spec: {
              ...ours.spec,
              holderIdentity: identity,
              leaseDurationSeconds,
              renewTime: microTime(stamp),
            },
          },
        });
        return 'held';
      } catch (error) {
        if (!isStatus(error, 404, 409)) throw error;
        ours = undefined;
      }
    }
    let lease: V1Lease;
    try {
      lease = await api.readNamespacedLease({ name, namespace });
    } catch (error) {
      if (!isStatus(error, 404)) throw error;
      try {
        ours = await api.createNamespacedLease({
          namespace,
          body: {
            metadata: { name, namespace },
            spec: {
              holderIdentity: identity,
              leaseDurationSeconds,
              acquireTime: microTime(stamp),
              renewTime: microTime(stamp),
              leaseTransitions: 0,
            },
          },
        });
        observed = true;
        return 'held';
      } catch (createError) {
        if (isStatus(createError, 409)) return 'unknown'; // another replica created it first; read it next time
        throw createError;
      }
    }
    observed = true;
    const record = recordOf(lease);
    observation = observeLease(observation, record, stamp.getTime());
    const decision = leaseDecision(record, identity, observation, stamp.getTime(), leaseDurationMs);
    if (decision === 'wait') return 'other';
    const spec = lease.spec ?? {};
    try {
      ours = await api.replaceNamespacedLease({
        name,
        namespace,
        body: {
          apiVersion: 'coordination.k8s.io/v1',
          kind: 'Lease',
          metadata: { ...lease.metadata, name, namespace },
          spec: {
            ...spec,
            holderIdentity: identity,
            leaseDurationSeconds,
            acquireTime:
              decision === 'renew' && spec.acquireTime !== undefined ? spec.acquireTime : microTime(stamp),
            renewTime: microTime(stamp),
            leaseTransitions: (spec.leaseTransitions ?? 0) + (decision === 'acquire' ? 1 : 0),
          },
        },
      });
      return 'held';
    } catch (error) {
      if (isStatus(error, 409)) return 'unknown'; // changed since we read it: look again next time
      throw error;
    }
  };

  const run = async () => {
    let result: 'held' | 'other' | 'unknown';
    try {
      result = await tryAcquireOrRenew();
    } catch (error) {
      log.warn('leader election: reading or writing the Lease failed', { error });
      result = 'unknown';
    }
    if (!running) return;
    const at = now().getTime();
    if (result === 'held') {
      lastRenewAt = at;
      setLeading(true);
    } else if (leading && (result === 'other' || at - lastRenewAt > renewDeadlineMs)) {
      setLeading(false);
    }
  };

  const loop = () => {
    timer = undefined;
    if (!running) return;
    attempt = run().finally(() => {
      if (running) timer = setTimeout(loop, renewIntervalMs);
    });
  };
  loop();

  return {
    isLeader: () => leading,
    hasObserved: () => observed,
    async stop() {
      if (!running) return;
      running = false;
      clearTimeout(timer);
      await attempt;
      if (leading && ours !== undefined) {
        try {
          await api.replaceNamespacedLease({
            name,
            namespace,
            body: {
              ...ours,
              spec: {
                ...ours.spec,
                holderIdentity: '',
                leaseDurationSeconds: 1,
                renewTime: microTime(now()),
              },
            },
          });
        } catch (error) {
          // Taken over or gone already: nothing to give back.
          if (!isStatus(error, 404, 409))
            log.warn('giving up the leader Lease failed; the next leader waits for it to expire', { error });
        }
      }
      setLeading(false);
    },
  };
}

function recordOf(lease: V1Lease): LeaseRecord {
  return {
    holder: lease.spec?.holderIdentity,
    renewTime: timeText(lease.spec?.renewTime),
    leaseDurationSeconds: lease.spec?.leaseDurationSeconds,
    resourceVersion: lease.metadata?.resourceVersion,
  };
}

function timeText(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}
