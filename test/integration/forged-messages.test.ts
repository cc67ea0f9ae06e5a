/**
 * "A message is a hint, never an authority", played by the attacker who can
 * send to convoy's queues and nothing else: no Release, no RBAC, no key. Every run below starts
 * as an SQS message sent over the real wire protocol (fauxqs) to convoy's whole runtime
 * (dev/runtime.ts: the relay, a poller per queue, the real function handlers) on the real
 * apiserver. The admin kubeconfig is used only to set up the victims and to read back what the
 * cluster holds afterwards.
 *
 * What a forged message can do: make a loop look at a Release that exists (the uid of the
 * message must be the live one), exactly as a relay tick would — the loop reads the Release and
 * the cluster itself. What it cannot do: deploy anything for a Release that does not exist
 * (no object, no Lease), make a Release act on a spec it does not have (another source,
 * serviceAccountName or target namespace), put another Release's render or made-up
 * observations into a Release's status, or write a status for a uid that is not the live
 * one. Garbage and oversized bodies fail alone and are copied to the dead-letter queue at their
 * first receive; forged well-formed ones are dropped at once.
 */
import { randomUUID } from 'node:crypto';
import { CoreV1Api, type V1ConfigMap } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { DeadLetterAttribute } from '../../adapters/sqs/dead-letter.ts';
import { API_GROUP, API_VERSION } from '../../domain/api/common.ts';
import type { Release } from '../../domain/api/objects.ts';
import type { Loop, QueueMessage } from '../../domain/runtime/queue-message.ts';
import { freshNamespace, kubeConfigFor, type FreshNamespace } from '../harness/kube.ts';
import { appliedOf, startRuntimeEnv, until, type LogLine, type RuntimeEnv } from '../harness/runtime-env.ts';

const MARK = 'convoy.dev/release';
/**
 * The bound of a wait for a run's end: the test's own budget (the integration project's
 * testTimeout is 60 s), not a guess at how long a run takes — that is the machine's load (a first
 * deploy takes under a second on a quiet machine and took ~20 s at load ~29). What each case
 * asserts is decided by the run's end, whenever it comes.
 */
const RUN_WAIT_MS = 50_000;

const configMap = (name: string) =>
  `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: ${name}}\ndata: {k: v}\n`;
/** Never available: its Pod waits for a Node labelled `forged.convoy.dev/never` (none is). */
const stuckDeployment = (name: string) =>
  `apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: ${name}}\nspec:\n  replicas: 1\n  selector: {matchLabels: {app: ${name}}}\n` +
  `  template:\n    metadata: {labels: {app: ${name}}}\n    spec:\n      nodeSelector: {forged.convoy.dev/never: "true"}\n` +
  `      containers: [{name: app, image: registry.k8s.io/pause:3.10}]\n`;

/** The outcome line of one message (done, dropped, requeued, stopped, a retry). */
const outcomeOf = (lines: readonly LogLine[]): LogLine | undefined =>
  lines.find((l) => typeof l['outcome'] === 'string');

const conditionOf = (release: Release, type: string) =>
  release.status?.conditions?.find((c) => c.type === type);

