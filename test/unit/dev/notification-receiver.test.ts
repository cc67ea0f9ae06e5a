// convoy dev's notification receiver takes what each destination adapter sends — a webhook, a
// Slack message, an EventBridge PutEvents through the real AWS SDK — and lists it at /deliveries.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDeliver } from '../../../adapters/notify/deliver.ts';
import { startNotificationReceiver, type NotificationReceiver } from '../../../dev/notification-receiver.ts';
import { eventBridgeClient, loopbackEgress, notificationEvent } from '../notify/fixtures.ts';

describe("convoy dev's notification receiver", () => {
  let receiver: NotificationReceiver;

  beforeAll(async () => {
    receiver = await startNotificationReceiver(0);
  });
  afterAll(() => receiver?.stop());

  it('records a webhook, a Slack message and an EventBridge entry, and lists them at GET /deliveries', async () => {
    const deliver = createDeliver({
      egress: loopbackEgress(),
      eventBridge: eventBridgeClient(receiver.url),
      slackBaseUrl: receiver.slackBaseUrl,
    });
    const event = notificationEvent();
    expect(
      await deliver({ type: 'webhook', url: `${receiver.url}/webhook/team-a`, hmacKey: 'k' }, event),
    ).toEqual({ ok: true });
    expect(await deliver({ type: 'slack', url: `${receiver.slackBaseUrl}T1/B1/x` }, event)).toEqual({
      ok: true,
    });
    expect(await deliver({ type: 'eventBridge', busName: 'convoy' }, event)).toEqual({ ok: true });
    const listed = (await (await fetch(`${receiver.url}/deliveries`)).json()) as {
      kind: string;
      path: string;
      headers: Record<string, string>;
      body: unknown;
    }[];
    expect(listed.map((d) => d.kind)).toEqual(['webhook', 'slack', 'eventBridge']);
    expect(listed[0]?.body).toEqual(event);
    expect(listed[0]?.headers['x-convoy-signature-256']).toMatch(/^sha256=/);
    expect(JSON.stringify(listed[1]?.body)).toContain('"blocks"');
    expect(listed[2]).toMatchObject({ path: 'bus convoy: Convoy Failed', body: event });
    expect(receiver.deliveries()).toHaveLength(3);
  });
});
