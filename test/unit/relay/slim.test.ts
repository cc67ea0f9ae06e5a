import type { KubernetesObject } from '@kubernetes/client-node';
import type { WatchEvent } from '../../../adapters/kube/watch-stream.ts';
import { describe, expect, it } from 'vitest';
import { parseRelease, type Release } from '../../../domain/api/index.ts';
import { affectedReleases } from '../../../domain/relay/affected-releases.ts';
import { releaseChangeCause } from '../../../domain/relay/release-events.ts';
import { dueTimes, observersNotified } from '../../../domain/relay/timers.ts';
import { reconcileUpToDate } from '../../../domain/relay/up-to-date.ts';
import type { Logger } from '../../../platform/logger.ts';
import { renderReleaseGauges } from '../../../relay/release-gauges.ts';
import { createListWatch } from '../../../relay/watch/list-watch.ts';
import { createResilientInformer } from '../../../relay/watch/resilient-informer.ts';
import { once, slimDependency, slimRelease } from '../../../relay/watch/slim.ts';

const REF_A = `sha256:${'a'.repeat(64)}`;
const REF_B = `sha256:${'b'.repeat(64)}`;
const AT = '2026-12-01T10:00:00Z';

/** A Release as the API server sends it, with everything the relay does not read. */
function rawRelease(
  over: { generation?: number; resourceVersion?: string; pin?: string; state?: string } = {},
): KubernetesObject {
  return rawReleaseJson(over);
}

/** The same as JSON (creationTimestamp a string, as on the wire). */
function rawReleaseJson(over: {
  generation?: number;
  resourceVersion?: string;
  pin?: string;
  state?: string;
}): Record<string, unknown> {
  const condition = (type: string, reason: string) => ({
    type,
    status: 'True',
    reason,
    message: `${reason}: ${'a long message '.repeat(50)}`,
    lastTransitionTime: AT,
    observedGeneration: over.generation ?? 3,
  });
  const attempt = {
    attemptedAt: AT,
    phase: 'Succeeded',
    renderRef: REF_A,
    resolvedSource: { git: { url: 'https://git.example.com/apps.git', ref: 'main', commit: 'c'.repeat(40) } },
    resolvedCluster: {
      name: 'prod',
      uid: 'cluster-uid',
      server: 'https://prod',
      kubernetesVersion: 'v1.34.0',
    },
    resolvedMutations: [{ name: 'm', generation: 1 }],
  };
  return {
    apiVersion: 'convoy.dev/v1alpha1',
    kind: 'Release',
    metadata: {
      name: 'web',
      namespace: 'team-a',
      uid: 'uid-1',
      generation: over.generation ?? 3,
      resourceVersion: over.resourceVersion ?? '100',
      creationTimestamp: '2026-01-01T00:00:00Z',
      labels: { app: 'web', tier: 'front' },
      annotations: {
        'kubectl.kubernetes.io/last-applied-configuration': JSON.stringify({
          spec: { big: 'x'.repeat(2000) },
        }),
        'example.com/owner': 'team-a',
        'convoy.dev/sync-requested-at': '2026-12-01T09:00:00Z',
        ...(over.pin === undefined ? {} : { 'convoy.dev/pin': over.pin }),
      },
      finalizers: ['convoy.dev/cleanup'],
      managedFields: [
        {
          manager: 'kubectl',
          operation: 'Apply',
          apiVersion: 'convoy.dev/v1alpha1',
          fieldsType: 'FieldsV1',
          fieldsV1: { 'f:spec': { 'f:cluster': {} } },
        },
      ],
    },
    spec: {
      cluster: { name: 'prod' },
      source: {
        git: {
          url: 'https://git.example.com/apps.git',
          ref: { branch: 'main' },
          secretRef: { name: 'git-creds' },
        },
      },
      content: {
        helm: {
          values: { replicas: 3, big: 'v'.repeat(5000) },
          valuesFrom: [{ kind: 'ConfigMap', name: 'web-values' }],
        },
      },
      syncPolicy: { interval: '6m' },
    },
    status: {
      observedGeneration: over.generation ?? 3,
      reconciledAt: AT,
      lastHandledSyncAt: '2026-12-01T09:00:00Z',
      lastAttempted: attempt,
      lastSuccessful: attempt,
      lastHealthy: attempt,
      rollout: {
        renderRef: REF_A,
        previousRenderRef: REF_B,
        state: over.state ?? 'Succeeded',
        startedAt: AT,
        finishedAt: AT,
        wave: 2,
      },
      waves: [{ wave: 0, objects: 3, state: 'Healthy', appliedAt: AT, healthyAt: AT }],
      ...(over.pin === undefined ? {} : { pin: { renderRef: over.pin, state: 'Active' } }),
      lifecycle: { hooks: [{ name: 'migrate', phase: 'PreSync', state: 'Succeeded', message: 'done' }] },
      resolvedRetentionPolicy: { maxRenders: 10, maxAge: '720h' },
      healthSummary: {
        renderRef: REF_A,
        checkedAt: AT,
        total: 3,
        healthy: 2,
        progressing: 0,
        degraded: 1,
        missing: 0,
        unknown: 0,
        objects: [
          {
            apiVersion: 'apps/v1',
            kind: 'Deployment',
            namespace: 'team-a',
            name: 'web',
            state: 'Degraded',
            message: 'CrashLoopBackOff',
          },
        ],
      },
      conditions: [
        condition('Applied', 'Applied'),
        condition('InSync', 'InSync'),
        condition('Healthy', 'Degraded'),
      ],
    },
  };
}

