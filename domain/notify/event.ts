/**
 * What convoy tells a destination when a verdict changes: one documented JSON shape for every
 * destination (docs/notifications.md). Pure data; the adapters in adapters/notify/ turn it into a
 * webhook body, a Slack message, an EventBridge entry or a commit status.
 *
 * `id` is stable for one transition of one object (its uid and the transition's sequence number),
 * so a receiver that sees the same id twice — the one window where a crash between a destination's
 * answer and the record of it in status resends — can drop the second.
 */

/** The transitions a Notification can subscribe to (`spec.transitions`). */
export const TRANSITIONS = [
  // Release verdict (domain/status/verdict.ts)
  'Ready',
  'NotReady',
  'Failed',
  'Recovered',
  'Suspended',
  'Resumed',
  // ReleaseSet steps
  'StepStarted',
  'StepSucceeded',
  'StepFailed',
  'Halted',
  'WaitingForApproval',
  'RolledBack',
  // drift
  'DriftDetected',
  'DriftCorrected',
] as const;

export type Transition = (typeof TRANSITIONS)[number];

export const NOTIFICATION_SCHEMA = 'convoy.dev/notification/v1';

export interface NotificationEvent {
  readonly schema: typeof NOTIFICATION_SCHEMA;
  /** `<object uid>/<sequence>`: the same for every resend of this transition. */
  readonly id: string;
  readonly transition: Transition;
  readonly object: {
    readonly kind: 'Release' | 'ReleaseSet';
    readonly namespace: string;
    readonly name: string;
    readonly uid: string;
  };
  /** The target Cluster of a Release (absent for the in-cluster target and for a ReleaseSet). */
  readonly cluster?: string | undefined;
  /** The verdict after the transition: kind ready | wait | failure | suspended, its signal and reason. */
  readonly verdict: {
    readonly kind: string;
    readonly signal?: string | undefined;
    readonly reason?: string | undefined;
    /** Never Secret data: condition messages are already free of it. */
    readonly message?: string | undefined;
  };
  readonly previous?: { readonly kind: string; readonly reason?: string | undefined } | undefined;
  /** The render the verdict is about, and where it came from (the commit a commit status names). */
  readonly render?:
    | {
        readonly ref?: string | undefined;
        readonly revision?: string | undefined;
        readonly repository?: string | undefined;
      }
    | undefined;
  /** ReleaseSet transitions: the step. */
  readonly step?: { readonly index: number; readonly name?: string | undefined } | undefined;
  readonly occurredAt: string;
  /** The dashboard page of the object, when the installation sets its public URL. */
  readonly dashboardUrl?: string | undefined;
}

/**
 * A destination with what its Secret holds, read as the Release's identity before delivery.
 * Secret values live only in memory for one delivery; nothing here is logged or written.
 */
export type ResolvedDestination =
  | { readonly type: 'eventBridge'; readonly busName: string; readonly source?: string | undefined }
  | { readonly type: 'webhook'; readonly url: string; readonly hmacKey?: string | undefined }
  | { readonly type: 'slack'; readonly url: string }
  | {
      readonly type: 'commitStatus';
      readonly provider: 'github' | 'gitlab';
      readonly token: string;
      /** API base, e.g. https://api.github.com or https://gitlab.example.com/api/v4. */
      readonly apiUrl: string;
      /** github: owner/repo; gitlab: the project path or id. Derived from the source URL when absent. */
      readonly repository: string;
    };

/** A destination's answer. `retryable`: 5xx, 429, timeouts, connection failures; never a 4xx or a refused address. */
export type DeliveryResult =
  { readonly ok: true } | { readonly ok: false; readonly retryable: boolean; readonly reason: string };

/** The port every destination adapter implements (adapters/notify/). */
export type Deliver = (destination: ResolvedDestination, event: NotificationEvent) => Promise<DeliveryResult>;
