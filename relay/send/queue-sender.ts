/**
 * Sends Releases to the loop queues: coalesces per (loop, Release) (see
 * domain/relay/coalesce.ts), then SendMessageBatch, 10 entries per call.
 * Throttling, server errors and entries SQS failed on its side are retried
 * with backoff a bounded number of times; what still fails is logged and
 * counted (the Release's timers send it again later).
 */
import {
  SendMessageBatchCommand,
  type SendMessageBatchCommandOutput,
  type SendMessageBatchRequestEntry,
} from '@aws-sdk/client-sqs';
import {
  createCoalesceBuffer,
  FLEET_COALESCE_RULE,
  type CoalescedSend,
  type ReleaseKey,
} from '../../domain/relay/coalesce.ts';
import {
  asciiJson,
  FLEET_LOOP,
  queueMessageBody,
  MESSAGE_LOOPS,
  QUEUE_MESSAGE_VERSION,
  type Loop,
  type MessageLoop,
} from '../../domain/runtime/queue-message.ts';
import type { Logger } from '../../platform/logger.ts';
import type { RelayMetrics } from '../metrics.ts';

/** The one SQS call the sender makes; an SQSClient fits. */
export interface BatchSendPort {
  send(command: SendMessageBatchCommand): Promise<SendMessageBatchCommandOutput>;
}

export interface QueueSenderOptions {
  readonly sqs: BatchSendPort;
  /** The Release loops' queues, and the fleet queue when the relay sends ReleaseSets. */
  readonly queueUrls: Readonly<Record<Loop, string>> & {
    readonly fleet?: string | undefined;
    readonly notify?: string | undefined;
  };
  readonly logger: Logger;
  readonly metrics: RelayMetrics;
  /** Events for one (loop, Release) within this window become one message. Default 200 ms. */
  readonly windowMs?: number;
  /** A (loop, Release) is sent at most once per this time; later events wait. Default 1 s. */
  readonly minSpacingMs?: number;
  /** Attempts per batch, the first included. Default 5. */
  readonly maxAttempts?: number;
  /** First retry delay, doubled per attempt up to 5 s. Default 100 ms. */
  readonly retryBaseMs?: number;
  readonly now?: () => Date;
  /**
   * The Release as the watch last saw it: sent with the reconcile message of a Release just
   * added, so that its first run needs no read. Left out above MAX_RELEASE_BYTES.
   */
  readonly releaseOf?: (key: ReleaseKey) => Record<string, unknown> | undefined;
}

export interface QueueSender {
  /**
   * Schedules a message; never throws (failures are logged and counted). A fleet message (the
   * key is a ReleaseSet's) follows FLEET_COALESCE_RULE; without a fleet queue it is dropped.
   */
  enqueue(loop: MessageLoop, key: ReleaseKey, cause: string): void;
  /** Sends everything pending now and waits for every send in flight. */
  flush(): Promise<void>;
  /** Stops: with flush (default) sends what is pending first; without, drops it. Waits for sends in flight. */
  stop(options?: { flush?: boolean }): Promise<void>;
  /** Sends waiting for their window. */
  pending(): number;
}

const MAX_BATCH = 10;
const MAX_RETRY_DELAY_MS = 5_000;
const MAX_CAUSE = 1024;
const MAX_RELEASE_BYTES = 64 * 1024;

