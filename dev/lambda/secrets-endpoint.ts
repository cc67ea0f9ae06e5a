// A STAND-IN for AWS Secrets Manager (fauxqs has none): GetSecretValue over the service's real
// wire protocol (POST /, JSON 1.1, X-Amz-Target: secretsmanager.GetSecretValue, SigV4-signed), so
// the functions' own read of the hint key at init (functions/runtime/clients.ts → adapters/aws/
// secrets-manager.ts) runs unchanged under the emulator. It checks that a request is signed
// (Authorization AWS4-HMAC-SHA256) but not the signature; it answers nothing else.
import { createServer, type Server } from 'node:http';

export interface SecretsEndpoint {
  readonly url: string;
  /** Adds (or replaces) a secret; returns its ARN. */
  put(name: string, value: string): string;
  /** GetSecretValue calls answered so far (by SecretId). */
  readonly reads: readonly string[];
  stop(): Promise<void>;
}

export async function startSecretsEndpoint(
  options: { region?: string; account?: string } = {},
): Promise<SecretsEndpoint> {
  const region = options.region ?? 'us-east-1';
  const account = options.account ?? '000000000000';
  const secrets = new Map<string, { arn: string; name: string; value: string; version: string }>();
  const reads: string[] = [];
  const answer = (res: import('node:http').ServerResponse, status: number, body: unknown): void => {
    res.writeHead(status, { 'content-type': 'application/x-amz-json-1.1' });
    res.end(JSON.stringify(body));
  };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const target = req.headers['x-amz-target'];
      if (req.method !== 'POST' || target !== 'secretsmanager.GetSecretValue') {
        return answer(res, 400, {
          __type: 'UnknownOperationException',
          message: `this stand-in answers only secretsmanager.GetSecretValue, not ${String(target)}`,
        });
      }
      if (!String(req.headers.authorization ?? '').startsWith('AWS4-HMAC-SHA256 ')) {
        return answer(res, 400, {
          __type: 'MissingAuthenticationTokenException',
          message: 'Missing Authentication Token',
        });
      }
      let id: unknown;
      try {
        id = (JSON.parse(Buffer.concat(chunks).toString('utf8')) as { SecretId?: unknown }).SecretId;
      } catch {
        return answer(res, 400, { __type: 'SerializationException', message: 'the body is not JSON' });
      }
      const secret = [...secrets.values()].find((s) => s.arn === id || s.name === id);
      if (typeof id !== 'string' || secret === undefined) {
        return answer(res, 400, {
          __type: 'ResourceNotFoundException',
          message: "Secrets Manager can't find the specified secret.",
        });
      }
      reads.push(id);
      answer(res, 200, {
        ARN: secret.arn,
        Name: secret.name,
        SecretString: secret.value,
        VersionId: secret.version,
        VersionStages: ['AWSCURRENT'],
        CreatedDate: Date.now() / 1000,
      });
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  return {
    url: `http://127.0.0.1:${port}`,
    reads,
    put(name, value) {
      const arn = `arn:aws:secretsmanager:${region}:${account}:secret:${name}-${Math.random().toString(36).slice(2, 8)}`;
      secrets.set(name, { arn, name, value, version: crypto.randomUUID() });
      return arn;
    },
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
