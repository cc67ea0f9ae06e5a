import { describe, expect, it } from 'vitest';
import { parseRelease, type Release } from '../../../domain/api/objects.ts';
import type { KubeObject } from '../../../domain/render/kube-object.ts';
import type { QueueMessage } from '../../../domain/runtime/queue-message.ts';
import { FieldManager } from '../../../domain/status/field-managers.ts';
import { appliedHint, hintedRelease, hintedRender, releaseAfterWrite } from '../../../functions/runtime/applied-hint.ts';

const parsed = parseRelease({
  apiVersion: 'convoy.dev/v1alpha1',
  kind: 'Release',
  metadata: { name: 'app', namespace: 'team', uid: 'u1', generation: 1 },
  spec: { cluster: { name: 'local' }, source: { git: { url: 'https://git.example/app.git', ref: { branch: 'main' } } } },
  status: { conditions: [{ type: 'Healthy', status: 'True', reason: 'Healthy', message: 'ok', lastTransitionTime: '2026-01-01T00:00:00Z', observedGeneration: 1 }] },
});
if (!parsed.ok) throw new Error(parsed.error);
const release: Release = parsed.value;

const applied = {
  type: 'Applied',
  status: 'True',
  reason: 'Applied',
  message: 'applied',
  lastTransitionTime: '2026-01-01T00:01:00Z',
  observedGeneration: 1,
};
const write = { manager: FieldManager.release, slice: { conditions: [applied], observedGeneration: 1 } } as never;

const secret: KubeObject = { apiVersion: 'v1', kind: 'Secret', metadata: { name: 's', namespace: 'team' }, data: { password: 'aHVudGVyMg==' } };
const cm: KubeObject = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c', namespace: 'team' }, data: { a: 'b' } };

const message = (over: Partial<QueueMessage> = {}): QueueMessage => ({
  v: 1,
  loop: 'health',
  namespace: 'team',
  name: 'app',
  uid: 'u1',
  cause: 'applied sha256:x',
  sentAt: '2026-01-01T00:01:00.000Z',
  ...over,
});

describe('the applied hint the reconcile sends to drift and health', () => {
  it('merges the written conditions by type into the Release, keeping the other writers\' conditions', () => {
    const after = releaseAfterWrite(release, write) as { status: { conditions: { type: string }[] } };
    expect(after.status.conditions.map((c) => c.type).sort()).toEqual(['Applied', 'Healthy']);
  });

  it('carries Secrets as metadata only', () => {
    const hint = appliedHint(release, write, { renderRef: 'sha256:x', objects: [secret, cm], live: [secret, cm] });
    expect(hint?.live[0]).toEqual({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 's', namespace: 'team' } });
    expect(JSON.stringify(hint)).not.toContain('aHVudGVyMg==');
    expect(hint?.live[1]).toEqual(cm);
  });

  it('is used only on a first delivery of a fresh message for the same Release uid', () => {
    const hint = appliedHint(release, write, { renderRef: 'sha256:x', objects: [cm], live: [cm] });
    const at = new Date('2026-01-01T00:01:05Z');
    expect(hintedRelease(message({ applied: hint }), 1, at)?.release.metadata.uid).toBe('u1');
    expect(hintedRelease(message({ applied: hint }), 2, at)).toBeUndefined();
    expect(hintedRelease(message({ applied: hint }), 1, new Date('2026-01-01T00:02:00Z'))).toBeUndefined();
    expect(hintedRelease(message({ applied: hint, uid: 'u2' }), 1, at)).toBeUndefined();
    expect(hintedRelease(message(), 1, at)).toBeUndefined();
  });
});

