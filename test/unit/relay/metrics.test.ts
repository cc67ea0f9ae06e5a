import { describe, expect, it } from 'vitest';
import { createMetricsRegistry, createRelayMetrics, MetricNameError } from '../../../relay/metrics.ts';

describe('Prometheus text registry', () => {
  it('renders counters and gauges with HELP, TYPE and labels', () => {
    const registry = createMetricsRegistry();
    const sent = registry.counter('convoy_test_sent_total', 'Messages sent.');
    const leader = registry.gauge('convoy_test_leader', 'Leader.');
    sent.inc({ loop: 'reconcile' });
    sent.inc({ loop: 'reconcile' }, 2);
    sent.inc({ loop: 'drift' });
    leader.set(1);
    expect(registry.render()).toBe(
      [
        '# HELP convoy_test_sent_total Messages sent.',
        '# TYPE convoy_test_sent_total counter',
        'convoy_test_sent_total{loop="reconcile"} 3',
        'convoy_test_sent_total{loop="drift"} 1',
        '# HELP convoy_test_leader Leader.',
        '# TYPE convoy_test_leader gauge',
        'convoy_test_leader 1',
        '',
      ].join('\n'),
    );
  });

  it('renders histograms as cumulative buckets, sum and count', () => {
    const registry = createMetricsRegistry();
    const lag = registry.histogram('convoy_test_lag_seconds', 'Lag.', [0.5, 1]);
    lag.observe(0.2, { loop: 'health' });
    lag.observe(0.7, { loop: 'health' });
    lag.observe(3, { loop: 'health' });
    const text = registry.render();
    expect(text).toContain('convoy_test_lag_seconds_bucket{loop="health",le="0.5"} 1');
    expect(text).toContain('convoy_test_lag_seconds_bucket{loop="health",le="1"} 2');
    expect(text).toContain('convoy_test_lag_seconds_bucket{loop="health",le="+Inf"} 3');
    expect(text).toContain('convoy_test_lag_seconds_sum{loop="health"} 3.9');
    expect(text).toContain('convoy_test_lag_seconds_count{loop="health"} 3');
  });

  it('escapes label values', () => {
    const registry = createMetricsRegistry();
    registry.counter('convoy_test_total', 'x').inc({ kind: 'a"b\\c\nd' });
    expect(registry.render()).toContain('convoy_test_total{kind="a\\"b\\\\c\\nd"} 1');
  });

  it('refuses bad names, duplicates and decreasing counters', () => {
    const registry = createMetricsRegistry();
    expect(() => registry.counter('bad-name', 'x')).toThrow(MetricNameError);
    registry.counter('convoy_once_total', 'x');
    expect(() => registry.counter('convoy_once_total', 'x')).toThrow(MetricNameError);
    expect(() => registry.counter('convoy_other_total', 'x').inc({}, -1)).toThrow(MetricNameError);
  });

  it('the relay metrics render through one registry', () => {
    const metrics = createRelayMetrics();
    metrics.messagesSent.inc({ loop: 'reconcile' });
    expect(metrics.render()).toContain('convoy_relay_messages_sent_total{loop="reconcile"} 1');
  });
});
