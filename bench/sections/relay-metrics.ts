// relayMetrics: the relay's /metrics body with 1,000 Releases in its index (three
// conditions, a rollout state and a last success each: 5,000 per-Release series next to
// prom-client's default process metrics and the relay's instruments), rendered as a scrape
// renders it. Target: a scrape under 50 ms (median of 50 after 5 warm-up scrapes).
import type { Release } from '../../domain/api/index.ts';
import { createRelayMetrics } from '../../relay/metrics.ts';
import { median, ms, percentile } from '../lib/stats.ts';

const TARGET_MS = 50;

function syntheticReleases(n: number): Release[] {
  const at = '2026-12-01T09:00:00Z';
  const cond = (type: string, reason: string) => ({
    type,
    status: 'True',
    reason,
    message: `${reason} at render sha256:…`,
    lastTransitionTime: at,
    observedGeneration: 1,
  });
  return Array.from(
    { length: n },
    (_, i) =>
      ({
        apiVersion: 'convoy.dev/v1alpha1',
        kind: 'Release',
        metadata: { namespace: `team-${i % 20}`, name: `release-${i}`, generation: 1 },
        spec: {},
        status: {
          conditions: [cond('Applied', 'Applied'), cond('InSync', 'InSync'), cond('Healthy', 'Healthy')],
          rollout: { renderRef: `sha256:${'a'.repeat(64)}`, state: 'Succeeded' },
          lastSuccessful: { attemptedAt: at, phase: 'Succeeded' },
        },
      }) as unknown as Release,
  );
}

export async function benchRelayMetrics(
  options: { releases: number } = { releases: 1000 },
): Promise<Record<string, unknown>> {
  const metrics = createRelayMetrics();
  const releases = syntheticReleases(options.releases);
  metrics.observeReleases(() => releases);
  for (const loop of ['reconcile', 'drift', 'health']) {
    metrics.messagesSent.inc({ loop }, 1000);
    metrics.sendLag.observe(0.1, { loop });
  }
  for (let i = 0; i < 5; i++) await metrics.render();
  const times: number[] = [];
  let bytes = 0;
  for (let i = 0; i < 50; i++) {
    const started = performance.now();
    bytes = (await metrics.render()).length;
    times.push(performance.now() - started);
  }
  const p50 = ms(median(times) ?? Number.NaN);
  return {
    how: 'createRelayMetrics() with a synthetic index of Releases (3 conditions, rollout state, last success each), render() as GET /metrics calls it; median and p99 of 50 scrapes after 5 warm-up scrapes, in this process',
    releases: options.releases,
    target: { scrapeMs: TARGET_MS },
    met: p50 < TARGET_MS,
    scrapeMs: { p50, p99: ms(percentile(times, 99) ?? Number.NaN), min: ms(Math.min(...times)) },
    bodyBytes: bytes,
  };
}
