/**
 * The hostile tenant's flood, played against a real relay process (relay/main.ts as production
 * starts it, with the shipped relay identity): a tenant allowed to act on its own Release and
 * ReleaseSet sends a 300 MB body to every route that takes one. The body is streamed (never
 * allocated here), both with a declared Content-Length and chunked. Every answer is 413 with one
 * JSON line, given long before the body is through, and the relay's resident memory (its own
 * /proc, peak included) grows by far less than the 512 Mi limit allows — a bound of 50 MB for
 * the whole flood. Before the flood each route is shown to act on a small body.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Readable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { CreateQueueCommand } from '@aws-sdk/client-sqs';
import { RbacAuthorizationV1Api, type KubeConfig } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { freePorts, spawnLogged, terminate, type SpawnedProcess } from '../../dev/control-plane/processes.ts';
import { installShippedIdentities, type ShippedIdentities } from '../../dev/shipped-identities.ts';
import { RELAY_NODE_FLAGS } from '../../image/relay-node-flags.ts';
import { MAX_API_BODY_BYTES } from '../../relay/http/body-limits.ts';
import { startFauxqsSqs, type FauxqsSqs } from '../harness/fauxqs-sqs.ts';
import { freshNamespace, kubeConfigFor, type FreshNamespace } from '../harness/kube.ts';
import { convoyApi, releaseSpec } from '../harness/releases.ts';
import { SET_SPEC } from '../harness/release-set-fixture.ts';

const FLOOD_BYTES = 300 * 1024 * 1024;
const CHUNK = Buffer.alloc(64 * 1024, 0x61);
/** The bound of the issue: the whole flood may grow the relay's resident memory by less than this. */
const MAX_RSS_GROWTH_BYTES = 50 * 1024 * 1024;
const root = resolve(import.meta.dirname, '../..');

let admin: KubeConfig;
let installation: FreshNamespace;
let tenant: FreshNamespace;
let identities: ShippedIdentities;
let sqs: FauxqsSqs;
let dir: string;
let relay: SpawnedProcess;
let url: string;
const release = `flooded-${randomBytes(3).toString('hex')}`;
const set = `flooded-set-${randomBytes(3).toString('hex')}`;

/** Every route of the API that takes a body (docs/api.md), with what a small body gets there. */
const routes = () => [
  { method: 'POST', path: `/v1/namespaces/${tenant.name}/releases/${release}/sync`, small: 202 },
  {
    method: 'PUT',
    path: `/v1/namespaces/${tenant.name}/releases/${release}/pin`,
    small: 409,
    body: JSON.stringify({ renderRef: `sha256:${'0'.repeat(64)}` }),
  },
  { method: 'DELETE', path: `/v1/namespaces/${tenant.name}/releases/${release}/pin`, small: 200 },
  { method: 'POST', path: `/v1/namespaces/${tenant.name}/releases/${release}/rollback`, small: 409 },
  { method: 'POST', path: `/v1/namespaces/${tenant.name}/releases/${release}/suspend`, small: 200 },
  { method: 'POST', path: `/v1/namespaces/${tenant.name}/releases/${release}/resume`, small: 200 },
  { method: 'POST', path: `/v1/namespaces/${tenant.name}/releasesets/${set}/approve`, small: 409 },
  { method: 'POST', path: `/v1/namespaces/${tenant.name}/releasesets/${set}/pause`, small: 200 },
  { method: 'POST', path: `/v1/namespaces/${tenant.name}/releasesets/${set}/resume`, small: 200 },
  { method: 'POST', path: `/v1/namespaces/${tenant.name}/releasesets/${set}/rollback`, small: 409 },
  // Authenticated by HMAC, not a token; its own bound is 1 MiB (git-hooks.ts).
  {
    method: 'POST',
    path: '/v1/hooks/git',
    small: 401,
    body: JSON.stringify({ ref: 'refs/heads/main' }),
    headers: { 'X-GitHub-Event': 'push' },
  },
];

/** Resident set and its peak (VmHWM) of a process, in bytes. */
async function memoryOf(pid: number): Promise<{ rss: number; peak: number }> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const kib = (field: string) =>
    Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? Number.NaN) * 1024;
  return { rss: kib('VmRSS'), peak: kib('VmHWM') };
}

interface Answer {
  status: number;
  body: string;
  /** Body bytes handed to the socket when the answer's headers arrived. */
  sentAtAnswer: number;
  ms: number;
}

