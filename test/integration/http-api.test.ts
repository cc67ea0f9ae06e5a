// The relay's HTTP API through the front door (app.request(), no sockets), with the REAL
// authenticator (TokenReview + SubjectAccessReview) and Release API against the test apiserver.
import { RbacAuthorizationV1Api, type KubeConfig } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { API_GROUP, API_VERSION } from '../../domain/api/common.ts';
import { Annotation } from '../../domain/reconcile/annotations.ts';
import { createApiApp, type ApiDeps } from '../../relay/http/app.ts';
import { createKubeAuthenticator, type Authenticator } from '../../relay/http/auth.ts';
import { createReleaseApi } from '../../relay/http/release-api.ts';
import { serveApi } from '../../relay/http/serve.ts';
import { freshNamespace, kubeConfigFor, type FreshNamespace } from '../harness/kube.ts';
import type { StoredRenderMeta } from '../../domain/store/render-store.ts';
import { MemoryRenderStore } from '../harness/memory-render-store.ts';
import { convoyApi, releaseSpec } from '../harness/releases.ts';
import { fromClientNodeKubeConfig } from '../../adapters/kube/client-node-config.ts';

const NOW = new Date('2026-11-29T10:00:00.750Z');
const NOW_RFC3339 = '2026-11-29T10:00:00Z';
const ref = (c: string) => `sha256:${c.repeat(64)}`;

const METRICS =
  '# HELP convoy_relay_up 1 when the relay runs.\n# TYPE convoy_relay_up gauge\nconvoy_relay_up 1\n';