describe('the render the applied hint carries (observers then load nothing from the store)', () => {
  const fullSecret: KubeObject = {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: 's', namespace: 'team', labels: { app: 'web' } },
    data: { password: 'aHVudGVyMg==' },
    stringData: { token: 'plain-token' },
    type: 'Opaque',
  };

  it('carries the rendered objects in render order, a core Secret\'s as apiVersion/kind/metadata only, in `objects` and `live`', () => {
    const liveSecret = { ...fullSecret, metadata: { ...fullSecret.metadata, uid: 'x', resourceVersion: '7' } };
    const hint = appliedHint(release, write, { renderRef: 'sha256:x', objects: [fullSecret, cm], live: [liveSecret, cm] });
    expect(hint?.objects).toEqual([{ apiVersion: 'v1', kind: 'Secret', metadata: fullSecret.metadata }, cm]);
    expect(hint?.live[0]).toEqual({ apiVersion: 'v1', kind: 'Secret', metadata: liveSecret.metadata });
  });

  it('carries no Secret data anywhere: no data, no stringData, no other field of it', () => {
    const hint = appliedHint(release, write, { renderRef: 'sha256:x', objects: [fullSecret], live: [{ ...fullSecret }] });
    const json = JSON.stringify(hint);
    expect(json).not.toContain('"data"');
    expect(json).not.toContain('"stringData"');
    expect(json).not.toContain('"type":"Opaque"');
    expect(json).not.toContain('aHVudGVyMg==');
    expect(json).not.toContain('plain-token');
  });

  it('a Secret of another API group is not a core Secret: carried whole', () => {
    const other = { apiVersion: 'example.com/v1', kind: 'Secret', metadata: { name: 'e', namespace: 'team' }, spec: { path: 'p' } } as KubeObject;
    const hint = appliedHint(release, write, { renderRef: 'sha256:x', objects: [other], live: [other] });
    expect(hint?.objects).toEqual([other]);
  });

  it('too large with the render but not without: the hint without `objects` (the observers load the render)', () => {
    // ~120 KiB each in `objects` and in `live`: over the hint's budget together, under it alone.
    const big: KubeObject = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'big', namespace: 'team' }, data: { blob: 'x'.repeat(120 * 1024) } };
    const hint = appliedHint(release, write, { renderRef: 'sha256:x', objects: [big], live: [big] });
    expect(hint).toBeDefined();
    expect(hint).not.toHaveProperty('objects');
    expect(hint?.live).toEqual([big]);
    expect(hint?.renderRef).toBe('sha256:x');
  });

  it('too large even without the render: no hint', () => {
    const huge: KubeObject = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'huge', namespace: 'team' }, data: { blob: 'x'.repeat(250 * 1024) } };
    expect(appliedHint(release, write, { renderRef: 'sha256:x', objects: [huge], live: [huge] })).toBeUndefined();
  });

  it('hintedRender: the objects as a loaded render of the hint\'s renderRef', () => {
    const hint = appliedHint(release, write, { renderRef: 'sha256:x', objects: [fullSecret, cm], live: [fullSecret, cm] });
    if (hint === undefined) throw new Error('no hint');
    expect(hintedRender(hint)).toEqual({ kind: 'loaded', renderRef: 'sha256:x', objects: hint.objects });
  });

  it('hintedRender: undefined without `objects`, when they do not match `live` one for one, or when one is not a Kubernetes object', () => {
    const hint = appliedHint(release, write, { renderRef: 'sha256:x', objects: [cm], live: [cm] });
    if (hint === undefined) throw new Error('no hint');
    const { objects: _objects, ...withoutObjects } = hint;
    expect(hintedRender(withoutObjects)).toBeUndefined();
    expect(hintedRender({ ...hint, objects: [cm, cm] })).toBeUndefined();
    expect(hintedRender({ ...hint, objects: [] })).toBeUndefined();
    expect(hintedRender({ ...hint, objects: [{ apiVersion: 'v1', metadata: { name: 'c' } }] })).toBeUndefined();
    expect(hintedRender({ ...hint, objects: [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: {} }] })).toBeUndefined();
    expect(hintedRender({ ...hint, objects: [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c', labels: { a: 1 } } }] })).toBeUndefined();
  });
});
