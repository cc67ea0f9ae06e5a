/**
 * The generic webhook: the NotificationEvent as the JSON body, signed when the destination has an
 * HMAC key. docs/notifications.md ("Destinations") has the receiver's verification recipe.
 *
 * The signature is HMAC-SHA256 over `<timestamp>.<body>`, sent as
 * `X-Convoy-Signature-256: sha256=<hex>` beside `X-Convoy-Timestamp: <unix seconds>`. The
 * timestamp is inside the MAC so a receiver can refuse a replay: a captured request resent later
 * carries an old timestamp, and changing it breaks the signature.
 */
import { createHmac } from 'node:crypto';
import { webhookUrlProblem } from '../../domain/notify/destination-urls.ts';
import type { DeliveryResult, NotificationEvent } from '../../domain/notify/event.ts';
import type { Egress } from '../egress/client.ts';
import { failed, post, statusResult, hostOf } from './http.ts';

export const SIGNATURE_HEADER = 'X-Convoy-Signature-256';
export const TIMESTAMP_HEADER = 'X-Convoy-Timestamp';

/** `sha256=<hex>` of `<timestamp>.<body>` under `key`. */
export function webhookSignature(key: string, timestamp: number, body: string): string {
  return `sha256=${createHmac('sha256', key).update(`${timestamp}.${body}`).digest('hex')}`;
}

export interface WebhookContext {
  readonly egress: Egress;
  readonly now: () => Date;
  readonly timeoutMs: number;
}

/** The headers of one webhook delivery (exported for the docs' example and the tests). */
export function webhookHeaders(
  event: NotificationEvent,
  body: string,
  timestamp: number,
  hmacKey: string | undefined,
): Record<string, string> {
  const headers: Record<string, string> = {
    'Content-Type': 'application/json',
    'X-Convoy-Event': event.transition,
    'X-Convoy-Delivery': event.id,
    [TIMESTAMP_HEADER]: String(timestamp),
  };
  if (hmacKey !== undefined && hmacKey !== '')
    headers[SIGNATURE_HEADER] = webhookSignature(hmacKey, timestamp, body);
  return headers;
}

export async function deliverWebhook(
  ctx: WebhookContext,
  destination: { readonly url: string; readonly hmacKey?: string | undefined },
  event: NotificationEvent,
): Promise<DeliveryResult> {
  const problem = webhookUrlProblem(destination.url);
  if (problem !== undefined) return failed(false, `${problem} (not retried)`);
  const body = JSON.stringify(event);
  const timestamp = Math.floor(ctx.now().getTime() / 1000);
  const outcome = await post(ctx.egress, {
    url: destination.url,
    headers: webhookHeaders(event, body, timestamp, destination.hmacKey),
    body,
    what: 'webhook',
    timeoutMs: ctx.timeoutMs,
  });
  if (!outcome.ok) return outcome.result;
  return statusResult('webhook', hostOf(destination.url), outcome.answer.status) ?? { ok: true };
}
