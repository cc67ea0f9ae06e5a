// The Events (events.k8s.io/v1) about one Release (or ReleaseSet), oldest first: shared by the CLI's
// `describe` and `events` (cli/event-table.ts prints them) and the relay's API (the dashboard).
import { resourcePath } from '../adapters/kube/http.ts';
import type { Cluster, ReleaseKey } from './cluster.ts';

export interface ListedEvent {
  type: string;
  reason: string;
  action: string;
  note: string;
  count: number;
  lastSeen: string | undefined;
  reportingController: string;
}

interface RawEvent {
  type?: string;
  reason?: string;
  action?: string;
  note?: string;
  eventTime?: string;
  deprecatedLastTimestamp?: string;
  reportingController?: string;
  series?: { count?: number; lastObservedTime?: string };
  metadata?: { creationTimestamp?: string };
}

export function releaseEvents(cluster: Cluster, key: ReleaseKey): Promise<ListedEvent[]> {
  return objectEvents(cluster, key, 'Release');
}

/** The Events about one convoy object of `kind` (Release, ReleaseSet), oldest first. */
export async function objectEvents(
  cluster: Cluster,
  key: ReleaseKey,
  kind: 'Release' | 'ReleaseSet',
): Promise<ListedEvent[]> {
  const { items } = await cluster.client.list<RawEvent>(
    resourcePath('events.k8s.io/v1', 'events', key.namespace),
    {
      fieldSelector: `regarding.kind=${kind},regarding.name=${key.name}`,
    },
  );
  return items
    .map((e) => ({
      type: e.type ?? 'Normal',
      reason: e.reason ?? '',
      action: e.action ?? '',
      note: e.note ?? '',
      count: e.series?.count ?? 1,
      lastSeen:
        e.series?.lastObservedTime ??
        e.eventTime ??
        e.deprecatedLastTimestamp ??
        e.metadata?.creationTimestamp,
      reportingController: e.reportingController ?? '',
    }))
    .sort((a, b) => (a.lastSeen ?? '').localeCompare(b.lastSeen ?? ''));
}
