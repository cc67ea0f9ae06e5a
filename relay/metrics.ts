/**
 * The relay's Prometheus metrics on prom-client: its default process metrics
 * (CPU, memory, event loop lag, GC, handles) and the relay's instruments, in
 * one registry per relay (no global registry: tests run several relays).
 *
 * Per-Release gauges are written at scrape time from the relay's Release
 * index (`observeReleases`, rendered by release-gauges.ts): every condition
 * (type, status, reason), the rollout state, and the seconds since the last
 * successful reconcile. Per-ReleaseSet gauges likewise from its ReleaseSet index
 * (`observeReleaseSets`, release-set-gauges.ts) when the relay watches sets.
 * Those name every tenant's Releases and sets; `render({ perRelease: false })` — what the relay's
 * /metrics serves unless the installation opts in (CONVOY_METRICS_PER_RELEASE) — leaves them out
 * and keeps the counts that name none.
 *
 * The instruments keep their own totals too, so `get()` answers at once
 * (prom-client's own `get()` is asynchronous).
 */
import {
  Counter as PromCounter,
  Gauge as PromGauge,
  Histogram as PromHistogram,
  Registry,
  collectDefaultMetrics,
} from 'prom-client';
import type { Release } from '../domain/api/index.ts';
import { renderReleaseCounts, renderReleaseGauges } from './release-gauges.ts';
import {
  renderReleaseSetCounts,
  renderReleaseSetGauges,
  type GaugedReleaseSet,
} from './release-set-gauges.ts';

export type Labels = Readonly<Record<string, string>>;

export interface Counter {
  inc(labels?: Labels, by?: number): void;
  get(labels?: Labels): number;
}

export interface Gauge {
  set(value: number, labels?: Labels): void;
  inc(labels?: Labels, by?: number): void;
  get(labels?: Labels): number;
}

export interface Histogram {
  observe(value: number, labels?: Labels): void;
  /** Number of observations. */
  count(labels?: Labels): number;
}

/** The relay's instruments. Labels: kind (watched kind), loop (queue), informer (watched kind). */
export interface RelayMetrics {
  readonly registry: Registry;
  /** Watch events seen, by kind. */
  readonly eventsSeen: Counter;
  /** Watch events that asked for work, by kind. */
  readonly eventsCounted: Counter;
  /** Messages accepted by SQS, by loop. */
  readonly messagesSent: Counter;
  /** Messages that could not be sent, by loop. */
  readonly sendErrors: Counter;
  /** SendMessageBatch calls retried, by loop. */
  readonly sendRetries: Counter;
  /** Seconds from the watch event (or timer) that asked for work to SQS accepting the message, by loop. */
  readonly sendLag: Histogram;
  readonly informerConnects: Counter;
  readonly informerErrors: Counter;
  readonly informerRestarts: Counter;
  readonly informerRelists: Counter;
  /** Fleet messages asked for (before coalescing), by trigger: set, cluster, child. */
  readonly fleetNotices: Counter;
  /** 1 while this replica is the leader. */
  readonly leader: Gauge;
  /** Releases in the relay's index. */
  readonly releases: Gauge;
  /** Where the per-Release gauges read the Releases at scrape time. */
  observeReleases(source: () => Iterable<Release>): void;
  /** Where the per-ReleaseSet gauges read the sets at scrape time; never called: no set gauges. */
  observeReleaseSets(source: () => Iterable<GaugedReleaseSet>): void;
  /** Every metric in the Prometheus text exposition format 0.0.4; with `perRelease: false`, none that names a Release or ReleaseSet. */
  render(options?: MetricsRenderOptions): Promise<string>;
  /** The Content-Type of `render()`. */
  readonly contentType: string;
}

export interface MetricsRenderOptions {
  /** Include the series that name each Release and ReleaseSet (namespace, name); default true. */
  readonly perRelease?: boolean;
}

export const LAG_BUCKETS_SECONDS = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60] as const;

const keyOf = (labels: Labels | undefined): string =>
  labels === undefined
    ? ''
    : Object.keys(labels)
        .sort()
        .map((k) => `${k}=${labels[k]}`)
        .join(',');

interface Options {
  readonly name: string;
  readonly help: string;
  readonly labelNames: readonly string[];
  readonly registry: Registry;
}

function counter({ name, help, labelNames, registry }: Options): Counter {
  const prom = new PromCounter({ name, help, labelNames: [...labelNames], registers: [registry] });
  const totals = new Map<string, number>();
  return {
    inc(labels, by = 1) {
      if (labels === undefined) prom.inc(by);
      else prom.inc({ ...labels }, by);
      totals.set(keyOf(labels), (totals.get(keyOf(labels)) ?? 0) + by);
    },
    get: (labels) => totals.get(keyOf(labels)) ?? 0,
  };
}

