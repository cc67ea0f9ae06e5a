// What the notification destination tests share: one event, an egress client allowing loopback
// (the stand-ins listen there), and an EventBridge client for the loopback endpoint.
import type { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import { createEgress, type Egress } from '../../../adapters/egress/client.ts';
import { createEventBridgeClient } from '../../../adapters/notify/eventbridge.ts';
import { parseEgressAllow } from '../../../domain/egress/policy.ts';
import { NOTIFICATION_SCHEMA, type NotificationEvent } from '../../../domain/notify/event.ts';

export const SHA = '3f786850e387550fdab836ed7e6dc881de23001b';

export function notificationEvent(over: Partial<NotificationEvent> = {}): NotificationEvent {
  return {
    schema: NOTIFICATION_SCHEMA,
    id: '7d1c2a4e-uid/3',
    transition: 'Failed',
    object: { kind: 'Release', namespace: 'team-a', name: 'web', uid: '7d1c2a4e-uid' },
    cluster: 'prod-eu',
    verdict: {
      kind: 'failure',
      signal: 'CrashLoopBackOff',
      reason: 'ProgressDeadlineExceeded',
      message: 'Deployment team-a/web: 0 of 3 replicas ready; container web restarting (CrashLoopBackOff)',
    },
    previous: { kind: 'ready', reason: 'Ready' },
    render: { ref: 'main', revision: SHA, repository: 'https://github.com/acme/web.git' },
    occurredAt: '2026-12-07T19:00:00.000Z',
    dashboardUrl: 'https://convoy.example.com/releases/team-a/web',
    ...over,
  };
}

/** The loopback stand-ins are the legitimate destinations of these tests. */
export function loopbackEgress(): Egress {
  return createEgress({ allow: parseEgressAllow('127.0.0.1', 'test'), clusterNetworks: [] });
}

export function eventBridgeClient(endpoint: string): EventBridgeClient {
  return createEventBridgeClient({
    endpoint,
    region: 'eu-west-1',
    credentials: { accessKeyId: 'AKIDTEST', secretAccessKey: 'test-secret' },
  });
}
