// How a notification delivery fails, against real servers on loopback: what the delivery loop may
// retry (5xx, 429, a timeout, a closed port, EventBridge throttling) and what it must not (4xx, a
// refused address, a URL that is not the destination's kind, a commit status without a commit);
// a huge or endless answer read bounded; a redirect to another host never carrying the token; and
// no Secret value (a URL's token, the HMAC key, a forge token) in any reason.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEgress } from '../../../adapters/egress/client.ts';
import { createDeliver } from '../../../adapters/notify/deliver.ts';
import { STRICT_EGRESS } from '../../../domain/egress/policy.ts';
import type { Deliver, DeliveryResult, ResolvedDestination } from '../../../domain/notify/event.ts';
import { startEventBridgeEndpoint, type EventBridgeEndpoint } from '../../harness/eventbridge-endpoint.ts';
import { startForgeStatusApi, type ForgeStatusApi } from '../../harness/forge-status.ts';
import { startReceiver, type Receiver } from '../../harness/loopback-receiver.ts';
import {
  startSlackReceiver,
  startWebhookReceiver,
  type SlackReceiver,
} from '../../harness/notify-receivers.ts';
import { eventBridgeClient, loopbackEgress, notificationEvent } from './fixtures.ts';

const HMAC_KEY = 'whsec-never-in-a-reason-5e2f';
const TOKEN = 'glpat-never-in-a-reason-9a7c';
const PATH_TOKEN = 'pathToken-never-in-a-reason-31b0';

