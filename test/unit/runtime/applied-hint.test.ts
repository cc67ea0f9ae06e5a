import { describe, expect, it } from 'vitest';
import { parseRelease, type Release } from '../../../domain/api/objects.ts';
import type { KubeObject } from '../../../domain/render/kube-object.ts';
import type { QueueMessage } from '../../../domain/runtime/queue-message.ts';
import { FieldManager } from '../../../domain/status/field-managers.ts';
import { parseQueueMessage, queueMessageBody } from '../../../domain/runtime/queue-message.ts';
import { inspect } from 'node:util';
import {
  appliedHint,
  hintedRelease,
  hintedRender,
  hintKey,
  hintProblem,
  releaseAfterWrite,
  sealHint,
  type HintKey,
} from '../../../functions/runtime/applied-hint.ts';

/** The functions' key in these tests (a container's, as clients.ts makes it). */
const KEY = hintKey('the functions key');

const parsed = parseRelease({
  apiVersion: 'convoy.dev/v1alpha1',
  kind: 'Release',
  metadata: { name: 'app', namespace: 'team', uid: 'u1', generation: 1 },
  spec: {
    cluster: { name: 'local' },
    source: { git: { url: 'https://git.example/app.git', ref: { branch: 'main' } } },
  },
  status: {
    conditions: [
      {
        type: 'Healthy',
        status: 'True',
        reason: 'Healthy',
        message: 'ok',
        lastTransitionTime: '2026-01-01T00:00:00Z',
        observedGeneration: 1,
      },
    ],
  },
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
const write = {
  manager: FieldManager.release,
  slice: { conditions: [applied], observedGeneration: 1 },
} as never;

const secret: KubeObject = {
  apiVersion: 'v1',
  kind: 'Secret',
  metadata: { name: 's', namespace: 'team' },
  data: { password: 'aHVudGVyMg==' },
};
const cm: KubeObject = {
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name: 'c', namespace: 'team' },
  data: { a: 'b' },
};

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
  it("merges the written conditions by type into the Release, keeping the other writers' conditions", () => {
    const after = releaseAfterWrite(release, write) as { status: { conditions: { type: string }[] } };
    expect(after.status.conditions.map((c) => c.type).sort()).toEqual(['Applied', 'Healthy']);
  });

  it('carries Secrets as metadata only', () => {
    const hint = appliedHint(KEY, release, write, {
      renderRef: 'sha256:x',
      objects: [secret, cm],
      live: [secret, cm],
    });
    expect(hint?.live[0]).toEqual({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 's', namespace: 'team' },
    });
    expect(JSON.stringify(hint)).not.toContain('aHVudGVyMg==');
    expect(hint?.live[1]).toEqual(cm);
  });

  it('is used only on a first delivery of a fresh message for the same Release uid', () => {
    const hint = appliedHint(
      KEY,
      release,
      write,
      { renderRef: 'sha256:x', objects: [cm], live: [cm] },
      new Date('2026-01-01T00:01:00Z'),
    );
    const at = new Date('2026-01-01T00:01:05Z');
    expect(hintedRelease(KEY, message({ applied: hint }), 1, at)?.release.metadata.uid).toBe('u1');
    expect(hintedRelease(KEY, message({ applied: hint }), 2, at)).toBeUndefined();
    expect(
      hintedRelease(KEY, message({ applied: hint }), 1, new Date('2026-01-01T00:02:00Z')),
    ).toBeUndefined();
    expect(hintedRelease(KEY, message({ applied: hint, uid: 'u2' }), 1, at)).toBeUndefined();
    expect(hintedRelease(KEY, message(), 1, at)).toBeUndefined();
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

  it("carries the rendered objects in render order, a core Secret's as apiVersion/kind/metadata only, in `objects` and `live`", () => {
    const liveSecret = {
      ...fullSecret,
      metadata: { ...fullSecret.metadata, uid: 'x', resourceVersion: '7' },
    };
    const hint = appliedHint(KEY, release, write, {
      renderRef: 'sha256:x',
      objects: [fullSecret, cm],
      live: [liveSecret, cm],
    });
    expect(hint?.objects).toEqual([{ apiVersion: 'v1', kind: 'Secret', metadata: fullSecret.metadata }, cm]);
    expect(hint?.live[0]).toEqual({ apiVersion: 'v1', kind: 'Secret', metadata: liveSecret.metadata });
  });

  it('carries no Secret data anywhere: no data, no stringData, no other field of it', () => {
    const hint = appliedHint(KEY, release, write, {
      renderRef: 'sha256:x',
      objects: [fullSecret],
      live: [{ ...fullSecret }],
    });
    const json = JSON.stringify(hint);
    expect(json).not.toContain('"data"');
    expect(json).not.toContain('"stringData"');
    expect(json).not.toContain('"type":"Opaque"');
    expect(json).not.toContain('aHVudGVyMg==');
    expect(json).not.toContain('plain-token');
  });

  it('a Secret of another API group is not a core Secret: carried whole', () => {
    const other = {
      apiVersion: 'example.com/v1',
      kind: 'Secret',
      metadata: { name: 'e', namespace: 'team' },
      spec: { path: 'p' },
    } as KubeObject;
    const hint = appliedHint(KEY, release, write, { renderRef: 'sha256:x', objects: [other], live: [other] });
    expect(hint?.objects).toEqual([other]);
  });

  it('too large with the render but not without: the hint without `objects` (the observers load the render)', () => {
    // ~120 KiB each in `objects` and in `live`: over the hint's budget together, under it alone.
    const big: KubeObject = {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'big', namespace: 'team' },
      data: { blob: 'x'.repeat(120 * 1024) },
    };
    const hint = appliedHint(KEY, release, write, { renderRef: 'sha256:x', objects: [big], live: [big] });
    expect(hint).toBeDefined();
    expect(hint).not.toHaveProperty('objects');
    expect(hint?.live).toEqual([big]);
    expect(hint?.renderRef).toBe('sha256:x');
  });

  it('too large even without the render: no hint', () => {
    const huge: KubeObject = {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'huge', namespace: 'team' },
      data: { blob: 'x'.repeat(250 * 1024) },
    };
    expect(
      appliedHint(KEY, release, write, { renderRef: 'sha256:x', objects: [huge], live: [huge] }),
    ).toBeUndefined();
  });

  it("hintedRender: the objects as a loaded render of the hint's renderRef", () => {
    const hint = appliedHint(KEY, release, write, {
      renderRef: 'sha256:x',
      objects: [fullSecret, cm],
      live: [fullSecret, cm],
    });
    if (hint === undefined) throw new Error('no hint');
    expect(hintedRender(hint)).toEqual({ kind: 'loaded', renderRef: 'sha256:x', objects: hint.objects });
  });

  it('hintedRender: undefined without `objects`, when they do not match `live` one for one, or when one is not a Kubernetes object', () => {
    const hint = appliedHint(KEY, release, write, { renderRef: 'sha256:x', objects: [cm], live: [cm] });
    if (hint === undefined) throw new Error('no hint');
    const { objects: _objects, ...withoutObjects } = hint;
    expect(hintedRender(withoutObjects)).toBeUndefined();
    expect(hintedRender({ ...hint, objects: [cm, cm] })).toBeUndefined();
    expect(hintedRender({ ...hint, objects: [] })).toBeUndefined();
    expect(
      hintedRender({ ...hint, objects: [{ apiVersion: 'v1', metadata: { name: 'c' } }] }),
    ).toBeUndefined();
    expect(
      hintedRender({ ...hint, objects: [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: {} }] }),
    ).toBeUndefined();
    expect(
      hintedRender({
        ...hint,
        objects: [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c', labels: { a: 1 } } }],
      }),
    ).toBeUndefined();
  });
});

