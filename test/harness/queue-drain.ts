// Reads a queue empty over the real SQS wire protocol (fauxqs): every message is parsed as the
// functions parse it, appended to `into` in the order received, and deleted. A body that does not
// parse fails the test: whoever sent it (the relay under test) broke the queue contract.
import { DeleteMessageBatchCommand, ReceiveMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import { parseQueueMessage, type QueueMessage } from '../../domain/runtime/queue-message.ts';

export async function drainQueueMessages(
  sqs: SQSClient,
  queueUrl: string,
  into: QueueMessage[],
): Promise<void> {
  for (;;) {
    const { Messages = [] } = await sqs.send(
      new ReceiveMessageCommand({ QueueUrl: queueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 0 }),
    );
    if (Messages.length === 0) return;
    for (const m of Messages) {
      const parsed = parseQueueMessage(m.Body ?? '');
      if (!parsed.ok) throw new Error(`a message on ${queueUrl} does not parse: ${parsed.error}`);
      into.push(parsed.message);
    }
    await sqs.send(
      new DeleteMessageBatchCommand({
        QueueUrl: queueUrl,
        Entries: Messages.map((m, i) => ({ Id: `d${i}`, ReceiptHandle: m.ReceiptHandle ?? '' })),
      }),
    );
  }
}
