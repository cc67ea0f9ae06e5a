/**
 * Amazon EventBridge: one PutEvents entry per notification on the bus the destination names, with
 * Source `convoy.dev` (or the destination's), DetailType `Convoy <Transition>` (e.g.
 * "Convoy Failed", "Convoy StepFailed": one per transition, for rules to match) and the
 * NotificationEvent as Detail. The request goes to the installation's AWS API endpoint with the
 * functions' role, not to a tenant-named URL, so it does not pass the egress policy.
 *
 * An entry EventBridge refuses (FailedEntryCount > 0) is retryable when its ErrorCode is one AWS
 * documents as retryable (InternalFailure, ThrottlingException); any other code
 * (AccessDeniedException, MalformedDetail, NotAuthorizedForSourceException, …) is not.
 */
import {
  EventBridgeClient,
  PutEventsCommand,
  type EventBridgeClientConfig,
} from '@aws-sdk/client-eventbridge';
import type { DeliveryResult, NotificationEvent, Transition } from '../../domain/notify/event.ts';
import { failureOf } from '../egress/errors.ts';
import { failed } from './http.ts';

export const EVENT_SOURCE = 'convoy.dev';

/** EventBridge's limit on one entry (PutEvents: "the total entry size must be less than 256 KB"). */
export const MAX_ENTRY_BYTES = 256 * 1024;

/** Entry error codes AWS documents as retryable (PutEventsResultEntry.ErrorCode). */
const RETRYABLE_CODES = new Set(['InternalFailure', 'ThrottlingException', 'InternalException']);

/** Exceptions of the call itself that waiting can fix. */
const RETRYABLE_ERRORS = new Set(['ThrottlingException', 'InternalException', 'ServiceUnavailable']);

/**
 * The client a composition root gives createDeliver: one attempt per delivery (the notify loop
 * retries with its own backoff and records each attempt; the SDK's own retries would hide them).
 * `endpoint` points it at convoy dev's receiver or a test's stand-in.
 */
export function createEventBridgeClient(config: EventBridgeClientConfig = {}): EventBridgeClient {
  return new EventBridgeClient({ maxAttempts: 1, ...config });
}

export function detailType(transition: Transition): string {
  return `Convoy ${transition}`;
}

/**
 * An entry's size as EventBridge counts it (https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-putevent-size.html):
 * 14 bytes for Time, the UTF-8 bytes of Source, DetailType, Detail and each Resource.
 */
export function entrySize(entry: {
  Source: string;
  DetailType: string;
  Detail: string;
  Resources?: string[];
}): number {
  const utf8 = (s: string) => Buffer.byteLength(s, 'utf8');
  return (
    14 +
    utf8(entry.Source) +
    utf8(entry.DetailType) +
    utf8(entry.Detail) +
    (entry.Resources ?? []).reduce((n, r) => n + utf8(r), 0)
  );
}

function sdkErrorResult(bus: string, error: unknown): DeliveryResult {
  const e = error as { name?: unknown; $metadata?: { httpStatusCode?: unknown }; $retryable?: unknown };
  const name = typeof e.name === 'string' ? e.name : 'Error';
  const status = typeof e.$metadata?.httpStatusCode === 'number' ? e.$metadata.httpStatusCode : undefined;
  if (status === undefined) {
    // The client's own configuration: no request was made (the SDK's message is matched, never repeated).
    if (error instanceof Error && /^Region is missing/.test(error.message)) {
      return failed(false, `EventBridge bus ${bus}: the client has no AWS region (AWS_REGION) (not retried)`);
    }
    if (name === 'CredentialsProviderError') {
      return failed(true, `EventBridge bus ${bus}: no AWS credentials could be loaded (will retry)`);
    }
    // No answer from EventBridge: a network failure or a timeout.
    return failed(true, `EventBridge bus ${bus}: ${failureOf(error)} (will retry)`);
  }
  const retryable =
    RETRYABLE_ERRORS.has(name) || e.$retryable !== undefined || status >= 500 || status === 429;
  return failed(
    retryable,
    `EventBridge bus ${bus}: PutEvents failed with ${name} (HTTP ${status})${retryable ? ' (will retry)' : ' (not retried)'}`,
  );
}

export async function deliverEventBridge(
  client: EventBridgeClient | undefined,
  destination: { readonly busName: string; readonly source?: string | undefined },
  event: NotificationEvent,
): Promise<DeliveryResult> {
  const bus = destination.busName;
  if (client === undefined) {
    return failed(false, `EventBridge bus ${bus}: this installation has no EventBridge client (not retried)`);
  }
  const entry = {
    EventBusName: bus,
    Source: destination.source ?? EVENT_SOURCE,
    DetailType: detailType(event.transition),
    Detail: JSON.stringify(event),
    Time: new Date(event.occurredAt),
  };
  const size = entrySize(entry);
  if (size > MAX_ENTRY_BYTES) {
    return failed(
      false,
      `EventBridge bus ${bus}: the event is ${size} bytes, over EventBridge's entry limit of ${MAX_ENTRY_BYTES} bytes (not retried)`,
    );
  }
  let answer;
  try {
    answer = await client.send(new PutEventsCommand({ Entries: [entry] }));
  } catch (error) {
    return sdkErrorResult(bus, error);
  }
  if ((answer.FailedEntryCount ?? 0) === 0) return { ok: true };
  const code = answer.Entries?.[0]?.ErrorCode ?? 'an unnamed error';
  const retryable = RETRYABLE_CODES.has(code);
  return failed(
    retryable,
    `EventBridge bus ${bus} refused the entry: ${code}${retryable ? ' (will retry)' : ' (not retried)'}`,
  );
}
