/**
 * What startRelay (relay/relay.ts) is given: the management cluster, the queues, where its
 * Leases live, and the knobs of its timers, sender, informers and leader election. relay.ts
 * re-exports it.
 */
import type { KubeClientConfig } from '../adapters/kube/kubeconfig.ts';
import type { LeasePort } from '../domain/runtime/lease.ts';
import type { Loop } from '../domain/runtime/queue-message.ts';
import type { Logger } from '../platform/logger.ts';
import type { FleetLeasePort } from './fleet-leases.ts';
import type { BatchSendPort } from './send/queue-sender.ts';

export interface RelayOptions {
  /** The management cluster, as the relay's own identity (adapters/kube/kubeconfig.ts). */
  readonly kube: KubeClientConfig;
  /** An SQSClient (only SendMessageBatch is used). */
  readonly sqs: BatchSendPort;
  readonly queueUrls: Readonly<Record<Loop, string>>;
  /**
   * The fleet queue (CONVOY_FLEET_QUEUE_URL). Set: the relay watches ReleaseSets and
   * sends them fleet messages. Left out: it does not watch sets at all (an install without the
   * fleet function keeps working as before).
   */
  readonly fleetQueueUrl?: string | undefined;
  /** The notify queue (CONVOY_NOTIFY_QUEUE_URL). Set: the relay watches Notifications and sends notify messages. */
  readonly notifyQueueUrl?: string | undefined;
  /** Where the leader Lease and the per-Release Leases live. */
  readonly installationNamespace: string;
  readonly logger: Logger;
  /** Removes a deleted Release's Leases; default the Kubernetes Leases in the installation namespace. */
  readonly leases?: Pick<LeasePort, 'removeAll' | 'releaseUids'> & Partial<LeasePort>;
  /** Removes a deleted ReleaseSet's Lease (with a fleet queue); default the Kubernetes Leases in the installation namespace. */
  readonly fleetLeases?: FleetLeasePort;
  readonly now?: () => Date;
  /** Interval timers (reconcile, drift, health, and fleet with a fleet queue); default true. */
  readonly timers?: boolean;
  /** Leader identity; default hostname + random suffix. */
  readonly identity?: string;
  /** Timer tick; default 1 s. */
  readonly tickMs?: number;
  /** Coalescing window and per-Release spacing of the sender; defaults 200 ms and 1 s. */
  readonly windowMs?: number;
  readonly minSpacingMs?: number;
  /** Periodic relist of every informer; default 10 min. */
  readonly relistIntervalMs?: number;
  readonly informerBackoff?: { readonly initialMs: number; readonly maxMs: number };
  readonly leaderElection?: { readonly leaseDurationMs?: number; readonly renewIntervalMs?: number };
  /** Objects per list page of the convoy kinds; default LIST_PAGE_SIZE (500). */
  readonly listPageSize?: number;
  /** Watch labelled Secrets (metadata only); default true. false: Secret changes wait for the interval. */
  readonly watchSecrets?: boolean;
}