function gauge({ name, help, labelNames, registry }: Options): Gauge {
  const prom = new PromGauge({ name, help, labelNames: [...labelNames], registers: [registry] });
  const values = new Map<string, number>();
  const set = (value: number, labels?: Labels) => {
    if (labels === undefined) prom.set(value);
    else prom.set({ ...labels }, value);
    values.set(keyOf(labels), value);
  };
  return {
    set,
    inc: (labels, by = 1) => set((values.get(keyOf(labels)) ?? 0) + by, labels),
    get: (labels) => values.get(keyOf(labels)) ?? 0,
  };
}

function histogram(opts: Options, buckets: readonly number[]): Histogram {
  const prom = new PromHistogram({
    name: opts.name,
    help: opts.help,
    labelNames: [...opts.labelNames],
    buckets: [...buckets],
    registers: [opts.registry],
  });
  const counts = new Map<string, number>();
  return {
    observe(value, labels) {
      if (labels === undefined) prom.observe(value);
      else prom.observe({ ...labels }, value);
      counts.set(keyOf(labels), (counts.get(keyOf(labels)) ?? 0) + 1);
    },
    count: (labels) => counts.get(keyOf(labels)) ?? 0,
  };
}

/**
 * prom-client names three default gauges `…_total`, which `promtool check metrics` refuses
 * ("non-counter metrics should not have _total suffix"); the same facts stay available as
 * `convoy_relay_nodejs_active_resources{type}` (also a prom-client default).
 */
function lintCleanDefaults(registry: Registry): void {
  for (const name of ['active_handles_total', 'active_requests_total', 'active_resources_total']) {
    registry.removeSingleMetric(`convoy_relay_nodejs_${name}`);
  }
}

export function createRelayMetrics(now: () => number = Date.now): RelayMetrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'convoy_relay_' });
  lintCleanDefaults(registry);
  let releases: () => Iterable<Release> = () => [];
  let releaseSets: (() => Iterable<GaugedReleaseSet>) | undefined;
  const opts = (name: string, help: string, labelNames: readonly string[]): Options => ({
    name,
    help,
    labelNames,
    registry,
  });
  return {
    registry,
    eventsSeen: counter(opts('convoy_relay_events_total', 'Watch events seen, by kind.', ['kind'])),
    eventsCounted: counter(
      opts('convoy_relay_events_counted_total', 'Watch events that asked for work, by kind.', ['kind']),
    ),
    messagesSent: counter(
      opts('convoy_relay_messages_sent_total', 'Messages accepted by SQS, by loop.', ['loop']),
    ),
    sendErrors: counter(
      opts('convoy_relay_send_errors_total', 'Messages that could not be sent, by loop.', ['loop']),
    ),
    sendRetries: counter(
      opts('convoy_relay_send_retries_total', 'SendMessageBatch calls retried, by loop.', ['loop']),
    ),
    sendLag: histogram(
      opts(
        'convoy_relay_send_lag_seconds',
        'Seconds from the watch event or timer that asked for work to SQS accepting the message, by loop.',
        ['loop'],
      ),
      LAG_BUCKETS_SECONDS,
    ),
    informerConnects: counter(
      opts('convoy_relay_informer_connects_total', 'Watch connections made, by informer.', ['informer']),
    ),
    informerErrors: counter(
      opts('convoy_relay_informer_errors_total', 'Informer errors (list or watch), by informer.', [
        'informer',
      ]),
    ),
    informerRestarts: counter(
      opts('convoy_relay_informer_restarts_total', 'Informers restarted after an error, by informer.', [
        'informer',
      ]),
    ),
    informerRelists: counter(
      opts(
        'convoy_relay_informer_relists_total',
        'Full lists made (start, restart, periodic, 410), by informer.',
        ['informer'],
      ),
    ),
    fleetNotices: counter(
      opts(
        'convoy_relay_fleet_notices_total',
        'ReleaseSet messages asked for before coalescing, by trigger (set: the set changed; cluster: a Cluster of its namespace; child: what the set sees of a child changed; timer: its interval; webhook: a Git push it follows).',
        ['trigger'],
      ),
    ),
    leader: gauge(opts('convoy_relay_leader', '1 while this replica is the leader and sends.', [])),
    releases: gauge(opts('convoy_relay_releases', 'Releases in the relay index.', [])),
    observeReleases(source) {
      releases = source;
    },
    observeReleaseSets(source) {
      releaseSets = source;
    },
    render: async (options = {}) => {
      const perRelease = options.perRelease ?? true;
      const at = now();
      const sets = releaseSets === undefined ? undefined : [...releaseSets()];
      return (
        (await registry.metrics()) +
        renderReleaseCounts(releases(), at) +
        (sets === undefined ? '' : renderReleaseSetCounts(sets)) +
        (perRelease
          ? renderReleaseGauges(releases(), at) + (sets === undefined ? '' : renderReleaseSetGauges(sets))
          : '')
      );
    },
    contentType: registry.contentType,
  };
}