async function waitUntil(what: string, check: () => Promise<boolean>, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('HTTP API', () => {
  let admin: KubeConfig;
  let tokens: Record<string, string>;
  let granted: FreshNamespace; // alice: get+update on releases; bob: get only
  let denied: FreshNamespace; // nobody has any role here
  let auth: Authenticator;
  let store: MemoryRenderStore;
  let deps: ApiDeps;
  let app: ReturnType<typeof createApiApp>;
  let convoy: ReturnType<typeof convoyApi>;

  const bearer = (user: string) => ({ Authorization: `Bearer ${tokens[user]}` });
  const path = (ns: string, name: string, rest = '') => `/v1/namespaces/${ns}/releases/${name}${rest}`;
  const annotations = async (ns: string, name: string) =>
    (await convoy.getRelease(ns, name)).metadata.annotations ?? {};

  beforeAll(async () => {
    admin = kubeConfigFor(inject('kubeconfigPath'));
    tokens = inject('tokens');
    if (!tokens['alice'] || !tokens['bob'])
      throw new Error(
        'the control plane has no static tokens for alice and bob: check test/harness/global-setup.ts',
      );
    convoy = convoyApi(admin);
    [granted, denied] = await Promise.all([
      freshNamespace(admin, 'http-api'),
      freshNamespace(admin, 'http-api-denied'),
    ]);

    const rbac = admin.makeApiClient(RbacAuthorizationV1Api);
    const ns = granted.name;
    await rbac.createNamespacedRole({
      namespace: ns,
      body: {
        metadata: { name: 'release-operator' },
        rules: [{ apiGroups: [API_GROUP], resources: ['releases'], verbs: ['get', 'list', 'update'] }],
      },
    });
    await rbac.createNamespacedRole({
      namespace: ns,
      body: {
        metadata: { name: 'release-reader' },
        rules: [{ apiGroups: [API_GROUP], resources: ['releases'], verbs: ['get'] }],
      },
    });
    for (const [user, role] of [
      ['alice', 'release-operator'],
      ['bob', 'release-reader'],
    ] as const) {
      await rbac.createNamespacedRoleBinding({
        namespace: ns,
        body: {
          metadata: { name: `${user}-${role}` },
          roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: role },
          subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: user }],
        },
      });
    }

    for (const name of ['podinfo', 'pinned', 'verdict'])
      await convoy.create('Release', granted.name, name, releaseSpec());
    await convoy.create('Release', denied.name, 'podinfo', releaseSpec());

    auth = createKubeAuthenticator(fromClientNodeKubeConfig(admin));
    store = new MemoryRenderStore();
    deps = {
      auth,
      releases: createReleaseApi(fromClientNodeKubeConfig(admin)),
      store,
      metrics: { render: () => METRICS },
      ready: () => true,
      now: () => NOW,
    };
    app = createApiApp(deps);

    // RBAC is served from an informer cache: wait until the bindings are visible.
    await waitUntil('alice may update and bob may get releases', async () => {
      const [a, b] = await Promise.all([
        auth.authorize('alice', ['system:authenticated'], {
          verb: 'update',
          namespace: ns,
          resource: 'releases',
          name: 'podinfo',
        }),
        auth.authorize('bob', ['system:authenticated'], {
          verb: 'get',
          namespace: ns,
          resource: 'releases',
          name: 'podinfo',
        }),
      ]);
      return a && b;
    });
  });

  afterAll(async () => {
    await Promise.all([granted?.delete(), denied?.delete()]);
  });

  describe('authentication and authorization', () => {
    it('answers 401 to /sync without a bearer token', async () => {
      const res = await app.request(path(granted.name, 'podinfo', '/sync'), { method: 'POST' });
      expect(res.status).toBe(401);
      expect(res.headers.get('WWW-Authenticate')).toMatch(/^Bearer/);
      expect(await res.json()).toMatchObject({ error: 'Unauthorized' });
    });

    it('answers 401 to a token the TokenReview refuses', async () => {
      const res = await app.request(path(granted.name, 'podinfo', '/sync'), {
        method: 'POST',
        headers: { Authorization: 'Bearer not-a-real-token' },
      });
      expect(res.status).toBe(401);
      const body = (await res.json()) as { message: string };
      expect(body).toMatchObject({ error: 'Unauthorized' });
      expect(body.message).not.toContain('not-a-real-token');
    });

    it('the static token authenticates as its user', async () => {
      expect(await auth.authenticate(tokens['alice'])).toMatchObject({
        user: 'alice',
        groups: expect.arrayContaining(['system:authenticated']) as unknown,
      });
    });

    it("answers 403 to alice's /sync where she has no RBAC", async () => {
      const res = await app.request(path(denied.name, 'podinfo', '/sync'), {
        method: 'POST',
        headers: bearer('alice'),
      });
      expect(res.status).toBe(403);
      const body = (await res.json()) as { error: string; message: string };
      expect(body.error).toBe('Forbidden');
      expect(body.message).toContain('"alice"');
      expect(body.message).toContain('update');
      expect((await annotations(denied.name, 'podinfo'))[Annotation.syncRequestedAt]).toBeUndefined();
    });

    it('answers 403 to reads where the user has no RBAC', async () => {
      const res = await app.request(path(denied.name, 'podinfo'), { headers: bearer('alice') });
      expect(res.status).toBe(403);
    });

    it('needs update for /sync: get alone (bob) is refused, but bob may read', async () => {
      const sync = await app.request(path(granted.name, 'podinfo', '/sync'), {
        method: 'POST',
        headers: bearer('bob'),
      });
      expect(sync.status).toBe(403);
      const read = await app.request(path(granted.name, 'podinfo'), { headers: bearer('bob') });
      expect(read.status).toBe(200);
    });
  });

  describe('POST …/sync', () => {
    it('sets convoy.dev/sync-requested-at to now (RFC 3339, seconds) without changing the generation', async () => {
      const before = await convoy.getRelease(granted.name, 'podinfo');
      const res = await app.request(path(granted.name, 'podinfo', '/sync'), {
        method: 'POST',
        headers: bearer('alice'),
      });
      expect(res.status).toBe(202);
      expect(await res.json()).toEqual({ annotation: 'convoy.dev/sync-requested-at', value: NOW_RFC3339 });
      const after = await convoy.getRelease(granted.name, 'podinfo');
      expect(after.metadata.annotations?.[Annotation.syncRequestedAt]).toBe(NOW_RFC3339);
      expect(after.metadata.generation).toBe(before.metadata.generation);
      expect(after.metadata.generation).toBe(1);
    });

    it('?force=true sets convoy.dev/force-sync-requested-at', async () => {
      const before = await convoy.getRelease(granted.name, 'podinfo');
      const res = await app.request(path(granted.name, 'podinfo', '/sync?force=true'), {
        method: 'POST',
        headers: bearer('alice'),
      });
      expect(res.status).toBe(202);
      expect(await res.json()).toEqual({
        annotation: 'convoy.dev/force-sync-requested-at',
        value: NOW_RFC3339,
      });
      const after = await convoy.getRelease(granted.name, 'podinfo');
      expect(after.metadata.annotations?.[Annotation.forceSyncRequestedAt]).toBe(NOW_RFC3339);
      expect(after.metadata.generation).toBe(before.metadata.generation);
      expect(after.metadata.generation).toBe(1);
    });

    it('answers 400 to a force value that is not true or false', async () => {
      const res = await app.request(path(granted.name, 'podinfo', '/sync?force=yes'), {
        method: 'POST',
        headers: bearer('alice'),
      });
      expect(res.status).toBe(400);
      expect(await res.json()).toMatchObject({ error: 'InvalidRequest', field: 'force' });
    });

    it('answers 404 for a Release that does not exist', async () => {
      const res = await app.request(path(granted.name, 'nope', '/sync'), {
        method: 'POST',
        headers: bearer('alice'),
      });
      expect(res.status).toBe(404);
      const body = (await res.json()) as { error: string; message: string };
      expect(body.error).toBe('NotFound');
      expect(body.message).toContain(`${granted.name}/nope`);
    });
  });

  describe('PUT and DELETE …/pin', () => {
    const put = (name: string, body: unknown, a = app) =>
      a.request(path(granted.name, name, '/pin'), {
        method: 'PUT',
        headers: { ...bearer('alice'), 'Content-Type': 'application/json' },
        body: typeof body === 'string' ? body : JSON.stringify(body),
      });

    it('answers 400 naming renderRef when it is not sha256:<64 hex>', async () => {
      const res = await put('pinned', { renderRef: 'sha256:abc' });
      expect(res.status).toBe(400);
      const body = (await res.json()) as { error: string; field: string; message: string };
      expect(body).toMatchObject({ error: 'InvalidRequest', field: 'renderRef' });
      expect(body.message).toContain('renderRef');
    });

    it('answers 400 to a body that is not JSON', async () => {
      const res = await put('pinned', '{not json');
      expect(res.status).toBe(400);
      expect(await res.json()).toMatchObject({ error: 'InvalidRequest' });
    });

    it('answers 404 RenderNotFound when the store lacks the render, and sets nothing', async () => {
      const res = await put('pinned', { renderRef: ref('c') });
      expect(res.status).toBe(404);
      expect(await res.json()).toMatchObject({ error: 'RenderNotFound' });
      expect((await annotations(granted.name, 'pinned'))[Annotation.pin]).toBeUndefined();
    });

    it('answers 409 NoStore when no render store is configured', async () => {
      const storeless = createApiApp({ ...deps, store: undefined });
      const res = await put('pinned', { renderRef: ref('c') }, storeless);
      expect(res.status).toBe(409);
      expect(await res.json()).toMatchObject({ error: 'NoStore' });
    });

    it('answers 404 NotFound for a missing Release', async () => {
      const res = await put('nope', { renderRef: ref('c') });
      expect(res.status).toBe(404);
      expect(await res.json()).toMatchObject({ error: 'NotFound' });
    });

    it('sets convoy.dev/pin when the store holds the render, without changing the generation', async () => {
      await store.put(
        {
          renderRef: ref('d'),
          namespace: granted.name,
          release: 'pinned',
          createdAt: '2026-11-29T09:00:00Z',
          objectCount: 3,
        },
        [],
      );
      const before = await convoy.getRelease(granted.name, 'pinned');
      const res = await put('pinned', { renderRef: ref('d') });
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({ annotation: 'convoy.dev/pin', value: ref('d') });
      const after = await convoy.getRelease(granted.name, 'pinned');
      expect(after.metadata.annotations?.[Annotation.pin]).toBe(ref('d'));
      expect(after.metadata.generation).toBe(before.metadata.generation);
      expect(after.metadata.generation).toBe(1);
    });

    it('DELETE removes the pin (and is idempotent)', async () => {
      await convoy.patchMerge('Release', granted.name, 'pinned', {
        metadata: { annotations: { [Annotation.pin]: ref('d') } },
      });
      for (let i = 0; i < 2; i++) {
        const res = await app.request(path(granted.name, 'pinned', '/pin'), {
          method: 'DELETE',
          headers: bearer('alice'),
        });
        expect(res.status).toBe(200);
        expect(await res.json()).toEqual({ annotation: 'convoy.dev/pin', value: null });
        expect((await annotations(granted.name, 'pinned'))[Annotation.pin]).toBeUndefined();
      }
    });

    it('needs update: bob (get only) may not pin', async () => {
      const res = await app.request(path(granted.name, 'pinned', '/pin'), {
        method: 'DELETE',
        headers: bearer('bob'),
      });
      expect(res.status).toBe(403);
    });
  });

  describe('GET …/releases/{name}', () => {
    it('returns the Release and a verdict that waits for Applied before the first reconcile', async () => {
      const res = await app.request(path(granted.name, 'verdict'), { headers: bearer('alice') });
      expect(res.status).toBe(200);
      const body = (await res.json()) as { release: { metadata: { name: string } }; verdict: unknown };
      expect(body.release.metadata.name).toBe('verdict');
      expect(body.verdict).toMatchObject({ ready: false, signal: 'Applied', kind: 'wait' });
    });

    it('returns ready once every signal holds at the current generation', async () => {
      const release = await convoy.getRelease(granted.name, 'verdict');
      const generation = release.metadata.generation ?? 1;
      const T = '2026-11-29T10:00:00Z';
      const cond = (type: string, reason: string) => ({
        type,
        status: 'True',
        reason,
        message: '',
        lastTransitionTime: T,
        observedGeneration: generation,
      });
      const attempt = { attemptedAt: T, phase: 'Succeeded', renderRef: ref('e') };
      const { setHeaderOptions, PatchStrategy } = await import('@kubernetes/client-node');
      await convoy.raw.patchNamespacedCustomObjectStatus(
        {
          group: API_GROUP,
          version: API_VERSION,
          plural: 'releases',
          namespace: granted.name,
          name: 'verdict',
          body: {
            status: {
              observedGeneration: generation,
              lastAttempted: attempt,
              lastSuccessful: attempt,
              conditions: [
                cond('Applied', 'Applied'),
                cond('InSync', 'InSync'),
                cond('Healthy', 'NotConfigured'),
              ],
            },
          },
        },
        setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
      );
      const res = await app.request(path(granted.name, 'verdict'), { headers: bearer('bob') });
      expect(res.status).toBe(200);
      expect(((await res.json()) as { verdict: unknown }).verdict).toMatchObject({ ready: true });
    });

    it('answers 404 for a Release that does not exist', async () => {
      const res = await app.request(path(granted.name, 'missing'), { headers: bearer('alice') });
      expect(res.status).toBe(404);
      expect(await res.json()).toMatchObject({ error: 'NotFound' });
    });

    it('answers 400 naming the field for a path that cannot be a Release', async () => {
      const res = await app.request(path(granted.name, 'Not_A_Name'), { headers: bearer('alice') });
      expect(res.status).toBe(400);
      expect(await res.json()).toMatchObject({ error: 'InvalidRequest', field: 'name' });
    });
  });

  describe('GET …/renders', () => {
    it('lists the stored renders newest first', async () => {
      const meta = (c: string, createdAt: string): StoredRenderMeta => ({
        renderRef: ref(c),
        namespace: granted.name,
        release: 'podinfo',
        createdAt,
        objectCount: 1,
      });
      await store.put(meta('1', '2026-11-29T08:00:00Z'), []);
      await store.put(meta('3', '2026-11-29T10:00:00Z'), []);
      await store.put(meta('2', '2026-11-29T09:00:00Z'), []);
      const res = await app.request(path(granted.name, 'podinfo', '/renders'), { headers: bearer('bob') });
      expect(res.status).toBe(200);
      const body = (await res.json()) as { renders: StoredRenderMeta[] };
      expect(body.renders.map((r) => r.renderRef)).toEqual([ref('3'), ref('2'), ref('1')]);
    });

    it('answers 409 NoStore without a render store', async () => {
      const res = await createApiApp({ ...deps, store: undefined }).request(
        path(granted.name, 'podinfo', '/renders'),
        { headers: bearer('bob') },
      );
      expect(res.status).toBe(409);
    });
  });

  describe('probes, metrics and the webhook', () => {
    it('/healthz answers 200 without a token', async () => {
      const res = await app.request('/healthz');
      expect(res.status).toBe(200);
    });

    it('/readyz follows ready()', async () => {
      expect((await app.request('/readyz')).status).toBe(200);
      const notReady = await createApiApp({ ...deps, ready: () => false }).request('/readyz');
      expect(notReady.status).toBe(503);
      expect(await notReady.json()).toMatchObject({ error: 'NotReady' });
    });

    it('/metrics serves the Prometheus text format', async () => {
      const res = await app.request('/metrics');
      expect(res.status).toBe(200);
      expect(res.headers.get('Content-Type')).toMatch(/^text\/plain; version=0\.0\.4/);
      expect(await res.text()).toBe(METRICS);
    });

    it('POST /v1/hooks/git answers 501 until a webhook handler is plugged in', async () => {
      const res = await app.request('/v1/hooks/git', { method: 'POST', body: '{}' });
      expect(res.status).toBe(501);
      expect(await res.json()).toMatchObject({ error: 'NotImplemented' });
    });

    it('answers an unknown route with a JSON 404', async () => {
      const res = await app.request('/v2/nothing');
      expect(res.status).toBe(404);
      expect(await res.json()).toMatchObject({ error: 'NotFound' });
    });
  });

  describe('GET /v1/namespaces/{ns}/releases and the dashboard', () => {
    it('lists the Releases of a namespace with their combined verdicts for a user who may list them', async () => {
      const res = await app.request(`/v1/namespaces/${granted.name}/releases`, { headers: bearer('alice') });
      expect(res.status).toBe(200);
      const body = (await res.json()) as {
        releases: { release: { metadata: { name: string } }; verdict: { ready: boolean } }[];
      };
      expect(body.releases.map((r) => r.release.metadata.name).sort()).toEqual([
        'pinned',
        'podinfo',
        'verdict',
      ]);
      for (const entry of body.releases) expect(entry.verdict).toHaveProperty('ready');
    });

    it('refuses the list to a user without "list" on releases (403)', async () => {
      const res = await app.request(`/v1/namespaces/${granted.name}/releases`, { headers: bearer('bob') });
      expect(res.status).toBe(403);
      expect(await res.json()).toMatchObject({ error: 'Forbidden' });
    });

    it('serves the dashboard page, which holds no data and calls the API with the user’s token', async () => {
      const res = await app.request('/dashboard');
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toContain('text/html');
      expect(res.headers.get('content-security-policy')).toContain("script-src 'self'");
      const html = await res.text();
      expect(html).toContain('<script defer src="/dashboard/assets/app.js"></script>');
      const script = await app.request('/dashboard/assets/app.js');
      expect(script.headers.get('content-type')).toContain('text/javascript');
      const js = await script.text();
      expect(js).toContain('/v1/namespaces/');
      expect(js).toContain("Authorization: 'Bearer ' + token");
      expect(js).toContain('sessionStorage');
      expect(js).not.toMatch(/[?&]token=/);
      expect((await app.request('/dashboard/assets/nope.js')).status).toBe(404);
    });
  });

  describe('through a real socket (serveApi)', () => {
    it('serves probes and an authorized /sync over HTTP on loopback', async () => {
      const served = await serveApi(app, { port: 0 });
      try {
        expect(served.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
        const health = await fetch(`${served.url}/healthz`);
        expect(health.status).toBe(200);
        expect(await health.text()).toBe('ok');
        const unauth = await fetch(`${served.url}${path(granted.name, 'podinfo', '/sync')}`, {
          method: 'POST',
        });
        expect(unauth.status).toBe(401);
        await unauth.body?.cancel();
        const sync = await fetch(`${served.url}${path(granted.name, 'podinfo', '/sync')}`, {
          method: 'POST',
          headers: bearer('alice'),
        });
        expect(sync.status).toBe(202);
        expect(await sync.json()).toEqual({ annotation: Annotation.syncRequestedAt, value: NOW_RFC3339 });
      } finally {
        await served.close();
      }
    });
  });
});