/** Sends `method path` with a body of `bytes` made as it goes (64 KiB at a time), declared or chunked; resolves on the answer. */
function send(
  route: { method: string; path: string; headers?: Record<string, string> },
  bytes: number,
  framing: 'content-length' | 'chunked',
  token: string,
): Promise<Answer> {
  const started = performance.now();
  let sent = 0;
  const body = Readable.from(
    (function* () {
      while (sent < bytes) {
        const chunk = bytes - sent >= CHUNK.length ? CHUNK : CHUNK.subarray(0, bytes - sent);
        sent += chunk.length;
        yield chunk;
      }
    })(),
  );
  return new Promise((resolveAnswer, reject) => {
    const req = request(`${url}${route.path}`, {
      method: route.method,
      headers: {
        Authorization: `Bearer ${token}`,
        'Content-Type': 'application/json',
        ...(framing === 'content-length'
          ? { 'Content-Length': String(bytes) }
          : { 'Transfer-Encoding': 'chunked' }),
        ...route.headers,
      },
    });
    let answered = false;
    req.on('response', (res) => {
      answered = true;
      const sentAtAnswer = sent;
      const ms = performance.now() - started;
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => {
        body.destroy();
        req.destroy();
        resolveAnswer({ status: res.statusCode ?? 0, body: text, sentAtAnswer, ms });
      });
    });
    // The relay closes the connection after its answer: a write error after it is expected.
    req.on('error', (error) => {
      if (!answered) reject(error);
    });
    body.on('error', () => undefined);
    body.pipe(req);
  });
}

function smallRequest(
  route: { method: string; path: string; body?: string; headers?: Record<string, string> },
  token: string,
): Promise<Response> {
  return fetch(`${url}${route.path}`, {
    method: route.method,
    headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json', ...route.headers },
    ...(route.body === undefined ? {} : { body: route.body }),
  });
}

beforeAll(async () => {
  admin = kubeConfigFor(inject('kubeconfigPath'));
  installation = await freshNamespace(admin, 'flood-system');
  tenant = await freshNamespace(admin, 'flood-tenant');
  identities = await installShippedIdentities(admin, {
    namespace: installation.name,
    tenancy: { tenantNamespaces: [tenant.name] },
    watchSecrets: false,
    clusterScopedSuffix: `-${installation.name}`,
  });
  // The tenant: alice may act on the Releases and ReleaseSets of her namespace, nothing more.
  const rbac = admin.makeApiClient(RbacAuthorizationV1Api);
  await rbac.createNamespacedRole({
    namespace: tenant.name,
    body: {
      metadata: { name: 'operator' },
      rules: [
        {
          apiGroups: ['convoy.dev'],
          resources: ['releases', 'releasesets'],
          verbs: ['get', 'list', 'update'],
        },
      ],
    },
  });
  await rbac.createNamespacedRoleBinding({
    namespace: tenant.name,
    body: {
      metadata: { name: 'alice-operator' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'operator' },
      subjects: [{ kind: 'User', name: 'alice', apiGroup: 'rbac.authorization.k8s.io' }],
    },
  });
  await convoyApi(admin).create('Release', tenant.name, release, releaseSpec());
  await convoyApi(admin).create('ReleaseSet', tenant.name, set, SET_SPEC);

  sqs = await startFauxqsSqs();
  const queue = async (name: string) =>
    (await sqs.sqs.send(new CreateQueueCommand({ QueueName: `${name}-${installation.name}` }))).QueueUrl ??
    '';
  dir = await mkdtemp(join(tmpdir(), 'convoy-flood-'));
  const kubeconfig = join(dir, 'relay.kubeconfig');
  await writeFile(kubeconfig, identities.relay.exportConfig());
  const [port] = await freePorts(1);
  url = `http://127.0.0.1:${port}`;
  relay = spawnLogged(
    process.execPath,
    [...RELAY_NODE_FLAGS, join(root, 'relay', 'main.ts')],
    join(dir, 'relay.log'),
    {
      PATH: process.env['PATH'] ?? '',
      HOME: dir,
      KUBECONFIG: kubeconfig,
      CONVOY_NAMESPACE: installation.name,
      CONVOY_RECONCILE_QUEUE_URL: await queue('reconcile'),
      CONVOY_DRIFT_QUEUE_URL: await queue('drift'),
      CONVOY_HEALTH_QUEUE_URL: await queue('health'),
      CONVOY_FLEET_QUEUE_URL: await queue('fleet'),
      CONVOY_HTTP_HOST: '127.0.0.1',
      CONVOY_HTTP_PORT: String(port),
      CONVOY_LOG_LEVEL: 'warn',
      CONVOY_GIT_WEBHOOK_SECRET: randomBytes(16).toString('hex'),
      AWS_ENDPOINT_URL: `http://127.0.0.1:${sqs.server.port}`,
      AWS_REGION: 'us-east-1',
      AWS_ACCESS_KEY_ID: 'test',
      AWS_SECRET_ACCESS_KEY: 'test',
    },
  );
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (relay.proc.exitCode !== null)
      throw new Error(
        `the relay exited (${relay.proc.exitCode}): ${await readFile(join(dir, 'relay.log'), 'utf8')}`,
      );
    if ((await fetch(`${url}/readyz`).catch(() => undefined))?.ok === true) break;
    if (Date.now() > deadline)
      throw new Error(`the relay was not ready in 60 s: ${await readFile(join(dir, 'relay.log'), 'utf8')}`);
    await sleep(200);
  }
});

