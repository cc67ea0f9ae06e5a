// An SQS client that sends every message twice: the "every message delivered twice" fault.
import { SendMessageBatchCommand, SendMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';

export function duplicating(sqs: SQSClient): SQSClient {
  const send = sqs.send.bind(sqs) as (command: unknown) => Promise<unknown>;
  return new Proxy(sqs, {
    get(target, property, receiver) {
      if (property !== 'send') return Reflect.get(target, property, receiver) as unknown;
      return async (command: unknown) => {
        const first = await send(command);
        if (command instanceof SendMessageCommand || command instanceof SendMessageBatchCommand)
          await send(command);
        return first;
      };
    },
  });
}
