/**
 * The delivery port (domain/notify/event.ts `Deliver`) over every destination: one function that
 * dispatches by destination type. Each adapter classifies its failures: retryable (5xx, 429, a
 * timeout, a broken connection, EventBridge's throttling) or not (4xx, a refused address, an
 * invalid URL, a missing commit); the delivery loop retries the first with backoff and reports the
 * second. No reason ever holds a Secret value: URLs are named by host, tokens and keys never.
 */
import type { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import type { Deliver, DeliveryResult } from '../../domain/notify/event.ts';
import type { Egress } from '../egress/client.ts';
import { deliverCommitStatus } from './commit-status.ts';
import { deliverEventBridge } from './eventbridge.ts';
import { DEFAULT_TIMEOUT_MS, failed } from './http.ts';
import { deliverSlack } from './slack.ts';
import { deliverWebhook } from './webhook.ts';

export interface DeliverOptions {
  /** The installation's egress client: every webhook, Slack and forge request goes through it. */
  readonly egress: Egress;
  /** The EventBridge client (absent where convoy runs without AWS: an eventBridge destination then fails, not retried). */
  readonly eventBridge?: EventBridgeClient | undefined;
  readonly now?: (() => Date) | undefined;
  /** How long a destination has to answer (headers, then each silence in the body); default 10 s. */
  readonly timeoutMs?: number | undefined;
  /**
   * One more accepted prefix for Slack URLs, for a local Slack stand-in (`convoy dev`, tests).
   * An installation setting: never read from a tenant's object or Secret.
   */
  readonly slackBaseUrl?: string | undefined;
}

export function createDeliver(options: DeliverOptions): Deliver {
  const now = options.now ?? (() => new Date());
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const { egress } = options;
  return async (destination, event): Promise<DeliveryResult> => {
    switch (destination.type) {
      case 'webhook':
        return deliverWebhook({ egress, now, timeoutMs }, destination, event);
      case 'slack':
        return deliverSlack({ egress, timeoutMs, slackBaseUrl: options.slackBaseUrl }, destination, event);
      case 'eventBridge':
        return deliverEventBridge(options.eventBridge, destination, event);
      case 'commitStatus':
        return deliverCommitStatus({ egress, timeoutMs }, destination, event);
      default:
        return failed(
          false,
          `unknown destination type ${String((destination as { type?: unknown }).type)} (not retried)`,
        );
    }
  };
}