describe('a hint is used only when the functions sealed it (a message is a hint, never an authority)', () => {
  const at = new Date('2026-01-01T00:01:05Z');
  const sealed = () => {
    const hint = appliedHint(
      KEY,
      release,
      write,
      { renderRef: 'sha256:x', objects: [cm], live: [cm] },
      new Date('2026-01-01T00:01:00Z'),
    );
    if (hint === undefined) throw new Error('no hint');
    return hint;
  };

  it("a sealed hint for the message's own Release is used", () => {
    expect(hintProblem(KEY, message({ applied: sealed() }), 1, at)).toBeUndefined();
  });

  it('any change to what the observer takes from it breaks the seal: the Release, its spec or status, the renderRef, the observations, the render, the time', () => {
    const hint = sealed();
    const rel = hint.release as { spec: Record<string, unknown>; status: Record<string, unknown> };
    const altered = [
      { ...hint, release: { ...hint.release, spec: { ...rel.spec, serviceAccountName: 'admin' } } },
      {
        ...hint,
        release: {
          ...hint.release,
          status: { ...rel.status, lastSuccessful: { renderRef: 'sha256:other' } },
        },
      },
      { ...hint, renderRef: 'sha256:other' },
      { ...hint, live: [{ ...cm, status: { ready: true } }] },
      { ...hint, objects: [] },
      { ...hint, at: '2026-01-01T00:01:04.000Z' },
      { ...hint, mac: undefined },
    ];
    for (const applied of altered) expect(hintProblem(KEY, message({ applied }), 1, at)).toMatch(/seal/);
    expect(hintedRelease(KEY, message({ applied: altered[0] }), 1, at)).toBeUndefined();
  });

  it('a hint anyone could write (no seal, or sealed with another key) is not used', () => {
    const { mac: _mac, at: _at, ...unsealed } = sealed();
    expect(hintProblem(KEY, message({ applied: unsealed }), 1, at)).toBe('the hint is not sealed');
    const otherKey = sealHint(hintKey('not the functions key'), unsealed, at);
    expect(hintProblem(KEY, message({ applied: otherKey }), 1, at)).toMatch(/seal is not the functions'/);
  });

  it('a sealed hint about another Release (uid, name or namespace) is not used for this message', () => {
    const applied = sealed();
    expect(hintProblem(KEY, message({ applied, uid: 'u2' }), 1, at)).toMatch(/not the message's Release/);
    expect(hintProblem(KEY, message({ applied, name: 'other' }), 1, at)).toMatch(/not the message's Release/);
    expect(hintProblem(KEY, message({ applied, namespace: 'other' }), 1, at)).toMatch(
      /not the message's Release/,
    );
  });

  it('a sealed hint is used for at most 30 s after it was sealed, whatever sentAt says', () => {
    const applied = sealed();
    expect(
      hintProblem(
        KEY,
        message({ applied, sentAt: '2026-01-01T00:02:00.000Z' }),
        1,
        new Date('2026-01-01T00:02:01Z'),
      ),
    ).toMatch(/sealed more than 30 s ago/);
  });

  it('the same key text gives every function of an installation the same key; without one each maker draws its own', () => {
    const { mac: _mac, at: _at, ...unsealed } = sealed();
    const verifies = (sealer: HintKey, checker: HintKey) =>
      hintProblem(checker, message({ applied: sealHint(sealer, unsealed, at) }), 1, at) === undefined;
    expect(verifies(hintKey('k1'), hintKey('k1'))).toBe(true);
    expect(verifies(hintKey('k1'), hintKey('k2'))).toBe(false);
    const drawn = hintKey(undefined);
    expect(verifies(drawn, drawn)).toBe(true);
    expect(verifies(drawn, hintKey(undefined))).toBe(false);
    expect(verifies(drawn, hintKey('k1'))).toBe(false);
  });

  it('an empty key text is refused, naming CONVOY_HINT_KEY; the key holds no visible key material', () => {
    expect(() => hintKey('')).toThrow(/^CONVOY_HINT_KEY is set but empty/);
    const key = hintKey('a secret hint key');
    expect(JSON.stringify(key)).toBe('{}');
    expect(inspect(key, { showHidden: true, depth: 5 })).not.toMatch(
      /a secret hint key|Buffer|[0-9a-f]{2} [0-9a-f]{2}/,
    );
  });

  it('a loop without a key uses no hint', () => {
    expect(hintProblem(undefined, message({ applied: sealed() }), 1, at)).toMatch(/no hint key/);
    expect(hintedRelease(undefined, message({ applied: sealed() }), 1, at)).toBeUndefined();
  });

  it('the seal survives the queue: the body as sent (every non-ASCII character escaped) parses back to a hint that verifies', () => {
    const withText = parseRelease({
      ...release,
      metadata: { ...release.metadata, annotations: { note: 'caf\u00e9 \u{1f680} \u0000' } },
    });
    if (!withText.ok) throw new Error(withText.error);
    const hint = appliedHint(
      KEY,
      withText.value,
      write,
      { renderRef: 'sha256:x', objects: [cm], live: [cm] },
      new Date('2026-01-01T00:01:00Z'),
    );
    const body = queueMessageBody(message({ applied: hint }));
    const parsed = parseQueueMessage(body);
    if (!parsed.ok) throw new Error(parsed.error);
    expect(hintProblem(KEY, parsed.message, 1, at)).toBeUndefined();
    expect(hintProblem(KEY, parseQueueMessageOk(body.replace('caf\\u00e9', 'cafe')), 1, at)).toMatch(/seal/);
  });
});

function parseQueueMessageOk(body: string) {
  const parsed = parseQueueMessage(body);
  if (!parsed.ok) throw new Error(parsed.error);
  return parsed.message;
}
