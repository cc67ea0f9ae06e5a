import { describe, expect, it } from 'vitest';
import { parseRelease, type Release } from '../../../domain/api/objects.ts';
import type { KubeObject } from '../../../domain/render/kube-object.ts';
import type { QueueMessage } from '../../../domain/runtime/queue-message.ts';
import { FieldManager } from '../../../domain/status/field-managers.ts';
import { appliedHint, hintedRelease, releaseAfterWrite } from '../../../functions/runtime/applied-hint.ts';

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