afterAll(async () => {
  if (relay !== undefined) await terminate(relay.proc, relay.exited, 5_000);
  await sqs?.stop();
  await identities?.remove();
  await Promise.all([installation?.delete(), tenant?.delete()]);
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
});

describe('request bodies: every route is bounded (a real relay process)', () => {
  it('a small body is acted on at each route (the bound refuses only size)', async () => {
    const token = inject('tokens')['alice'] ?? '';
    for (const route of routes()) {
      const res = await smallRequest(route, token);
      expect(res.status, `${route.method} ${route.path}: ${await res.clone().text()}`).toBe(route.small);
    }
  });

  it('a 300 MB body to each route, declared and chunked, all at once: 413 with one line each before the body is through, and the relay grows < 50 MB', async () => {
    const token = inject('tokens')['alice'] ?? '';
    // One alone first, each framing: how long an answer takes without the rest of the flood (printed, not asserted).
    const rollback = routes().find((r) => r.path.endsWith(`${release}/rollback`))!;
    const alone = [
      await send(rollback, FLOOD_BYTES, 'content-length', token),
      await send(rollback, FLOOD_BYTES, 'chunked', token),
    ];
    expect(alone.map((a) => a.status)).toEqual([413, 413]);
    const before = await memoryOf(relay.proc.pid!);
    // Reset the peak (VmHWM) to the current resident set, so the peak after the flood is the flood's.
    await writeFile(`/proc/${relay.proc.pid}/clear_refs`, '5');
    let sampledMax = before.rss;
    let flooded = false;
    const sampling = (async () => {
      while (!flooded) {
        sampledMax = Math.max(sampledMax, (await memoryOf(relay.proc.pid!)).rss);
        await sleep(10);
      }
    })();
    const flood = routes().flatMap((route) =>
      (['content-length', 'chunked'] as const).map((framing) => ({ route, framing })),
    );
    const answers = await Promise.all(
      flood.map(({ route, framing }) => send(route, FLOOD_BYTES, framing, token)),
    );
    flooded = true;
    await sampling;
    const after = await memoryOf(relay.proc.pid!);
    const growth = Math.max(sampledMax, after.peak) - before.rss;
    const mb = (bytes: number) => (bytes / 1e6).toFixed(1);
    console.log(
      `flood of ${flood.length} × 300 MB: relay RSS ${mb(before.rss)} MB before, peak ${mb(Math.max(sampledMax, after.peak))} MB (growth ${mb(growth)} MB), ${mb(after.rss)} MB after; ` +
        `answers in ${Math.round(Math.min(...answers.map((a) => a.ms)))}–${Math.round(Math.max(...answers.map((a) => a.ms)))} ms (one alone: ${alone.map((a) => Math.round(a.ms)).join(' ms declared, ')} ms chunked), ` +
        `at most ${mb(Math.max(...answers.map((a) => a.sentAtAnswer)))} MB sent before an answer`,
    );
    for (const [index, answer] of answers.entries()) {
      const { route, framing } = flood[index];
      const what = `${route.method} ${route.path} (${framing})`;
      expect(answer.status, `${what}: ${answer.body}`).toBe(413);
      expect(answer.body.trim().split('\n'), what).toHaveLength(1);
      expect(JSON.parse(answer.body), what).toMatchObject({ error: 'PayloadTooLarge' });
      // Answered long before the body was through: the relay did not wait for (or keep) it.
      expect(answer.sentAtAnswer, what).toBeLessThan(FLOOD_BYTES / 10);
    }
    expect(growth).toBeLessThan(MAX_RSS_GROWTH_BYTES);
    // The relay still serves every tenant.
    expect((await fetch(`${url}/healthz`)).status).toBe(200);
    const suspend = routes().find((r) => r.path.endsWith(`${release}/suspend`))!;
    expect((await smallRequest(suspend, token)).status).toBe(200);
  });

  it(`the bound is ${MAX_API_BODY_BYTES / 1024} KiB: one byte over is refused, the bound itself is read`, async () => {
    const token = inject('tokens')['alice'] ?? '';
    const rollback = routes().find((r) => r.path.endsWith(`${release}/rollback`))!;
    for (const framing of ['content-length', 'chunked'] as const) {
      expect((await send(rollback, MAX_API_BODY_BYTES + 1, framing, token)).status, framing).toBe(413);
      // The bound itself passes the limit and reaches the route, which refuses it as not JSON (the body is "aaa…").
      const atBound = await send(rollback, MAX_API_BODY_BYTES, framing, token);
      expect(atBound.status, `${framing}: ${atBound.body}`).toBe(400);
      expect(JSON.parse(atBound.body)).toMatchObject({
        error: 'InvalidRequest',
        message: expect.stringContaining('not JSON') as unknown,
      });
    }
  });
});
