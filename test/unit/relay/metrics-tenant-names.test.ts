// /metrics needs no token (kubelet and Prometheus read it), so by default it names no tenant's
// Release or ReleaseSet — GET /v1/releases hides other tenants' Releases, and so must this. The
// relay's /metrics over a real HTTP server (the hono app on @hono/node-server), without and with
// the installation's opt-in (CONVOY_METRICS_PER_RELEASE).
import { spawnSync } from 'node:child_process';
import type { Env, Hono } from 'hono';
import { afterEach, describe, expect, it } from 'vitest';
import { parseRelease, type Release } from '../../../domain/api/objects.ts';
import { createApiApp, createProbeApp } from '../../../relay/http/app.ts';
import { serveApi, type ServedApi } from '../../../relay/http/serve.ts';
import { createRelayMetrics } from '../../../relay/metrics.ts';
import type { GaugedReleaseSet } from '../../../relay/release-set-gauges.ts';

const NOW = Date.parse('2026-12-01T10:00:00Z');
const cond = (type: string, status: string, reason: string) => ({
  type,
  status,
  reason,
  message: '',
  lastTransitionTime: '2026-12-01T09:00:00Z',
  observedGeneration: 1,
});

function release(namespace: string, name: string, status: Record<string, unknown>): Release {
  const parsed = parseRelease({
    apiVersion: 'convoy.dev/v1alpha1',
    kind: 'Release',
    metadata: { name, namespace, generation: 1 },
    spec: { cluster: { name: 'c' }, source: { git: { url: 'https://g/x.git', ref: { branch: 'main' } } } },
    status,
  });
  if (!parsed.ok) throw new Error(parsed.error);
  return parsed.value;
}

const releases = [
  release('team-secret-a', 'payroll-web', {
    conditions: [cond('Applied', 'True', 'Applied'), cond('Healthy', 'False', 'Degraded')],
    rollout: { renderRef: 'sha256:x', state: 'Failed' },
    lastSuccessful: { attemptedAt: '2026-12-01T09:50:00Z', phase: 'Succeeded' },
  }),
  release('team-secret-b', 'merger-plans', {
    conditions: [cond('Applied', 'True', 'Applied'), cond('Healthy', 'True', 'Healthy')],
    lastSuccessful: { attemptedAt: '2026-12-01T09:59:00Z', phase: 'Succeeded' },
  }),
];
const sets: GaugedReleaseSet[] = [
  {
    metadata: { name: 'acquisition-rollout', namespace: 'team-secret-b', generation: 2 },
    status: {
      observedGeneration: 1,
      rollout: { state: 'Progressing', step: 0, stepName: 'canary' },
      clusters: { selected: 3 },
    },
  },
];
const NAMES = ['team-secret-a', 'team-secret-b', 'payroll-web', 'merger-plans', 'acquisition-rollout'];

function relayMetrics() {
  const metrics = createRelayMetrics(() => NOW);
  metrics.observeReleases(() => releases);
  metrics.observeReleaseSets(() => sets);
  return metrics;
}

/** `promtool check metrics` (Debian's prometheus package; .ci/run installs it). */
function promtool(text: string): { status: number | null; output: string } {
  const run = spawnSync('promtool', ['check', 'metrics'], { input: text, encoding: 'utf8' });
  if (run.error)
    throw new Error(`promtool is not installed (apt-get install prometheus): ${run.error.message}`);
  return { status: run.status, output: `${run.stdout}${run.stderr}` };
}

let served: ServedApi[] = [];
afterEach(async () => {
  await Promise.all(served.map((s) => s.close()));
  served = [];
});

async function scrape<E extends Env>(app: Hono<E>): Promise<string> {
  const api = await serveApi(app, { port: 0 });
  served.push(api);
  const res = await fetch(`${api.url}/metrics`);
  expect(res.status).toBe(200);
  return res.text();
}

describe('/metrics and tenant names', () => {
  it('by default (API port and probes port): no namespace or name of any Release or ReleaseSet; counts by condition and rollout state instead', async () => {
    const metrics = relayMetrics();
    const api = createApiApp({
      auth: { authenticate: () => Promise.resolve(undefined), authorize: () => Promise.resolve(false) },
      releases: undefined as never,
      metrics,
      ready: () => true,
    });
    for (const text of [await scrape(api), await scrape(createProbeApp({ metrics, ready: () => true }))]) {
      for (const name of NAMES) expect(text).not.toContain(name);
      expect(text).not.toMatch(/^convoy_release_condition\{/m);
      expect(text).not.toMatch(/^convoy_releaseset_/m);
      expect(text).toContain(
        'convoy_releases_by_condition{type="Applied",status="True",reason="Applied"} 2\n',
      );
      expect(text).toContain(
        'convoy_releases_by_condition{type="Healthy",status="False",reason="Degraded"} 1\n',
      );
      expect(text).toContain('convoy_releases_by_rollout_state{state="Failed"} 1\n');
      expect(text).toContain('convoy_releases_max_seconds_since_last_success 600\n');
      expect(text).toContain('convoy_releasesets_by_rollout_state{state="Progressing"} 1\n');
      expect(text).toContain('convoy_releasesets_unobserved 1\n');
      expect(promtool(text)).toEqual({ status: 0, output: '' });
    }
  });

  it('with the opt-in: the per-Release and per-ReleaseSet series too', async () => {
    const metrics = relayMetrics();
    const text = await scrape(createProbeApp({ metrics, ready: () => true, metricsPerRelease: true }));
    expect(text).toContain(
      'convoy_release_condition{namespace="team-secret-a",name="payroll-web",type="Healthy",status="False",reason="Degraded"} 1',
    );
    expect(text).toContain(
      'convoy_releaseset_rollout_state{namespace="team-secret-b",set="acquisition-rollout",state="Progressing"} 1',
    );
    expect(text).toContain('convoy_releases_by_condition{type="Applied",status="True",reason="Applied"} 2\n');
    expect(promtool(text)).toEqual({ status: 0, output: '' });
  });
});