export function createQueueSender(options: QueueSenderOptions): QueueSender {
  const { sqs, queueUrls, logger, metrics } = options;
  const now = options.now ?? (() => new Date());
  const maxAttempts = Math.max(1, options.maxAttempts ?? 5);
  const retryBaseMs = options.retryBaseMs ?? 100;
  const buffer = createCoalesceBuffer(
    { windowMs: options.windowMs ?? 200, minSpacingMs: options.minSpacingMs ?? 1_000 },
    { [FLEET_LOOP]: FLEET_COALESCE_RULE },
  );
  const inFlight = new Set<Promise<void>>();
  let timer: NodeJS.Timeout | undefined;
  let timerDueAt: number | undefined;
  let stopped = false;

  const track = (work: Promise<void>) => {
    inFlight.add(work);
    void work.finally(() => inFlight.delete(work));
  };

  const schedule = () => {
    if (stopped) return;
    const next = buffer.nextDueAt();
    if (next === undefined || (timerDueAt !== undefined && timerDueAt <= next)) return;
    clearTimeout(timer);
    timerDueAt = next;
    timer = setTimeout(onTimer, Math.max(0, next - now().getTime()));
  };

  function onTimer() {
    timer = undefined;
    timerDueAt = undefined;
    dispatch(buffer.takeDue(now().getTime()));
    schedule();
  }

  const dispatch = (sends: CoalescedSend[]) => {
    for (const loop of MESSAGE_LOOPS) {
      const forLoop = sends.filter((s) => s.loop === loop);
      for (let i = 0; i < forLoop.length; i += MAX_BATCH)
        track(sendBatch(loop, forLoop.slice(i, i + MAX_BATCH)));
    }
  };

  const releaseFor = (loop: MessageLoop, send: CoalescedSend): { release?: Record<string, unknown> } => {
    if (
      loop !== 'reconcile' ||
      !send.cause.startsWith('watch: Release added') ||
      options.releaseOf === undefined
    )
      return {};
    const release = options.releaseOf(send.key);
    const uid = (release?.['metadata'] as { uid?: unknown } | undefined)?.uid;
    if (release === undefined || uid !== send.key.uid || asciiJson(release).length > MAX_RELEASE_BYTES)
      return {};
    return { release };
  };

  /** Never rejects: every failure ends in a log line and a metric. */
  const sendBatch = async (loop: MessageLoop, sends: CoalescedSend[]): Promise<void> => {
    const queueUrl = queueUrls[loop];
    if (queueUrl === undefined) return;
    let entries = new Map<string, { send: CoalescedSend; entry: SendMessageBatchRequestEntry }>();
    const sentAt = now().toISOString();
    sends.forEach((send, i) => {
      try {
        const body = queueMessageBody({
          v: QUEUE_MESSAGE_VERSION,
          loop,
          namespace: send.key.namespace,
          name: send.key.name,
          uid: send.key.uid,
          cause: causeText(send),
          sentAt,
          ...releaseFor(loop, send),
        });
        entries.set(`m${i}`, { send, entry: { Id: `m${i}`, MessageBody: body } });
      } catch (error) {
        metrics.sendErrors.inc({ loop });
        logger.error('queue message is invalid; not sent', {
          loop,
          namespace: send.key.namespace,
          release: send.key.name,
          error,
        });
      }
    });

    for (let attempt = 1; entries.size > 0; attempt++) {
      let retryable = new Map<string, { send: CoalescedSend; entry: SendMessageBatchRequestEntry }>();
      let lastError: unknown;
      try {
        const out = await sqs.send(
          new SendMessageBatchCommand({
            QueueUrl: queueUrl,
            Entries: [...entries.values()].map((e) => e.entry),
          }),
        );
        const at = now().getTime();
        for (const ok of out.Successful ?? []) {
          const sent = ok.Id === undefined ? undefined : entries.get(ok.Id);
          if (sent === undefined) continue;
          metrics.messagesSent.inc({ loop });
          metrics.sendLag.observe(Math.max(0, (at - sent.send.firstAt) / 1000), { loop });
        }
        for (const failed of out.Failed ?? []) {
          const id = failed.Id;
          const entry = id === undefined ? undefined : entries.get(id);
          if (id === undefined || entry === undefined) continue;
          if (failed.SenderFault === true) {
            metrics.sendErrors.inc({ loop });
            logger.error('SQS refused the message; not retried', {
              loop,
              namespace: entry.send.key.namespace,
              release: entry.send.key.name,
              code: failed.Code,
              reason: failed.Message,
            });
          } else {
            retryable.set(id, entry);
            lastError = new Error(
              `SQS failed the entry with ${failed.Code ?? 'an unknown code'}: ${failed.Message ?? ''}`,
            );
          }
        }
      } catch (error) {
        lastError = error;
        if (isRetryable(error)) retryable = entries;
        else {
          for (const { send } of entries.values()) {
            metrics.sendErrors.inc({ loop });
            logger.error('SendMessageBatch failed; not retried', {
              loop,
              queueUrl,
              namespace: send.key.namespace,
              release: send.key.name,
              error,
            });
          }
        }
      }
      if (retryable.size === 0) return;
      if (attempt >= maxAttempts) {
        for (const { send } of retryable.values()) {
          metrics.sendErrors.inc({ loop });
          logger.error(
            `SendMessageBatch still failing after ${attempt} attempts; the Release's timers will send it again`,
            {
              loop,
              queueUrl,
              namespace: send.key.namespace,
              release: send.key.name,
              error: lastError,
            },
          );
        }
        return;
      }
      metrics.sendRetries.inc({ loop });
      const delay = Math.min(retryBaseMs * 2 ** (attempt - 1), MAX_RETRY_DELAY_MS);
      logger.warn('SendMessageBatch failed; retrying', {
        loop,
        queueUrl,
        attempt,
        delayMs: delay,
        entries: retryable.size,
        error: lastError,
      });
      await new Promise((resolve) => setTimeout(resolve, delay));
      entries = retryable;
    }
  };

  const waitInFlight = async () => {
    while (inFlight.size > 0) await Promise.all([...inFlight]);
  };

  return {
    enqueue(loop, key, cause) {
      if (stopped || queueUrls[loop] === undefined) return;
      buffer.add(loop, key, cause, now().getTime());
      schedule();
    },
    async flush() {
      dispatch(buffer.takeAll(now().getTime()));
      await waitInFlight();
    },
    async stop(stopOptions = {}) {
      stopped = true;
      clearTimeout(timer);
      timer = undefined;
      const rest = buffer.takeAll(now().getTime());
      if (stopOptions.flush ?? true) dispatch(rest);
      await waitInFlight();
    },
    pending: () => buffer.size(),
  };
}

function causeText(send: CoalescedSend): string {
  const text = send.count > 1 ? `${send.cause} (and ${send.count - 1} more events)` : send.cause;
  return text.length > MAX_CAUSE ? `${text.slice(0, MAX_CAUSE - 1)}…` : text;
}

const THROTTLING = /Throttl|TooManyRequests|RequestLimitExceeded|ServiceUnavailable|SlowDown/i;

/** Throttling, server errors and network failures (no HTTP status) are worth another try. */
export function isRetryable(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const meta = error as Error & { $retryable?: unknown; $metadata?: { httpStatusCode?: number } };
  if (meta.$retryable !== undefined) return true;
  if (THROTTLING.test(error.name)) return true;
  const status = meta.$metadata?.httpStatusCode;
  if (status === undefined) return !('$fault' in error) || (error as { $fault?: string }).$fault === 'server';
  return status >= 500 || status === 429;
}