describe('notification delivery failures: classified, bounded, and free of Secret values', () => {
  let hook: Receiver;
  let other: Receiver;
  let slack: SlackReceiver;
  let events: EventBridgeEndpoint;
  let forge: ForgeStatusApi;
  let deliver: Deliver;
  const reasons: string[] = [];

  const webhook = (path = ''): ResolvedDestination => ({
    type: 'webhook',
    url: `${hook.url}/hooks/${PATH_TOKEN}${path}`,
    hmacKey: HMAC_KEY,
  });

  async function failure(
    d: ResolvedDestination,
    fn: Deliver = deliver,
  ): Promise<DeliveryResult & { ok: false }> {
    const result = await fn(d, notificationEvent());
    expect(result.ok).toBe(false);
    if (result.ok) throw new Error('delivered');
    reasons.push(result.reason);
    return result;
  }

  beforeAll(async () => {
    hook = await startWebhookReceiver();
    other = await startReceiver((_req, res) => res.writeHead(200).end('other host'));
    slack = await startSlackReceiver();
    events = await startEventBridgeEndpoint(['bus', 'throttled', 'denied']);
    events.entryErrors.set('throttled', 'ThrottlingException');
    events.entryErrors.set('denied', 'AccessDeniedException');
    forge = await startForgeStatusApi(TOKEN);
    deliver = createDeliver({
      egress: loopbackEgress(),
      eventBridge: eventBridgeClient(events.url),
      timeoutMs: 500,
      slackBaseUrl: `${slack.url}/services/`,
    });
  });

  afterAll(async () => {
    for (const r of [hook, other, slack, events, forge]) await r?.close();
    // Checked last, over every reason the rows produced.
  });

  it('500 and 429 are retryable, 404 and 400 are not', async () => {
    hook.failNext({ status: 500 }, { status: 429 }, { status: 404 }, { status: 400 });
    const got = [];
    for (let i = 0; i < 4; i++) got.push(await failure(webhook()));
    expect(got.map((r) => r.retryable)).toEqual([true, true, false, false]);
    expect(got[0]?.reason).toBe(`webhook ${hook.host} answered HTTP 500 (will retry)`);
    expect(got[2]?.reason).toBe(
      `webhook ${hook.host} answered HTTP 404 (not retried: check the destination)`,
    );
  });

  it('no answer within the timeout, and a closed port, are retryable', async () => {
    hook.failNext('hang');
    const slow = await failure(webhook());
    expect(slow).toMatchObject({ retryable: true, reason: `webhook ${hook.host}: timed out (will retry)` });
    const closed = createServer();
    await new Promise<void>((ok) => closed.listen(0, '127.0.0.1', () => ok()));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((ok) => closed.close(ok));
    const refused = await failure({ type: 'webhook', url: `http://127.0.0.1:${port}/x` });
    expect(refused).toMatchObject({
      retryable: true,
      reason: `webhook 127.0.0.1:${port}: connection refused (will retry)`,
    });
  });

  it('a 10 MB answer is not read (its length is over the bound), an endless one is read only up to the bound', async () => {
    hook.failNext({ bigBody: 10 * 1024 * 1024, status: 502 });
    expect(await failure(webhook())).toMatchObject({
      retryable: true,
      reason: `webhook ${hook.host} answered HTTP 502 (will retry)`,
    });
    // Slack's error code is read from the body: an endless body still ends the delivery.
    slack.failNext('endless');
    const url = `${slack.url}/services/T1/B1/${PATH_TOKEN}`;
    expect(await deliver({ type: 'slack', url }, notificationEvent())).toEqual({ ok: true });
    // What the server pushed before convoy hung up is its socket buffers' worth, not the gigabyte it would send.
    expect(slack.endlessSent).toBeLessThan(64 * 1024 * 1024);
  });

  it('a redirect to another host is not a delivery and carries no token there', async () => {
    forge.failNext({ redirect: `${other.url}/elsewhere`, status: 307 });
    const dest = {
      type: 'commitStatus',
      provider: 'gitlab',
      token: TOKEN,
      apiUrl: `${forge.url}/api/v4`,
      repository: 'acme/web',
    } as const;
    const result = await failure(dest);
    expect(result).toMatchObject({ retryable: false });
    expect(result.reason).toBe(
      `GitLab ${forge.host} redirected to another host (${other.host}), which got no credentials; name the URL it redirects to (not retried)`,
    );
    expect(other.requests).toHaveLength(1);
    expect(other.requests[0]?.headers.authorization).toBeUndefined();
    expect(forge.requests.at(-1)?.headers.authorization).toBe(`Bearer ${TOKEN}`);
  });

  it("a refused address gets the egress policy's message and is never retried; nothing is connected", async () => {
    const strict = createDeliver({ egress: createEgress(STRICT_EGRESS), timeoutMs: 500 });
    const metadata = await failure(
      { type: 'webhook', url: `http://169.254.169.254/latest/${PATH_TOKEN}` },
      strict,
    );
    expect(metadata).toEqual({
      ok: false,
      retryable: false,
      reason:
        "webhook 169.254.169.254: refused by the egress policy (a link-local address); if tenants may use that server, the installation's operator lists it in egress.allow (CONVOY_EGRESS_ALLOW)",
    });
    const before = hook.requests.length;
    const loopback = await failure(webhook(), strict);
    expect(loopback.reason).toContain('refused by the egress policy (a loopback address)');
    expect(hook.requests).toHaveLength(before);
  });

  it('a Slack URL that is not a Slack incoming webhook, a webhook URL that is not http(s), and a commit status without a commit are not sent', async () => {
    const before = hook.requests.length;
    const notSlack = await failure({ type: 'slack', url: `${hook.url}/services/T1/B1/${PATH_TOKEN}` });
    expect(notSlack).toMatchObject({
      retryable: false,
      reason:
        'the URL is not a Slack incoming-webhook URL: it must start with https://hooks.slack.com/services/ (not retried)',
    });
    const ftp = await failure({ type: 'webhook', url: `ftp://example.com/${PATH_TOKEN}` });
    expect(ftp).toMatchObject({ retryable: false, reason: 'the webhook URL is not http(s) (not retried)' });
    expect(hook.requests).toHaveLength(before);
    const noCommit = await deliver(
      { type: 'commitStatus', provider: 'github', token: TOKEN, apiUrl: forge.url, repository: 'acme/web' },
      notificationEvent({ render: { ref: 'main', repository: 'https://github.com/acme/web' } }),
    );
    expect(noCommit).toEqual({
      ok: false,
      retryable: false,
      reason:
        'github commit status: the event names no commit (render.revision is absent); a commit status needs the commit a render came from (not retried)',
    });
  });

  it('a forge refusing the token is not retried and names what the token needs', async () => {
    const result = await failure({
      type: 'commitStatus',
      provider: 'github',
      token: 'wrong',
      apiUrl: forge.url,
      repository: '',
    });
    expect(result).toMatchObject({ retryable: false });
    expect(result.reason).toMatch(
      /refused the token \(HTTP 401\): it needs the right to set commit statuses/,
    );
  });

  it('EventBridge: a throttled entry is retryable, a denied one or an unknown bus is not, an entry over 256 KB is never sent', async () => {
    const throttled = await failure({ type: 'eventBridge', busName: 'throttled' });
    expect(throttled).toMatchObject({
      retryable: true,
      reason: 'EventBridge bus throttled refused the entry: ThrottlingException (will retry)',
    });
    const denied = await failure({ type: 'eventBridge', busName: 'denied' });
    expect(denied).toMatchObject({
      retryable: false,
      reason: 'EventBridge bus denied refused the entry: AccessDeniedException (not retried)',
    });
    const missing = await failure({ type: 'eventBridge', busName: 'no-such-bus' });
    expect(missing).toMatchObject({
      retryable: false,
      reason:
        'EventBridge bus no-such-bus: PutEvents failed with ResourceNotFoundException (HTTP 400) (not retried)',
    });
    const before = events.requests.length;
    const huge = await deliver(
      { type: 'eventBridge', busName: 'bus' },
      notificationEvent({ verdict: { kind: 'failure', message: 'm'.repeat(300 * 1024) } }),
    );
    expect(huge).toMatchObject({ ok: false, retryable: false });
    expect(events.requests).toHaveLength(before);
    events.failNext({ status: 503, body: '{"__type":"ServiceUnavailable","message":"down"}' });
    expect(await failure({ type: 'eventBridge', busName: 'bus' })).toMatchObject({ retryable: true });
  });

  it('an installation without an EventBridge client says so, not retried', async () => {
    const none = createDeliver({ egress: loopbackEgress() });
    expect(await failure({ type: 'eventBridge', busName: 'bus' }, none)).toMatchObject({
      retryable: false,
      reason: 'EventBridge bus bus: this installation has no EventBridge client (not retried)',
    });
  });

  it('no reason holds a Secret value: the URL token, the HMAC key, the forge token', () => {
    expect(reasons.length).toBeGreaterThan(10);
    for (const reason of reasons) {
      for (const secret of [HMAC_KEY, TOKEN, PATH_TOKEN, 'hooks/']) expect(reason).not.toContain(secret);
    }
  });
});