const parsed = (raw: unknown): Release => {
  const result = parseRelease(raw);
  if (!result.ok) throw new Error(`fixture does not parse: ${result.error}`);
  return result.value;
};

const quietLogger = {
  child: () => quietLogger,
  debug() {},
  info() {},
  warn() {},
  error() {},
} as unknown as Logger;

describe('slimRelease: what the relay keeps of a Release', () => {
  it('keeps the metadata, spec and status fields the relay reads, and nothing else', () => {
    expect(slimRelease(rawRelease({ pin: REF_B }))).toEqual({
      apiVersion: 'convoy.dev/v1alpha1',
      kind: 'Release',
      metadata: {
        name: 'web',
        namespace: 'team-a',
        uid: 'uid-1',
        resourceVersion: '100',
        generation: 3,
        creationTimestamp: '2026-01-01T00:00:00Z',
        labels: { app: 'web', tier: 'front' },
        annotations: { 'convoy.dev/pin': REF_B, 'convoy.dev/sync-requested-at': '2026-12-01T09:00:00Z' },
      },
      spec: {
        cluster: { name: 'prod' },
        source: {
          git: {
            url: 'https://git.example.com/apps.git',
            ref: { branch: 'main' },
            secretRef: { name: 'git-creds' },
          },
        },
        content: { helm: { valuesFrom: [{ kind: 'ConfigMap', name: 'web-values' }] } },
        syncPolicy: { interval: '6m' },
      },
      status: {
        observedGeneration: 3,
        reconciledAt: AT,
        lastHandledSyncAt: '2026-12-01T09:00:00Z',
        lastAttempted: { attemptedAt: AT, phase: 'Succeeded', renderRef: REF_A },
        lastSuccessful: { attemptedAt: AT, phase: 'Succeeded', renderRef: REF_A },
        rollout: { renderRef: REF_A, state: 'Succeeded' },
        pin: { renderRef: REF_B, state: 'Active' },
        healthSummary: {
          renderRef: REF_A,
          checkedAt: AT,
          total: 3,
          healthy: 2,
          progressing: 0,
          degraded: 1,
          missing: 0,
          unknown: 0,
          objects: [],
        },
        conditions: [
          {
            type: 'Applied',
            status: 'True',
            reason: 'Applied',
            message: '',
            lastTransitionTime: AT,
            observedGeneration: 3,
          },
          {
            type: 'InSync',
            status: 'True',
            reason: 'InSync',
            message: '',
            lastTransitionTime: AT,
            observedGeneration: 3,
          },
          {
            type: 'Healthy',
            status: 'True',
            reason: 'Degraded',
            message: '',
            lastTransitionTime: AT,
            observedGeneration: 3,
          },
        ],
      },
    });
  });

  it('is a fifth of the JSON or less for a Release with managedFields, last-applied and inline values', () => {
    const raw = rawRelease();
    expect(JSON.stringify(slimRelease(raw)).length * 5).toBeLessThan(JSON.stringify(raw).length);
  });

  it('adds nothing a Release does not have: a new Release without status stays without one', () => {
    const raw = {
      apiVersion: 'convoy.dev/v1alpha1',
      kind: 'Release',
      metadata: { name: 'a', namespace: 'n', uid: 'u', resourceVersion: '1', generation: 1 },
      spec: { cluster: { name: 'c' }, source: { git: { url: 'https://g/x.git', ref: { branch: 'main' } } } },
    };
    expect(slimRelease(raw)).toEqual(raw);
  });

  it('still parses, and every decision of the relay is the same on the slim Release as on the full one', () => {
    const now = new Date('2026-12-01T10:03:00Z');
    const variants = [
      rawRelease(),
      rawRelease({ generation: 4, resourceVersion: '101' }),
      rawRelease({ pin: REF_B, resourceVersion: '102' }),
      rawRelease({ state: 'Progressing', resourceVersion: '103' }),
      rawRelease({ state: 'RolledBack', resourceVersion: '104' }),
    ];
    const full = variants.map(parsed);
    const slim = variants.map((v) => parsed(slimRelease(v)));
    for (let i = 0; i < variants.length; i++) {
      expect(reconcileUpToDate(slim[i])).toBe(reconcileUpToDate(full[i]));
      expect(dueTimes(slim[i], now, {}, now)).toEqual(dueTimes(full[i], now, {}, now));
      for (let j = 0; j < variants.length; j++) {
        expect(releaseChangeCause(slim[i], slim[j])).toBe(releaseChangeCause(full[i], full[j]));
        expect(observersNotified(slim[i], slim[j])).toBe(observersNotified(full[i], full[j]));
      }
    }
    expect(renderReleaseGauges(slim, now.getTime())).toBe(renderReleaseGauges(full, now.getTime()));
    const valuesChange = {
      kind: 'ConfigMap' as const,
      old: { metadata: { name: 'web-values', resourceVersion: '1' } },
      next: { metadata: { name: 'web-values', resourceVersion: '2' } },
    };
    const secretChange = {
      kind: 'Secret' as const,
      old: { metadata: { name: 'git-creds', resourceVersion: '1' } },
      next: { metadata: { name: 'git-creds', resourceVersion: '2' } },
    };
    for (const change of [valuesChange, secretChange]) {
      expect(affectedReleases(change, { releases: slim }).length).toBe(
        affectedReleases(change, { releases: full }).length,
      );
      expect(affectedReleases(change, { releases: slim })).toHaveLength(variants.length);
    }
  });
});

