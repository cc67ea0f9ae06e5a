// What the queue did with each message, seen on the wire of the one SQSClient a convoy runtime's
// pollers, handlers and relay share (dev/runtime.ts): every delivery (ReceiveMessage's answer) and
// every visibility change (ChangeMessageVisibility[Batch]) the runtime asked for, by message.
//
// It lets a test assert on cause and order instead of wall-clock gaps: "the queue held the message
// at least as long as the visibility the outcome asked for" is true however slow the machine is
// (the queue makes a message visible again at request time + VisibilityTimeout, fauxqs in
// milliseconds; the change is timed before its request leaves, the delivery after its answer came).
import type { SQSClient } from '@aws-sdk/client-sqs';

export interface Delivery {
  readonly messageId: string;
  /** ApproximateReceiveCount: 1 on the first delivery. */
  readonly receiveCount: number;
  /** When ReceiveMessage's answer with this delivery reached the client (ms since the epoch). */
  readonly receivedAt: number;
  readonly receiptHandle: string;
}

export interface VisibilityChange {
  readonly messageId: string;
  /** The delivery's receiveCount whose receipt handle the change named. */
  readonly receiveCount: number;
  readonly seconds: number;
  /** Just before the request left the client (ms since the epoch). */
  readonly requestedAt: number;
}

/** One redelivery of a message, with what the delivery before it asked for. */
export interface Hold {
  readonly receiveCount: number;
  /** The visibility changes the previous delivery asked for, in order (the runtime makes at most one). */
  readonly askedSeconds: readonly number[];
  /** From the last such change's request to this delivery's answer. */
  readonly heldMs: number;
}

export interface QueueTap {
  deliveries(messageId: string): Delivery[];
  visibilityChanges(messageId: string): VisibilityChange[];
  /** Each redelivery (receiveCount ≥ 2) of the message, oldest first. */
  holds(messageId: string): Hold[];
  stop(): void;
}

interface Received {
  Messages?: { MessageId?: string; ReceiptHandle?: string; Attributes?: Record<string, string> }[];
}
interface VisibilityInput {
  ReceiptHandle?: string;
  VisibilityTimeout?: number;
  Entries?: { Id?: string; ReceiptHandle?: string; VisibilityTimeout?: number }[];
}
interface VisibilityBatchOutput {
  Failed?: { Id?: string }[];
}

export function tapQueue(sqs: SQSClient, queueUrl: string): QueueTap {
  const name = `queueTap-${Math.random().toString(36).slice(2)}`;
  const delivered: Delivery[] = [];
  const byHandle = new Map<string, Delivery>();
  const changes: VisibilityChange[] = [];

  sqs.middlewareStack.add(
    (next, context) => async (args) => {
      const input = args.input as { QueueUrl?: string } & VisibilityInput;
      if (input.QueueUrl !== queueUrl) return next(args);
      const command = context.commandName;
      if (command === 'ChangeMessageVisibilityCommand' || command === 'ChangeMessageVisibilityBatchCommand') {
        const requestedAt = Date.now();
        const result = await next(args);
        const failed = new Set(((result.output as VisibilityBatchOutput).Failed ?? []).map((f) => f.Id));
        const entries =
          command === 'ChangeMessageVisibilityCommand'
            ? [
                {
                  Id: undefined,
                  ReceiptHandle: input.ReceiptHandle,
                  VisibilityTimeout: input.VisibilityTimeout,
                },
              ]
            : (input.Entries ?? []);
        for (const entry of entries) {
          const delivery = byHandle.get(entry.ReceiptHandle ?? '');
          if (delivery === undefined || (entry.Id !== undefined && failed.has(entry.Id))) continue;
          changes.push({
            messageId: delivery.messageId,
            receiveCount: delivery.receiveCount,
            seconds: entry.VisibilityTimeout ?? Number.NaN,
            requestedAt,
          });
        }
        return result;
      }
      const result = await next(args);
      if (command === 'ReceiveMessageCommand') {
        const receivedAt = Date.now();
        for (const m of (result.output as Received).Messages ?? []) {
          if (m.MessageId === undefined || m.ReceiptHandle === undefined) continue;
          const delivery = {
            messageId: m.MessageId,
            receiveCount: Number(m.Attributes?.['ApproximateReceiveCount'] ?? Number.NaN),
            receivedAt,
            receiptHandle: m.ReceiptHandle,
          };
          delivered.push(delivery);
          byHandle.set(m.ReceiptHandle, delivery);
        }
      }
      return result;
    },
    { step: 'initialize', name },
  );

  const deliveries = (messageId: string) =>
    delivered.filter((d) => d.messageId === messageId).sort((a, b) => a.receiveCount - b.receiveCount);
  const visibilityChanges = (messageId: string) => changes.filter((c) => c.messageId === messageId);
  return {
    deliveries,
    visibilityChanges,
    holds(messageId) {
      const list = deliveries(messageId);
      return list.slice(1).map((delivery, i) => {
        const asked = visibilityChanges(messageId).filter((c) => c.receiveCount === list[i]?.receiveCount);
        const last = asked.at(-1);
        return {
          receiveCount: delivery.receiveCount,
          askedSeconds: asked.map((c) => c.seconds),
          heldMs: last === undefined ? Number.NaN : delivery.receivedAt - last.requestedAt,
        };
      });
    },
    stop: () => {
      sqs.middlewareStack.remove(name);
    },
  };
}