describe('forged queue messages (whoever can send to a queue)', () => {
  let env: RuntimeEnv;
  /** Another namespace: where a forged copy of a Release would like its objects to go. */
  let quiet: FreshNamespace;
  let url: string;
  let core: CoreV1Api;

  beforeAll(async () => {
    const kc = kubeConfigFor(inject('kubeconfigPath'));
    env = await startRuntimeEnv(kc, 'forged', {
      relayTickMs: 200,
      visibilityTimeoutSeconds: 5,
      maxReceiveCount: 3,
    });
    quiet = await freshNamespace(kc, 'forged-quiet');
    core = kc.makeApiClient(CoreV1Api);
    url = (
      await env.repo('apps', {
        'app/cm.yaml': configMap('app-config'),
        'evil/cm.yaml': configMap('evil-config'),
        'two/a.yaml': configMap('two-a'),
        'two/b.yaml': configMap('two-b'),
        'stuck/app.yaml': `${configMap('stuck-config')}---\n${stuckDeployment('stuck')}`,
      })
    ).url;
  });

  afterAll(async () => {
    await env?.close();
    await quiet?.delete();
  });

  const send = async (loop: Loop, message: Record<string, unknown>): Promise<string> => {
    const [id] = await env.sendRaw(loop, [
      JSON.stringify({ v: 1, loop, sentAt: new Date().toISOString(), ...message }),
    ]);
    if (id === undefined) throw new Error('no message id');
    return id;
  };

  /** Waits for the outcome of one message, in any namespace (recordLines is for env.ns only). */
  const outcome = (messageId: string, timeoutMs = RUN_WAIT_MS): Promise<LogLine> =>
    until(
      `message ${messageId} has an outcome`,
      () => outcomeOf(env.logs.filter((l) => l['messageId'] === messageId)),
      { timeoutMs },
    );

  /** Every ConfigMap in the namespaces that carries convoy's mark for `release` (ns/name). */
  const markedConfigMaps = async (namespaces: readonly string[], release: string): Promise<V1ConfigMap[]> => {
    const found: V1ConfigMap[] = [];
    for (const namespace of namespaces) {
      const list = await core.listNamespacedConfigMap({ namespace });
      found.push(...list.items.filter((cm) => cm.metadata?.annotations?.[MARK] === release));
    }
    return found;
  };

  const configMapNames = async (namespace: string): Promise<string[]> =>
    (await core.listNamespacedConfigMap({ namespace })).items
      .map((cm) => cm.metadata?.name ?? '')
      .filter((n) => n !== 'kube-root-ca.crt');

  const releaseCopy = (
    namespace: string,
    name: string,
    uid: string,
    spec: Record<string, unknown>,
    status?: unknown,
  ) => ({
    apiVersion: `${API_GROUP}/${API_VERSION}`,
    kind: 'Release',
    metadata: {
      name,
      namespace,
      uid,
      generation: 1,
      resourceVersion: '1',
      creationTimestamp: new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
    },
    spec,
    ...(status === undefined ? {} : { status }),
  });

  async function appliedRelease(
    name: string,
    spec: Record<string, unknown>,
    also: (r: Release) => boolean = () => true,
  ): Promise<Release> {
    await env.createRelease(name, spec);
    return until(
      `${name} is Applied`,
      async () => {
        const r = await env.getRelease(name);
        return appliedOf(r)?.status === 'True' && also(r) ? r : undefined;
      },
      { timeoutMs: RUN_WAIT_MS },
    );
  }

  it('a reconcile message for a Release that does not exist applies nothing and leaves no Lease', async () => {
    const name = `forged-${randomUUID().slice(0, 8)}`;
    const uid = randomUUID();
    const spec = {
      cluster: { name: 'local' },
      targetNamespace: env.ns.name,
      source: { git: { url, ref: { branch: 'main' }, path: 'evil' } },
    };
    // Exactly what the relay sends for a Release just added: the cause and a copy of the Release.
    const id = await send('reconcile', {
      namespace: env.ns.name,
      name,
      uid,
      cause: 'watch: Release added',
      release: releaseCopy(env.ns.name, name, uid, spec),
    });
    const line = await outcome(id);
    expect(await markedConfigMaps([env.ns.name], `${env.ns.name}/${name}`)).toEqual([]);
    expect(await configMapNames(env.ns.name)).not.toContain('evil-config');
    expect(await env.lease(uid)).toBeUndefined();
    expect(line['outcome']).toBe('dropped');
    expect(String(line['reason'])).toMatch(/does not exist/);
  });

  it('a reconcile message with the right uid and an altered copy (source, serviceAccountName, namespace) is acted on only as the live Release says', async () => {
    // Sent the moment the Release exists: ahead of the relay's own message (200 ms coalescing),
    // so the forged message is the Release's first run — the one the relay's copy used to serve.
    const live = await env.createRelease('victim', {
      source: { git: { url, ref: { branch: 'main' }, path: 'app' } },
    });
    const uid = live.metadata.uid ?? '';
    const altered = releaseCopy(quiet.name, 'victim', uid, {
      cluster: { name: 'local' },
      targetNamespace: quiet.name,
      serviceAccountName: 'forged-sa',
      source: { git: { url, ref: { branch: 'main' }, path: 'evil' } },
    });
    const id = await send('reconcile', {
      namespace: env.ns.name,
      name: 'victim',
      uid,
      cause: 'watch: Release added',
      release: altered,
    });
    const line = await outcome(id);
    // Its own run ('done'), or — when the relay's message for the new Release got there first, as
    // under load — a wait for the Lease that run holds (the outcome kind is 'requeueAfter'; the
    // test used to list the log message 'requeued' instead, so that order failed it: soak run 3/5).
    if (line['outcome'] === 'requeueAfter') expect(String(line['reason'])).toMatch(/^lease held by /);
    else expect(line['outcome']).toBe('done');

    // The first deploy is the run that holds the Lease: this message's own, or the relay's it waited
    // for. Its status write comes before its outcome line, so once a reconcile run of victim is done
    // the status is final: read it then, instead of polling it against a guess at a run's length
    // (at load ~29 the relay's run took longer than the 15 s this used to allow).
    await until(
      'a reconcile run of victim is done',
      () => env.recordLines('victim').some((l) => l['outcome'] === 'done'),
      { timeoutMs: RUN_WAIT_MS },
    );
    const after = await env.getRelease('victim');
    expect(appliedOf(after)).toMatchObject({ status: 'True', reason: 'Applied' });
    expect(JSON.stringify(after.status)).not.toMatch(/forged-sa|evil/);
    // The live source's object, marked for the live Release, in the live target namespace; nothing of the copy's.
    expect(
      (await markedConfigMaps([env.ns.name, quiet.name], `${env.ns.name}/victim`)).map(
        (cm) => cm.metadata?.name,
      ),
    ).toEqual(['app-config']);
    expect(await configMapNames(quiet.name)).not.toContain('evil-config');
    expect(await configMapNames(env.ns.name)).not.toContain('evil-config');
    // The log says the copy was not the live Release.
    expect(env.logs.some((l) => l['messageId'] === id && /copy/.test(l.msg))).toBe(true);
  });

  it('a reconcile message whose uid is not the live one is dropped before its Lease', async () => {
    const live = await appliedRelease('renamed', {
      source: { git: { url, ref: { branch: 'main' }, path: 'app' } },
    });
    const uid = randomUUID();
    const id = await send('reconcile', {
      namespace: env.ns.name,
      name: 'renamed',
      uid,
      cause: 'watch: Release added',
      release: releaseCopy(env.ns.name, 'renamed', uid, {
        ...live.spec,
        source: { git: { url, ref: { branch: 'main' }, path: 'evil' } },
      }),
    });
    const line = await outcome(id);
    expect(line['outcome']).toBe('dropped');
    expect(String(line['reason'])).toContain(live.metadata.uid ?? '?');
    expect(await env.lease(uid)).toBeUndefined();
    expect(await configMapNames(env.ns.name)).not.toContain('evil-config');
  });

  it('a forged health hint cannot write made-up observations, nor a status for a uid that is not the live one', async () => {
    const live = await appliedRelease(
      'stuck',
      { source: { git: { url, ref: { branch: 'main' }, path: 'stuck' } }, healthAssessment: {} },
      (r) => conditionOf(r, 'Healthy') !== undefined,
    );
    const renderRef = live.status?.lastAttempted?.renderRef ?? '';
    expect(conditionOf(live, 'Healthy')?.status).not.toBe('True');
    const ns = env.ns.name;
    const mark = { [MARK]: `${ns}/stuck` };
    const objects = [
      {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: 'stuck-config', namespace: ns, annotations: mark },
        data: { k: 'v' },
      },
      {
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name: 'stuck', namespace: ns, annotations: mark },
        spec: { replicas: 1 },
      },
    ];
    // The cluster as the attacker would like it seen: the Deployment available.
    const observed = [
      { ...objects[0], metadata: { ...objects[0]?.metadata, uid: randomUUID(), resourceVersion: '1' } },
      {
        ...objects[1],
        metadata: { ...objects[1]?.metadata, uid: randomUUID(), resourceVersion: '1', generation: 1 },
        status: {
          observedGeneration: 1,
          replicas: 1,
          updatedReplicas: 1,
          readyReplicas: 1,
          availableReplicas: 1,
          conditions: [
            { type: 'Available', status: 'True' },
            { type: 'Progressing', status: 'True', reason: 'NewReplicaSetAvailable' },
          ],
        },
      },
    ];
    const hint = (uid: string) => ({
      renderRef,
      release: { ...live, metadata: { ...live.metadata, uid } },
      live: observed,
      objects,
    });

    // 1. Another uid (a Release the sender cannot read): nothing is written.
    const otherUid = randomUUID();
    const first = await send('health', {
      namespace: ns,
      name: 'stuck',
      uid: otherUid,
      cause: `applied ${renderRef}`,
      applied: hint(otherUid),
    });
    expect((await outcome(first))['outcome']).toBe('dropped');
    expect(conditionOf(await env.getRelease('stuck'), 'Healthy')?.status).not.toBe('True');

    // 2. The live uid: the health loop looks at the cluster itself.
    const uid = live.metadata.uid ?? '';
    const second = await send('health', {
      namespace: ns,
      name: 'stuck',
      uid,
      cause: `applied ${renderRef}`,
      applied: hint(uid),
    });
    const line = await outcome(second);
    expect(line['outcome']).not.toBe('dropped');
    const after = await env.getRelease('stuck');
    expect(conditionOf(after, 'Healthy')?.status).not.toBe('True');
    expect(after.status?.healthSummary?.healthy ?? 0).toBeLessThan(2);
  });

  it("a forged drift hint cannot report another Release's render as this one's", async () => {
    const alpha = await appliedRelease(
      'alpha',
      { source: { git: { url, ref: { branch: 'main' }, path: 'app' } } },
      (r) => conditionOf(r, 'InSync')?.status === 'True',
    );
    const beta = await appliedRelease('beta', {
      source: { git: { url, ref: { branch: 'main' }, path: 'two' } },
    });
    const alphaRef = alpha.status?.lastSuccessful?.renderRef ?? '';
    const betaRef = beta.status?.lastSuccessful?.renderRef ?? '';
    expect(alphaRef).not.toBe(betaRef);
    // alpha's uid, beta's name, render and spec: the render store and the target as beta's.
    const uid = alpha.metadata.uid ?? '';
    const forged = {
      ...beta,
      metadata: { ...beta.metadata, uid },
      spec: { ...beta.spec, serviceAccountName: 'forged-sa' },
      status: {
        ...beta.status,
        conditions: (beta.status?.conditions ?? []).filter((c) => c.type !== 'InSync'),
      },
    };
    const id = await send('drift', {
      namespace: env.ns.name,
      name: 'alpha',
      uid,
      cause: `applied ${betaRef}`,
      applied: { renderRef: betaRef, release: forged, live: [{}, {}] },
    });
    expect((await outcome(id))['outcome']).not.toBe('dropped');
    const inSync = conditionOf(await env.getRelease('alpha'), 'InSync');
    expect(inSync?.message).toContain(alphaRef);
    expect(inSync?.message).not.toContain(betaRef);
  });

  it('garbage and oversized bodies fail alone and reach the dead-letter queue; forged well-formed ones are dropped at once; the loop goes on', async () => {
    const nobody = `nobody-${randomUUID().slice(0, 8)}`;
    const forged = JSON.stringify({
      v: 1,
      loop: 'reconcile',
      namespace: env.ns.name,
      name: nobody,
      uid: randomUUID(),
      cause: 'watch: Release added',
      sentAt: new Date().toISOString(),
    } satisfies QueueMessage);
    const garbage = '{"v":1,"loop":"reconcile", this is not json';
    const oversized = JSON.stringify({
      v: 1,
      loop: 'reconcile',
      namespace: env.ns.name,
      name: 'x',
      uid: 'u',
      cause: 'c'.repeat(200_000),
      sentAt: new Date().toISOString(),
    });
    const wrongLoop = JSON.stringify({
      v: 1,
      loop: 'health',
      namespace: env.ns.name,
      name: 'x',
      uid: 'u',
      cause: 'c',
      sentAt: new Date().toISOString(),
    });
    const [garbageId, forgedId, oversizedId, wrongLoopId] = await env.sendRaw('reconcile', [
      garbage,
      forged,
      oversized,
      wrongLoop,
    ]);
    expect((await outcome(forgedId ?? ''))['outcome']).toBe('dropped');
    // Each invalid body fails alone, with one warning, and is copied to the DLQ at its first receive.
    // Each look at the DLQ hides what it received for a minute: collect across looks.
    const dead = new Set<string | undefined>();
    await until(
      'the invalid bodies are in the dead-letter queue',
      async () => {
        // Copied there at the first receive; the copy names the original (adapters/sqs/dead-letter.ts).
        for (const m of await env.dlqMessages('reconcile'))
          dead.add(m.MessageAttributes?.[DeadLetterAttribute.sourceMessageId]?.StringValue);
        return [garbageId, oversizedId, wrongLoopId].every((id) => dead.has(id));
      },
      { timeoutMs: 30_000, intervalMs: 500 },
    );
    expect(dead.has(forgedId)).toBe(false);
    // The loop still serves a real Release.
    await appliedRelease('after-garbage', { source: { git: { url, ref: { branch: 'main' }, path: 'app' } } });
  });
});
