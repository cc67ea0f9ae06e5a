// fauxqs on a free port and an SQSClient for it (the real AWS SDK over the wire protocol), for
// unit tests of SQS adapters.
import { SQSClient } from '@aws-sdk/client-sqs';
import { startFauxqs, type FauxqsServer } from 'fauxqs';

export interface FauxqsSqs {
  readonly server: FauxqsServer;
  readonly sqs: SQSClient;
  stop(): Promise<void>;
}

export async function startFauxqsSqs(): Promise<FauxqsSqs> {
  const server = await startFauxqs({ port: 0, logger: false });
  const sqs = new SQSClient({
    endpoint: `http://127.0.0.1:${server.port}`,
    region: 'us-east-1',
    credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
  });
  return {
    server,
    sqs,
    async stop() {
      sqs.destroy();
      await server.stop();
    },
  };
}