describe('slimDependency: what the relay keeps of the other kinds', () => {
  it('keeps identity metadata and spec; drops status, managedFields, labels and annotations', () => {
    const cluster = {
      apiVersion: 'convoy.dev/v1alpha1',
      kind: 'Cluster',
      metadata: {
        name: 'prod',
        namespace: 'team-a',
        uid: 'c1',
        resourceVersion: '7',
        generation: 2,
        labels: { a: 'b' },
        annotations: { x: 'y' },
        managedFields: [{ manager: 'kubectl' }],
      },
      spec: { kubeConfig: { secretRef: { name: 'prod-kubeconfig' } } },
      status: { conditions: [{ type: 'Ready', status: 'True' }] },
    };
    expect(slimDependency(cluster)).toEqual({
      apiVersion: 'convoy.dev/v1alpha1',
      kind: 'Cluster',
      metadata: { name: 'prod', namespace: 'team-a', uid: 'c1', resourceVersion: '7', generation: 2 },
      spec: { kubeConfig: { secretRef: { name: 'prod-kubeconfig' } } },
    });
  });

  it('keeps a metadata-only ConfigMap to its identity and resourceVersion', () => {
    const partial = {
      apiVersion: 'meta.k8s.io/v1',
      kind: 'PartialObjectMetadata',
      metadata: {
        name: 'v',
        namespace: 'n',
        uid: 'u',
        resourceVersion: '9',
        labels: { 'convoy.dev/watch': 'true' },
        managedFields: [{}],
      },
    };
    expect(slimDependency(partial)).toEqual({
      apiVersion: 'meta.k8s.io/v1',
      kind: 'PartialObjectMetadata',
      metadata: { name: 'v', namespace: 'n', uid: 'u', resourceVersion: '9' },
    });
  });
});

describe('the transform at the informer', () => {
  it('once() returns an object it made as it is, so list and informer do not copy twice', () => {
    const slim = once<KubernetesObject>(slimRelease);
    const first = slim(rawRelease());
    expect(slim(first)).toBe(first);
    expect(slim(rawRelease())).not.toBe(first);
  });

  it('the informer holds the slim object of every listed and watched Release, and the watch resumes from the bookmark', async () => {
    const watches: { from: string; onEvent: (event: WatchEvent) => void; end: () => void }[] = [];
    let subscribed: () => void = () => undefined;
    let watching = new Promise<void>((resolve) => (subscribed = resolve));
    const fakeWatch = (from: string, onEvent: (event: WatchEvent) => void) =>
      new Promise<void>((end) => {
        watches.push({ from, onEvent, end });
        subscribed();
      });
    const informer = createResilientInformer<KubernetesObject>({
      name: 'Release',
      path: '/apis/convoy.dev/v1alpha1/releases',
      list: () => Promise.resolve({ metadata: { resourceVersion: '100' }, items: [rawRelease()] }),
      transform: once<KubernetesObject>(slimRelease),
      createListWatch: (list, transform) => createListWatch(list, fakeWatch, transform),
      onEvent: () => undefined,
      logger: quietLogger,
    });
    informer.start();
    // The session watches once its list is applied, from the list's resourceVersion.
    await watching;
    expect(watches[0]?.from).toBe('100');
    expect(informer.get('team-a', 'web')).toEqual(slimRelease(rawRelease()));

    watches[0]?.onEvent({
      type: 'MODIFIED',
      object: rawReleaseJson({ generation: 4, resourceVersion: '101' }),
    });
    watches[0]?.onEvent({ type: 'BOOKMARK', object: { metadata: { resourceVersion: '102' } } });
    expect(informer.get('team-a', 'web')).toEqual(
      slimRelease(rawRelease({ generation: 4, resourceVersion: '101' })),
    );
    // The server ends the watch (its timeout): the next one starts from the bookmark.
    watching = new Promise<void>((resolve) => (subscribed = resolve));
    watches[0]?.end();
    await watching;
    expect(watches[1]?.from).toBe('102');
    await informer.stop();
  });
});
