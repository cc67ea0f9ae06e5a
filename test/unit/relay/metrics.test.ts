import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { parseRelease, type Release } from '../../../domain/api/objects.ts';
import { createRelayMetrics } from '../../../relay/metrics.ts';

const NOW = Date.parse('2026-12-01T10:00:00Z');

function release(name: string, status: Record<string, unknown>): Release {
  const parsed = parseRelease({
    apiVersion: 'convoy.dev/v1alpha1',
    kind: 'Release',
    metadata: { name, namespace: 'team-a', generation: 1 },
    spec: { cluster: { name: 'c' }, source: { git: { url: 'https://g/x.git', ref: { branch: 'main' } } } },
    status,
  });
  if (!parsed.ok) throw new Error(parsed.error);
  return parsed.value;
}

const cond = (type: string, status: string, reason: string) => ({
  type,
  status,
  reason,
  message: '',
  lastTransitionTime: '2026-12-01T09:00:00Z',
  observedGeneration: 1,
});

/** `promtool check metrics` (Debian's prometheus package; .ci/run installs it). */
function promtool(text: string): { status: number | null; output: string } {
  const run = spawnSync('promtool', ['check', 'metrics'], { input: text, encoding: 'utf8' });
  if (run.error)
    throw new Error(`promtool is not installed (apt-get install prometheus): ${run.error.message}`);
  return { status: run.status, output: `${run.stdout}${run.stderr}` };
}

describe('the relay metrics (prom-client)', () => {
  it('counts by label and answers get() at once', async () => {
    const metrics = createRelayMetrics();
    metrics.messagesSent.inc({ loop: 'reconcile' });
    metrics.messagesSent.inc({ loop: 'reconcile' }, 2);
    metrics.sendLag.observe(0.2, { loop: 'health' });
    metrics.leader.set(1);
    expect(metrics.messagesSent.get({ loop: 'reconcile' })).toBe(3);
    expect(metrics.sendLag.count({ loop: 'health' })).toBe(1);
    const text = await metrics.render();
    expect(text).toContain('convoy_relay_messages_sent_total{loop="reconcile"} 3');
    expect(text).toContain('convoy_relay_send_lag_seconds_bucket{le="0.25",loop="health"} 1');
    expect(text).toContain('convoy_relay_leader 1');
    // prom-client's default process metrics
    expect(text).toMatch(/^convoy_relay_process_resident_memory_bytes \d+/m);
    expect(text).toMatch(/^convoy_relay_nodejs_eventloop_lag_seconds /m);
  });

  it('per-Release gauges: conditions by type, status and reason; the rollout state; seconds since the last success', async () => {
    const metrics = createRelayMetrics(() => NOW);
    const releases = [
      release('web', {
        conditions: [cond('Applied', 'True', 'Applied'), cond('Healthy', 'False', 'Degraded')],
        rollout: { renderRef: 'sha256:x', state: 'Failed' },
        lastSuccessful: { attemptedAt: '2026-12-01T09:59:00Z', phase: 'Succeeded' },
      }),
      release('api', { conditions: [cond('Applied', 'False', 'SourceNotReady')] }),
    ];
    metrics.observeReleases(() => releases);
    const text = await metrics.render();
    expect(text).toContain(
      'convoy_release_condition{namespace="team-a",name="web",type="Applied",status="True",reason="Applied"} 1',
    );
    expect(text).toContain(
      'convoy_release_condition{namespace="team-a",name="web",type="Healthy",status="False",reason="Degraded"} 1',
    );
    expect(text).toContain(
      'convoy_release_condition{namespace="team-a",name="api",type="Applied",status="False",reason="SourceNotReady"} 1',
    );
    expect(text).toContain('convoy_release_rollout_state{namespace="team-a",name="web",state="Failed"} 1');
    expect(text).toContain('convoy_release_seconds_since_last_success{namespace="team-a",name="web"} 60');
    // A Release that left the index leaves the gauges.
    releases.pop();
    expect(await metrics.render()).not.toContain('name="api"');
  });

  it('passes promtool check metrics, with 1000 Releases', async () => {
    const metrics = createRelayMetrics(() => NOW);
    const releases = Array.from({ length: 1000 }, (_, i) =>
      release(`r-${i}`, {
        conditions: [
          cond('Applied', 'True', 'Applied'),
          cond('InSync', 'True', 'InSync'),
          cond('Healthy', 'True', 'Healthy'),
        ],
        rollout: { renderRef: 'sha256:x', state: 'Succeeded' },
        lastSuccessful: { attemptedAt: '2026-12-01T09:00:00Z', phase: 'Succeeded' },
      }),
    );
    metrics.observeReleases(() => releases);
    for (const loop of ['reconcile', 'drift', 'health']) {
      metrics.messagesSent.inc({ loop });
      metrics.sendLag.observe(0.1, { loop });
    }
    metrics.eventsSeen.inc({ kind: 'Release' });
    metrics.informerConnects.inc({ informer: 'Release' });
    const text = await metrics.render();
    expect(text.split('\n').filter((l) => l.startsWith('convoy_release_condition{'))).toHaveLength(3000);
    const checked = promtool(text);
    expect(checked.output).toBe('');
    expect(checked.status).toBe(0);
  });
});
