import { describe, expect, it } from 'vitest';
import { createRelayMetrics } from '../../../relay/metrics.ts';
import { renderReleaseSetGauges } from '../../../relay/release-set-gauges.ts';
import { slimCluster, slimReleaseSet } from '../../../relay/watch/slim.ts';

const rawSet = {
  apiVersion: 'convoy.dev/v1alpha1',
  kind: 'ReleaseSet',
  metadata: {
    name: 'web',
    namespace: 'team-a',
    uid: 'set-1',
    resourceVersion: '7',
    generation: 3,
    labels: { team: 'a' },
    annotations: {
      'convoy.dev/approve': 'canary@r1',
      'kubectl.kubernetes.io/last-applied-configuration': 'x'.repeat(5_000),
    },
    managedFields: [{ manager: 'kubectl' }],
  },
  spec: {
    template: { spec: { source: { git: { url: 'https://git.example.com/a.git' } } } },
    clusters: { selector: {} },
  },
  status: {
    observedGeneration: 3,
    rollout: { state: 'Progressing', step: 1, stepName: 'wave-1', stepStartedAt: '2026-01-01T00:00:00Z' },
    clusters: { selected: 10, updated: 4, ready: 3, waiting: 6, failed: 1 },
    failing: [{ cluster: 'c1', release: 'web-c1', signal: 'Healthy', reason: 'Degraded', message: 'm' }],
    steps: [{ name: 'canary', clusters: 1, updated: 1, ready: 1, failed: 0, state: 'Succeeded' }],
  },
};

describe('slimReleaseSet / slimCluster: what the relay keeps', () => {
  it('a set keeps identity, generation, the request annotations, the rollout and the counts; no spec', () => {
    expect(slimReleaseSet(rawSet)).toEqual({
      apiVersion: 'convoy.dev/v1alpha1',
      kind: 'ReleaseSet',
      metadata: {
        name: 'web',
        namespace: 'team-a',
        uid: 'set-1',
        resourceVersion: '7',
        generation: 3,
        annotations: { 'convoy.dev/approve': 'canary@r1' },
      },
      status: {
        observedGeneration: 3,
        rollout: { state: 'Progressing', step: 1, stepName: 'wave-1' },
        clusters: rawSet.status.clusters,
      },
    });
  });

  it('a Cluster keeps its labels (set selection) and annotations (${cluster.annotations.…}) besides the identity and spec; not last-applied-configuration', () => {
    const annotations = { a: 'b', 'kubectl.kubernetes.io/last-applied-configuration': '{"kind":"Cluster"}' };
    const slim = slimCluster({
      metadata: { name: 'prod', namespace: 'team-a', labels: { env: 'prod' }, annotations },
      spec: { kubeConfig: {} },
      status: { x: 1 },
    });
    expect(slim).toEqual({
      metadata: { name: 'prod', namespace: 'team-a', labels: { env: 'prod' }, annotations: { a: 'b' } },
      spec: { kubeConfig: {} },
    });
  });
});

describe('per-ReleaseSet gauges', () => {
  it('one series per set and state, the rollout state and step, and whether the spec was handled', () => {
    const text = renderReleaseSetGauges([
      slimReleaseSet(rawSet),
      { metadata: { name: 'new', namespace: 'team-a', generation: 1 } },
    ]);
    expect(text).toContain('convoy_releaseset_clusters{namespace="team-a",set="web",state="selected"} 10');
    expect(text).toContain('convoy_releaseset_clusters{namespace="team-a",set="web",state="failed"} 1');
    expect(text).toContain(
      'convoy_releaseset_rollout_state{namespace="team-a",set="web",state="Progressing"} 1',
    );
    expect(text).toContain('convoy_releaseset_rollout_step{namespace="team-a",set="web",step="wave-1"} 1');
    expect(text).toContain('convoy_releaseset_observed{namespace="team-a",set="web"} 1');
    expect(text).toContain('convoy_releaseset_observed{namespace="team-a",set="new"} 0');
    expect(text.split('\n').filter((l) => l.startsWith('convoy_releaseset_clusters{'))).toHaveLength(5);
  });

  it('the relay renders them only once it observes sets (a relay without a fleet queue has none)', async () => {
    const metrics = createRelayMetrics();
    expect(await metrics.render()).not.toContain('convoy_releaseset_');
    metrics.observeReleaseSets(() => [slimReleaseSet(rawSet)]);
    expect(await metrics.render()).toContain(
      'convoy_releaseset_clusters{namespace="team-a",set="web",state="ready"} 3',
    );
  });
});
