/**
 * A tiny Prometheus registry (text exposition format 0.0.4): counters,
 * gauges and histograms with labels, and the relay's own instruments.
 * No dependency, no global registry: each relay creates its own.
 */

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

export interface MetricsRegistry {
  counter(name: string, help: string): Counter;
  gauge(name: string, help: string): Gauge;
  histogram(name: string, help: string, buckets: readonly number[]): Histogram;
  /** Every metric in the text exposition format. */
  render(): string;
}

export class MetricNameError extends Error {
  override name = 'MetricNameError';
}

const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;

interface Family {
  readonly name: string;
  readonly help: string;
  readonly type: 'counter' | 'gauge' | 'histogram';
  render(): string[];
}

export function createMetricsRegistry(): MetricsRegistry {
  const families = new Map<string, Family>();

  const register = (family: Family) => {
    if (!METRIC_NAME.test(family.name)) throw new MetricNameError(`metric name ${JSON.stringify(family.name)} is not a Prometheus name`);
    if (families.has(family.name)) throw new MetricNameError(`metric ${family.name} is registered twice; register it once and share it`);
    families.set(family.name, family);
  };

  const scalar = (name: string, help: string, type: 'counter' | 'gauge') => {
    const values = new Map<string, { labels: Labels; value: number }>();
    const entry = (labels: Labels) => {
      const id = labelsId(labels);
      let found = values.get(id);
      if (found === undefined) {
        found = { labels, value: 0 };
        values.set(id, found);
      }
      return found;
    };
    register({
      name,
      help,
      type,
      render: () => [...values.values()].map((v) => `${name}${formatLabels(v.labels)} ${formatNumber(v.value)}`),
    });
    return {
      inc: (labels: Labels = {}, by = 1) => {
        if (type === 'counter' && by < 0) throw new MetricNameError(`counter ${name} cannot decrease (inc by ${by})`);
        entry(labels).value += by;
      },
      set: (value: number, labels: Labels = {}) => {
        entry(labels).value = value;
      },
      get: (labels: Labels = {}) => values.get(labelsId(labels))?.value ?? 0,
    };
  };

  return {
    counter(name, help) {
      const { inc, get } = scalar(name, help, 'counter');
      return { inc, get };
    },
    gauge(name, help) {
      const { inc, set, get } = scalar(name, help, 'gauge');
      return { inc, set, get };
    },
    histogram(name, help, buckets) {
      const bounds = [...buckets].sort((a, b) => a - b);
      const series = new Map<string, { labels: Labels; counts: number[]; sum: number; count: number }>();
      register({
        name,
        help,
        type: 'histogram',
        render: () =>
          [...series.values()].flatMap((s) => [
            ...bounds.map((le, i) => `${name}_bucket${formatLabels({ ...s.labels, le: formatNumber(le) })} ${s.counts[i] ?? 0}`),
            `${name}_bucket${formatLabels({ ...s.labels, le: '+Inf' })} ${s.count}`,
            `${name}_sum${formatLabels(s.labels)} ${formatNumber(s.sum)}`,
            `${name}_count${formatLabels(s.labels)} ${s.count}`,
          ]),
      });
      return {
        observe(value, labels = {}) {
          const id = labelsId(labels);
          let s = series.get(id);
          if (s === undefined) {
            s = { labels, counts: bounds.map(() => 0), sum: 0, count: 0 };
            series.set(id, s);
          }
          bounds.forEach((le, i) => {
            if (value <= le) s.counts[i] = (s.counts[i] ?? 0) + 1;
          });
          s.sum += value;
          s.count += 1;
        },
        count: (labels = {}) => series.get(labelsId(labels))?.count ?? 0,
      };
    },
    render() {
      const lines: string[] = [];
      for (const family of families.values()) {
        lines.push(`# HELP ${family.name} ${escapeHelp(family.help)}`, `# TYPE ${family.name} ${family.type}`, ...family.render());
      }
      return lines.length === 0 ? '' : `${lines.join('\n')}\n`;
    },
  };
}

function labelsId(labels: Labels): string {
  return JSON.stringify(Object.entries(labels).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

function formatLabels(labels: Labels): string {
  const entries = Object.entries(labels);
  if (entries.length === 0) return '';
  for (const [key] of entries) {
    if (!LABEL_NAME.test(key)) throw new MetricNameError(`label name ${JSON.stringify(key)} is not a Prometheus label name`);
  }
  return `{${entries.map(([k, v]) => `${k}="${escapeLabelValue(v)}"`).join(',')}}`;
}

function escapeLabelValue(value: string): string {
  return value.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
}

function escapeHelp(help: string): string {
  return help.replace(/\\/g, '\\\\').replace(/\n/g, '\\n');
}

function formatNumber(value: number): string {
  if (Number.isNaN(value)) return 'NaN';
  if (value === Infinity) return '+Inf';
  if (value === -Infinity) return '-Inf';
  return String(value);
}

/** The relay's instruments. Labels: kind (watched kind), loop (queue), informer (watched kind). */
export interface RelayMetrics {
  readonly registry: MetricsRegistry;
  /** Watch events seen, by kind. */
  readonly eventsSeen: Counter;
  /** Watch events that asked for work, by kind. */
  readonly eventsCounted: Counter;
  /** Messages accepted by SQS, by loop and trigger (event|timer). */
  readonly messagesSent: Counter;
  /** Messages that could not be sent, by loop. */
  readonly sendErrors: Counter;
  /** SendMessageBatch calls retried, by loop. */
  readonly sendRetries: Counter;
  /** Seconds from the first event of a coalesced send to SQS accepting it, by loop. */
  readonly sendLag: Histogram;
  readonly informerConnects: Counter;
  readonly informerErrors: Counter;
  readonly informerRestarts: Counter;
  readonly informerRelists: Counter;
  /** 1 while this replica is the leader. */
  readonly leader: Gauge;
  /** Releases in the relay's index. */
  readonly releases: Gauge;
  render(): string;
}

export const LAG_BUCKETS_SECONDS = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60] as const;

export function createRelayMetrics(): RelayMetrics {
  const registry = createMetricsRegistry();
  return {
    registry,
    eventsSeen: registry.counter('convoy_relay_events_total', 'Watch events seen, by kind.'),
    eventsCounted: registry.counter('convoy_relay_events_counted_total', 'Watch events that asked for work, by kind.'),
    messagesSent: registry.counter('convoy_relay_messages_sent_total', 'Messages accepted by SQS, by loop and trigger.'),
    sendErrors: registry.counter('convoy_relay_send_errors_total', 'Messages that could not be sent, by loop.'),
    sendRetries: registry.counter('convoy_relay_send_retries_total', 'SendMessageBatch calls retried, by loop.'),
    sendLag: registry.histogram(
      'convoy_relay_send_lag_seconds',
      'Seconds from the first event of a coalesced send to SQS accepting it, by loop.',
      LAG_BUCKETS_SECONDS,
    ),
    informerConnects: registry.counter('convoy_relay_informer_connects_total', 'Watch connections made, by informer.'),
    informerErrors: registry.counter('convoy_relay_informer_errors_total', 'Informer errors (list or watch), by informer.'),
    informerRestarts: registry.counter('convoy_relay_informer_restarts_total', 'Informers restarted after an error, by informer.'),
    informerRelists: registry.counter('convoy_relay_informer_relists_total', 'Full lists made (start, restart, periodic, 410), by informer.'),
    leader: registry.gauge('convoy_relay_leader', '1 while this replica is the leader and sends.'),
    releases: registry.gauge('convoy_relay_releases', 'Releases in the relay index.'),
    render: () => registry.render(),
  };
}
