// `convoy dev`'s notification receiver: one loopback HTTP server that stands in for every
// notification destination, records what arrives and lists it, so a developer sees what convoy
// would send without a Slack workspace, a webhook endpoint or AWS:
//   POST <url>/webhook/<anything>     a generic webhook (answers 204)
//   POST <url>/services/T…/B…/<x>     a Slack incoming webhook (answers "ok"; convoy dev sets the
//                                     installation's slackBaseUrl to <url>/services/)
//   POST <url>/ with X-Amz-Target: AWSEvents.PutEvents
//                                     the EventBridge endpoint of convoy dev (answers as PutEvents)
//   GET  <url>/deliveries             what arrived, newest last, as JSON
// It keeps the last MAX_KEPT deliveries in memory and reads at most MAX_BODY bytes of each.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createEgress } from '../adapters/egress/client.ts';
import { createDeliver } from '../adapters/notify/deliver.ts';
import { createEventBridgeClient } from '../adapters/notify/eventbridge.ts';
import { STRICT_EGRESS, type EgressPolicy } from '../domain/egress/policy.ts';
import type { Deliver } from '../domain/notify/event.ts';
import { withEgressAllow, type DevSettings } from './dev-settings.ts';

/** The port it tries first (beside the Git server's 8481 and the registry's 8482); any free one when taken. */
export const DEFAULT_RECEIVER_PORT = 8483;
const MAX_KEPT = 500;
const MAX_BODY = 1024 * 1024;

export interface ReceivedDelivery {
  readonly at: string;
  readonly kind: 'webhook' | 'slack' | 'eventBridge';
  readonly path: string;
  /** The X-Convoy-* headers of a webhook (event, delivery id, timestamp, signature). */
  readonly headers: Readonly<Record<string, string>>;
  /** The body as JSON (an EventBridge entry's Detail parsed), or the text when it is not JSON. */
  readonly body: unknown;
}

export interface NotificationReceiver {
  readonly url: string;
  /** The host:port, for the egress allow list. */
  readonly host: string;
  /** The Slack base URL convoy dev lets Slack destinations use. */
  readonly slackBaseUrl: string;
  deliveries(): readonly ReceivedDelivery[];
  stop(): Promise<void>;
}

function parse(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

function convoyHeaders(req: IncomingMessage): Record<string, string> {
  return Object.fromEntries(
    Object.entries(req.headers)
      .filter(([name, v]) => name.startsWith('x-convoy-') && typeof v === 'string')
      .map(([name, v]) => [name, String(v)]),
  );
}

/** The PutEvents answer and the entries it records (AWS JSON 1.1). */
function putEvents(body: unknown, record: (d: ReceivedDelivery) => void, res: ServerResponse): void {
  const entries = (body as { Entries?: Record<string, unknown>[] } | undefined)?.Entries;
  const list = Array.isArray(entries) ? entries : [];
  for (const e of list) {
    record({
      at: new Date().toISOString(),
      kind: 'eventBridge',
      path: `bus ${typeof e['EventBusName'] === 'string' ? e['EventBusName'] : 'default'}: ${typeof e['DetailType'] === 'string' ? e['DetailType'] : ''}`,
      headers: {},
      body: typeof e['Detail'] === 'string' ? parse(e['Detail']) : e['Detail'],
    });
  }
  res.writeHead(200, { 'content-type': 'application/x-amz-json-1.1' });
  res.end(
    JSON.stringify({
      FailedEntryCount: 0,
      Entries: list.map((_, i) => ({ EventId: `dev-${Date.now()}-${i}` })),
    }),
  );
}

function handle(req: IncomingMessage, res: ServerResponse, kept: ReceivedDelivery[]): void {
  const path = (req.url ?? '/').split('?')[0] ?? '/';
  if (req.method === 'GET') {
    if (path === '/deliveries') {
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(kept, null, 2));
    } else {
      res
        .writeHead(200, { 'content-type': 'text/plain' })
        .end('convoy dev notification receiver: GET /deliveries lists what arrived\n');
    }
    return;
  }
  if (req.method !== 'POST') {
    res.writeHead(405).end();
    return;
  }
  const chunks: Buffer[] = [];
  let size = 0;
  req.on('data', (c: Buffer) => {
    size += c.byteLength;
    if (size > MAX_BODY) {
      res.writeHead(413).end('over 1 MiB');
      req.destroy();
    } else chunks.push(c);
  });
  req.on('end', () => {
    const text = Buffer.concat(chunks).toString('utf8');
    const record = (d: ReceivedDelivery) => {
      kept.push(d);
      if (kept.length > MAX_KEPT) kept.splice(0, kept.length - MAX_KEPT);
    };
    if (req.headers['x-amz-target'] === 'AWSEvents.PutEvents') return putEvents(parse(text), record, res);
    const kind = path.startsWith('/services/') ? 'slack' : 'webhook';
    record({ at: new Date().toISOString(), kind, path, headers: convoyHeaders(req), body: parse(text) });
    if (kind === 'slack') res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
    else res.writeHead(204).end();
  });
}

async function listen(server: ReturnType<typeof createServer>, port: number): Promise<void> {
  await new Promise<void>((ok, fail) => {
    server.once('error', fail);
    server.listen(port, '127.0.0.1', () => {
      server.off('error', fail);
      ok();
    });
  });
}

/** Starts on `port` (0: any free one); a taken DEFAULT_RECEIVER_PORT falls back to any free port. */
export async function startNotificationReceiver(port = DEFAULT_RECEIVER_PORT): Promise<NotificationReceiver> {
  const kept: ReceivedDelivery[] = [];
  const server = createServer((req, res) => handle(req, res, kept));
  try {
    await listen(server, port);
  } catch (error) {
    if ((error as { code?: unknown }).code !== 'EADDRINUSE' || port === 0) throw error;
    await listen(server, 0);
  }
  const host = `127.0.0.1:${(server.address() as AddressInfo).port}`;
  const url = `http://${host}`;
  return {
    url,
    host,
    slackBaseUrl: `${url}/services/`,
    deliveries: () => [...kept],
    stop: () =>
      new Promise<void>((ok) => {
        server.closeAllConnections();
        server.close(() => ok());
      }),
  };
}

/** The settings with the receiver in the egress allow list (the policy refuses other loopback ports). */
export function withNotificationReceiver(settings: DevSettings, receiver: NotificationReceiver): DevSettings {
  return {
    ...settings,
    tenancy: {
      ...settings.tenancy,
      egressAllow: withEgressAllow(settings.tenancy.egressAllow, [receiver.host]),
    },
  };
}

/**
 * The delivery of the notify loop in convoy dev: every destination as in production, through the
 * installation's egress policy, with EventBridge pointed at the receiver and Slack URLs under the
 * receiver's /services/ accepted (an installation setting: a tenant cannot set it).
 */
export function receiverDeliver(
  receiver: Pick<NotificationReceiver, 'url' | 'slackBaseUrl'>,
  policy: EgressPolicy | undefined,
): Deliver {
  return createDeliver({
    egress: createEgress(policy ?? STRICT_EGRESS),
    eventBridge: createEventBridgeClient({
      endpoint: receiver.url,
      region: 'us-east-1',
      credentials: { accessKeyId: 'convoy-dev', secretAccessKey: 'convoy-dev' },
    }),
    slackBaseUrl: receiver.slackBaseUrl,
  });
}

/** The bus convoy dev names as the installation's (eventBridge destinations without busName). */
export const DEV_EVENT_BUS = 'convoy-dev';
