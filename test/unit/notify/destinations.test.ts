// Each notification destination against a real HTTP server on loopback that checks what arrives
// as the real service documents it: a webhook receiver verifying the HMAC, Slack's Block Kit
// limits, EventBridge's PutEvents (AWS JSON 1.1, through the real AWS SDK; no AWS is reachable
// here), GitHub's and GitLab's commit status fields.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDeliver } from '../../../adapters/notify/deliver.ts';
import type { Deliver, NotificationEvent } from '../../../domain/notify/event.ts';
import { startEventBridgeEndpoint, type EventBridgeEndpoint } from '../../harness/eventbridge-endpoint.ts';
import { startForgeStatusApi, type ForgeStatusApi } from '../../harness/forge-status.ts';
import {
  startSlackReceiver,
  startWebhookReceiver,
  verifySignature,
  type SlackReceiver,
  type WebhookReceiver,
} from '../../harness/notify-receivers.ts';
import { eventBridgeClient, loopbackEgress, notificationEvent, SHA } from './fixtures.ts';

const HMAC_KEY = 'whsec-4b1d9e0c7a';
const TOKEN = 'ghp_forgeToken0123456789';

describe('notification destinations deliver what their receivers document', () => {
  let webhook: WebhookReceiver;
  let slack: SlackReceiver;
  let events: EventBridgeEndpoint;
  let forge: ForgeStatusApi;
  let deliver: Deliver;
  const now = new Date();

  beforeAll(async () => {
    webhook = await startWebhookReceiver(HMAC_KEY);
    slack = await startSlackReceiver();
    events = await startEventBridgeEndpoint(['convoy-notifications']);
    forge = await startForgeStatusApi(TOKEN);
    deliver = createDeliver({
      egress: loopbackEgress(),
      eventBridge: eventBridgeClient(events.url),
      now: () => now,
      slackBaseUrl: `${slack.url}/services/`,
    });
  });

  afterAll(async () => {
    for (const r of [webhook, slack, events, forge]) await r?.close();
  });

  it('a webhook is the event as JSON with its headers, signed over the timestamp and body; the signature does not survive another timestamp', async () => {
    const event = notificationEvent();
    const result = await deliver(
      { type: 'webhook', url: `${webhook.url}/hooks/convoy`, hmacKey: HMAC_KEY },
      event,
    );
    expect(result).toEqual({ ok: true });
    expect(webhook.verified).toHaveLength(1);
    const got = webhook.verified[0];
    expect(JSON.parse(got.body)).toEqual(event);
    expect(got.headers).toMatchObject({
      'content-type': 'application/json',
      'x-convoy-event': 'Failed',
      'x-convoy-delivery': event.id,
      'x-convoy-timestamp': String(Math.floor(now.getTime() / 1000)),
    });
    expect(got.headers['x-convoy-signature-256']).toMatch(/^sha256=[0-9a-f]{64}$/);
    // A replay with a fresh timestamp: the MAC covers the timestamp, so it no longer verifies.
    const later = String(Math.floor(now.getTime() / 1000) + 60);
    const replay = { ...got, headers: { ...got.headers, 'x-convoy-timestamp': later } };
    expect(verifySignature(HMAC_KEY, replay, Math.floor(now.getTime() / 1000) + 60)).toBe(
      'signature does not verify',
    );
  });

  it('a webhook without a key is sent unsigned', async () => {
    const plain = await startWebhookReceiver();
    try {
      expect(await deliver({ type: 'webhook', url: plain.url }, notificationEvent())).toEqual({ ok: true });
      expect(plain.verified[0]?.headers['x-convoy-signature-256']).toBeUndefined();
    } finally {
      await plain.close();
    }
  });

  it('Slack gets a valid Block Kit message naming the object, cluster, verdict, reason and render, with the dashboard button', async () => {
    const url = `${slack.url}/services/T000/B000/slackSecret123`;
    expect(await deliver({ type: 'slack', url }, notificationEvent())).toEqual({ ok: true });
    const message = slack.messages.at(-1)!;
    const blocks = message['blocks'] as {
      type: string;
      text?: { text: string };
      fields?: { text: string }[];
    }[];
    expect(blocks.map((b) => b.type)).toEqual(['header', 'section', 'actions', 'context']);
    expect(blocks[0]?.text?.text).toContain('Release team-a/web: Failed');
    const fields = blocks[1]?.fields?.map((f) => f.text).join('\n') ?? '';
    for (const part of [
      'Release team-a/web',
      'prod-eu',
      'failure',
      'ProgressDeadlineExceeded',
      SHA.slice(0, 12),
    ]) {
      expect(fields).toContain(part);
    }
    expect(JSON.stringify(blocks[2])).toContain('https://convoy.example.com/releases/team-a/web');
  });

  it('Slack without a dashboard has no button, and an overlong message is clipped to the limits Slack accepts', async () => {
    const url = `${slack.url}/services/T000/B000/slackSecret123`;
    const long: NotificationEvent = notificationEvent({
      dashboardUrl: undefined,
      object: { kind: 'Release', namespace: 'n'.repeat(63), name: 'x'.repeat(200), uid: 'u' },
      verdict: { kind: 'failure', reason: 'r'.repeat(5000), message: '<&>'.repeat(4000) },
    });
    expect(await deliver({ type: 'slack', url }, long)).toEqual({ ok: true });
    const blocks = slack.messages.at(-1)!['blocks'] as { type: string }[];
    expect(blocks.map((b) => b.type)).toEqual(['header', 'section', 'context']);
  });

  it('EventBridge gets one PutEvents entry on the named bus: Source convoy.dev, DetailType per transition, the event as Detail', async () => {
    const event = notificationEvent({ transition: 'Recovered', verdict: { kind: 'ready', reason: 'Ready' } });
    const result = await deliver({ type: 'eventBridge', busName: 'convoy-notifications' }, event);
    expect(result).toEqual({ ok: true });
    const entry = events.entries.at(-1)!;
    expect(entry).toMatchObject({
      EventBusName: 'convoy-notifications',
      Source: 'convoy.dev',
      DetailType: 'Convoy Recovered',
    });
    expect(JSON.parse(entry.Detail)).toEqual(event);
    expect(entry.Time).toBe(Date.parse(event.occurredAt) / 1000);
  });

  it('GitHub commit statuses: one context per Release and cluster, so two clusters on one commit do not overwrite each other; the repository comes from the render', async () => {
    const dest = {
      type: 'commitStatus',
      provider: 'github',
      token: TOKEN,
      apiUrl: forge.url,
      repository: '',
    } as const;
    const ready = { kind: 'ready', reason: 'Ready' };
    expect(
      await deliver(dest, notificationEvent({ cluster: 'prod-eu', transition: 'Ready', verdict: ready })),
    ).toEqual({ ok: true });
    expect(
      await deliver(
        dest,
        notificationEvent({ cluster: 'prod-us', transition: 'NotReady', verdict: { kind: 'wait' } }),
      ),
    ).toEqual({ ok: true });
    expect(await deliver(dest, notificationEvent({ cluster: 'prod-eu' }))).toEqual({ ok: true });
    const current = [...forge.current.values()].filter((s) => s.provider === 'github');
    expect(current.map((s) => [s.repository, s.sha, s.context, s.state])).toEqual([
      ['acme/web', SHA, 'convoy/team-a/web@prod-eu', 'failure'],
      ['acme/web', SHA, 'convoy/team-a/web@prod-us', 'pending'],
    ]);
    const failure = forge.current.get(`acme/web@${SHA}#convoy/team-a/web@prod-eu`);
    expect(failure?.description?.length).toBeLessThanOrEqual(140);
    expect(failure?.description).toMatch(/^Failed: ProgressDeadlineExceeded: Deployment team-a\/web/);
    expect(failure?.targetUrl).toBe('https://convoy.example.com/releases/team-a/web');
  });

  it('GitLab commit statuses on the named project; the same state twice is delivered, as GitLab already shows it', async () => {
    const dest = {
      type: 'commitStatus',
      provider: 'gitlab',
      token: TOKEN,
      apiUrl: `${forge.url}/api/v4`,
      repository: 'acme/platform/web',
    } as const;
    const waiting = notificationEvent({
      transition: 'NotReady',
      verdict: { kind: 'wait', reason: 'Progressing' },
    });
    expect(await deliver(dest, waiting)).toEqual({ ok: true });
    expect(await deliver(dest, waiting)).toEqual({ ok: true });
    expect(
      await deliver(dest, notificationEvent({ transition: 'Ready', verdict: { kind: 'ready' } })),
    ).toEqual({ ok: true });
    const gitlab = forge.statuses.filter((s) => s.provider === 'gitlab');
    expect(gitlab.map((s) => [s.repository, s.context, s.state])).toEqual([
      ['acme/platform/web', 'convoy/team-a/web@prod-eu', 'running'],
      ['acme/platform/web', 'convoy/team-a/web@prod-eu', 'success'],
    ]);
  });
});
