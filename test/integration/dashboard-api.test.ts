// The HTTP routes behind the dashboard (relay/http/release-views.ts) through the front door
// (app.request()), with the REAL authenticator (TokenReview + SubjectAccessReview), the real Release
// API and, for the tree and Events, the caller's own token against the test apiserver. The callers are
// ServiceAccounts with real RBAC: a cluster-wide viewer, an operator of one namespace, a reader.
import {
  CoreV1Api,
  CustomObjectsApi,
  PatchStrategy,
  RbacAuthorizationV1Api,
  setHeaderOptions,
  type KubeConfig,
} from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { fromClientNodeKubeConfig } from '../../adapters/kube/client-node-config.ts';
import { API_GROUP, API_VERSION } from '../../domain/api/common.ts';
import { createApiApp } from '../../relay/http/app.ts';
import { createKubeAuthenticator } from '../../relay/http/auth.ts';
import { createReleaseApi } from '../../relay/http/release-api.ts';
import type { ReleaseListing } from '../../relay/http/release-list.ts';
import { userClustersOf } from '../../relay/http/user-cluster.ts';
import { serviceAccountUser, type ServiceAccountUser } from '../harness/dashboard.ts';
import { freshNamespace, kubeConfigFor, type FreshNamespace } from '../harness/kube.ts';
import { MemoryRenderStore } from '../harness/memory-render-store.ts';
import { convoyApi, releaseSpec } from '../harness/releases.ts';

const REF1 = `sha256:${'1'.repeat(64)}`;
const REF2 = `sha256:${'2'.repeat(64)}`;
const configMap = (ns: string, name: string, greeting: string) => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, namespace: ns },
  data: { greeting },
});
const secret = (ns: string, password: string) => ({
  apiVersion: 'v1',
  kind: 'Secret',
  metadata: { name: 'creds', namespace: ns },
  type: 'Opaque',
  data: { password: Buffer.from(password).toString('base64') },
});

describe('the dashboard routes of the HTTP API', { timeout: 120_000 }, () => {
  let admin: KubeConfig;
  let a: FreshNamespace; // operator: releases, clusters, configmaps, events; reader: releases get/list
  let b: FreshNamespace; // operator: releases get/list
  let c: FreshNamespace; // nobody
  let operator: ServiceAccountUser;
  let reader: ServiceAccountUser;
  let viewer: ServiceAccountUser; // list/get releases in every namespace (ClusterRole)
  const clusterRole = `dashboard-viewer-${Date.now()}`;
  let app: ReturnType<typeof createApiApp>;
  let convoy: ReturnType<typeof convoyApi>;

  const as = (u: ServiceAccountUser, init: RequestInit = {}) => ({
    ...init,
    headers: { ...(init.headers as Record<string, string>), Authorization: `Bearer ${u.token}` },
  });
  const path = (ns: string, name: string, rest = '') => `/v1/namespaces/${ns}/releases/${name}${rest}`;
  const json = async <T>(res: Response) => (await res.json()) as T;

  beforeAll(async () => {
    admin = kubeConfigFor(inject('kubeconfigPath'));
    convoy = convoyApi(admin);
    [a, b, c] = await Promise.all([
      freshNamespace(admin, 'dash-api-a'),
      freshNamespace(admin, 'dash-api-b'),
      freshNamespace(admin, 'dash-api-c'),
    ]);
    const releases = [{ apiGroups: [API_GROUP], resources: ['releases'], verbs: ['get', 'list'] }];
    operator = await serviceAccountUser(admin, a.name, 'operator', [
      {
        namespace: a.name,
        rules: [
          { apiGroups: [API_GROUP], resources: ['releases'], verbs: ['get', 'list', 'update', 'patch'] },
          { apiGroups: [API_GROUP], resources: ['clusters'], verbs: ['get'] },
          { apiGroups: ['events.k8s.io'], resources: ['events'], verbs: ['list'] },
          // A server-side apply dry run of an object that does not exist yet needs create, as kubectl diff does.
          { apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'patch', 'create'] },
        ],
      },
      { namespace: b.name, rules: releases },
    ]);
    reader = await serviceAccountUser(admin, a.name, 'reader', [{ namespace: a.name, rules: releases }]);
    viewer = await serviceAccountUser(admin, a.name, 'viewer', []);
    const rbac = admin.makeApiClient(RbacAuthorizationV1Api);
    await rbac.createClusterRole({ body: { metadata: { name: clusterRole }, rules: releases } });
    await rbac.createClusterRoleBinding({
      body: {
        metadata: { name: clusterRole },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: clusterRole },
        subjects: [{ kind: 'ServiceAccount', name: 'viewer', namespace: a.name }],
      },
    });

    await convoy.create('Cluster', a.name, 'local', { inCluster: true });
    await convoy.create('Release', a.name, 'app', releaseSpec({ targetNamespace: a.name }));
    await convoy.create('Release', a.name, 'other', releaseSpec());
    await convoy.create('Release', b.name, 'remote', releaseSpec());
    await convoy.create('Release', c.name, 'hidden', releaseSpec());
    const status = {
      lastSuccessful: { attemptedAt: '2026-12-01T10:00:00Z', phase: 'Succeeded', renderRef: REF1 },
    };
    await admin.makeApiClient(CustomObjectsApi).patchNamespacedCustomObjectStatus(
      {
        group: API_GROUP,
        version: API_VERSION,
        namespace: a.name,
        plural: 'releases',
        name: 'app',
        body: { status },
      },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    await admin
      .makeApiClient(CoreV1Api)
      .createNamespacedConfigMap({ namespace: a.name, body: configMap(a.name, 'web', 'hello') });

    const store = new MemoryRenderStore();
    const meta = (renderRef: string, createdAt: string, objectCount: number) => ({
      renderRef,
      namespace: a.name,
      release: 'app',
      createdAt,
      objectCount,
    });
    await store.put(meta(REF1, '2026-12-01T10:00:00Z', 2), [
      configMap(a.name, 'web', 'hello'),
      configMap(a.name, 'gone', 'x'),
    ]);
    await store.put(meta(REF2, '2026-12-01T11:00:00Z', 3), [
      configMap(a.name, 'web', 'world'),
      secret(a.name, 's3cret'),
      configMap(a.name, 'extra', 'y'),
    ]);
    app = createApiApp({
      auth: createKubeAuthenticator(fromClientNodeKubeConfig(admin)),
      releases: createReleaseApi(fromClientNodeKubeConfig(admin)),
      store,
      metrics: { render: () => '' },
      ready: () => true,
      userClusters: userClustersOf(fromClientNodeKubeConfig(admin)),
    });
    // RBAC is served from an informer cache: wait until every grant is visible.
    for (let i = 0; ; i++) {
      const [o, v] = await Promise.all([
        app.request(path(a.name, 'app', '/events'), as(operator)),
        app.request('/v1/releases', as(viewer)),
      ]);
      if (o.status === 200 && (await json<ReleaseListing>(v)).scope === 'cluster') break;
      if (i > 100) throw new Error('the RoleBindings did not become visible');
      await new Promise((r) => setTimeout(r, 100));
    }
  });

  afterAll(async () => {
    const rbac = admin.makeApiClient(RbacAuthorizationV1Api);
    await rbac.deleteClusterRoleBinding({ name: clusterRole }).catch(() => undefined);
    await rbac.deleteClusterRole({ name: clusterRole }).catch(() => undefined);
    await Promise.all([a?.delete(), b?.delete(), c?.delete()]);
  });

  it('whoami names the caller; no token or a bad one is 401', async () => {
    expect(await json(await app.request('/v1/whoami', as(reader)))).toMatchObject({ user: reader.user });
    expect((await app.request('/v1/whoami')).status).toBe(401);
    const bad = await app.request('/v1/whoami', { headers: { Authorization: 'Bearer nope' } });
    expect([bad.status, (await json<{ error: string }>(bad)).error]).toEqual([401, 'Unauthorized']);
  });

  it('GET /v1/releases: every namespace for a cluster-wide viewer; otherwise only the namespaces the caller may list', async () => {
    const all = await json<ReleaseListing>(await app.request('/v1/releases', as(viewer)));
    expect(all.scope).toBe('cluster');
    const names = all.items.map((r) => `${r.namespace}/${r.name}`);
    expect(names).toEqual(
      expect.arrayContaining([`${a.name}/app`, `${a.name}/other`, `${b.name}/remote`, `${c.name}/hidden`]),
    );

    const mine = await json<ReleaseListing>(await app.request('/v1/releases', as(operator)));
    expect(mine.scope).toBe('namespaces');
    expect(mine.namespaces).toEqual([a.name, b.name].sort());
    expect(mine.items.map((r) => `${r.namespace}/${r.name}`)).toEqual(
      [`${a.name}/app`, `${a.name}/other`, `${b.name}/remote`].sort(),
    );
    const app0 = mine.items.find((r) => r.name === 'app');
    expect(app0).toMatchObject({ applied: REF1, suspended: false, verdict: { ready: false } });

    const one = await json<ReleaseListing>(await app.request(`/v1/releases?namespace=${b.name}`, as(reader)));
    expect(one).toEqual({ scope: 'namespaces', namespaces: [], items: [] });
    const invalid = await app.request('/v1/releases?namespace=Not_A_Namespace', as(reader));
    expect([invalid.status, (await json<{ field: string }>(invalid)).field]).toEqual([400, 'namespace']);
  });

  it('an unchanged list answers 304 to If-None-Match, so the 2-s refresh costs no body', async () => {
    const first = await app.request('/v1/releases', as(operator));
    const etag = first.headers.get('ETag');
    expect(etag).toMatch(/^"[\w-]+"$/);
    const again = await app.request('/v1/releases', as(operator, { headers: { 'If-None-Match': etag! } }));
    expect(again.status).toBe(304);
    expect(await again.text()).toBe('');
  });

  it('suspend and resume set spec.suspend for an operator; a reader gets 403 naming the verb', async () => {
    expect(
      (await app.request(path(a.name, 'app', '/suspend'), as(operator, { method: 'POST' }))).status,
    ).toBe(200);
    expect((await convoy.getRelease(a.name, 'app')).spec.suspend).toBe(true);
    expect((await app.request(path(a.name, 'app', '/resume'), as(operator, { method: 'POST' }))).status).toBe(
      200,
    );
    expect((await convoy.getRelease(a.name, 'app')).spec.suspend).toBe(false);
    const denied = await app.request(path(a.name, 'app', '/suspend'), as(reader, { method: 'POST' }));
    expect(denied.status).toBe(403);
    expect((await json<{ message: string }>(denied)).message).toContain(
      `user "${reader.user}" may not update releases.convoy.dev "app"`,
    );
    expect(
      (await app.request(path(a.name, 'missing', '/suspend'), as(operator, { method: 'POST' }))).status,
    ).toBe(404);
  });

  it('rollback pins the previous render by default, as convoy rollback; {"to"} a stored render, {"lastHealthy": true} the last healthy one; refusals name what is missing', async () => {
    const post = (body?: unknown, user = operator) =>
      app.request(
        path(a.name, 'app', '/rollback'),
        as(user, { method: 'POST', ...(body === undefined ? {} : { body: JSON.stringify(body) }) }),
      );
    const pin = async () => (await convoy.getRelease(a.name, 'app')).metadata.annotations?.['convoy.dev/pin'];
    const setStatus = (status: Record<string, unknown>) =>
      admin.makeApiClient(CustomObjectsApi).patchNamespacedCustomObjectStatus(
        {
          group: API_GROUP,
          version: API_VERSION,
          namespace: a.name,
          plural: 'releases',
          name: 'app',
          body: { status },
        },
        setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
      );
    // Nothing rolled out yet (status.rollout unset), no lastHealthy.
    const none = await post();
    expect([none.status, (await json<{ error: string }>(none)).error]).toEqual([409, 'NoRender']);
    const noHealthy = await post({ lastHealthy: true });
    expect([noHealthy.status, (await json<{ error: string }>(noHealthy)).error]).toEqual([
      409,
      'NoHealthyRender',
    ]);
    const named = await post({ to: REF1 });
    expect(await json(named)).toEqual({ annotation: 'convoy.dev/pin', value: REF1, why: 'the render named' });
    expect(await pin()).toBe(REF1);
    // renderRef, the former name of `to`, is still accepted.
    expect(await json(await post({ renderRef: REF2 }))).toMatchObject({ value: REF2 });
    expect(await pin()).toBe(REF2);

    // REF2 rolled out after REF1, and is the last healthy one.
    const attempt = (renderRef: string) => ({
      attemptedAt: '2026-12-01T11:00:00Z',
      phase: 'Succeeded',
      renderRef,
    });
    await setStatus({
      rollout: { renderRef: REF2, previousRenderRef: REF1, state: 'Succeeded' },
      lastHealthy: attempt(REF2),
    });
    const previous = await post({});
    expect(await json(previous)).toEqual({
      annotation: 'convoy.dev/pin',
      value: REF1,
      why: `the render applied before ${'2'.repeat(12)}`,
    });
    expect(await pin()).toBe(REF1);
    expect(await json(await post({ lastHealthy: true }))).toEqual({
      annotation: 'convoy.dev/pin',
      value: REF2,
      why: 'the last healthy render',
    });
    expect(await pin()).toBe(REF2);
    // The first render applied has no previous one.
    await setStatus({ rollout: { renderRef: REF1, previousRenderRef: null, state: 'Succeeded' } });
    const first = await post();
    expect([first.status, (await json<{ error: string; message: string }>(first)).message]).toEqual([
      409,
      `Release ${a.name}/app has no previous render: ${'1'.repeat(12)} is the first it applied; name one: {"to": "sha256:…"} (GET …/renders lists the stored ones)`,
    ]);
    await setStatus({ rollout: null, lastHealthy: null });

    const both = await post({ to: REF1, lastHealthy: true });
    expect([both.status, (await json<{ field: string }>(both)).field]).toEqual([400, 'lastHealthy']);
    const two = await post({ to: REF1, renderRef: REF2 });
    expect([two.status, (await json<{ field: string }>(two)).field]).toEqual([400, 'to']);
    const unknown = await post({ to: `sha256:${'9'.repeat(64)}` });
    expect([unknown.status, (await json<{ error: string }>(unknown)).error]).toEqual([404, 'RenderNotFound']);
    const malformed = await post({ to: 'abc' });
    expect([malformed.status, (await json<{ field: string }>(malformed)).field]).toEqual([400, 'to']);
    const malformedOld = await post({ renderRef: 'abc' });
    expect([malformedOld.status, (await json<{ field: string }>(malformedOld)).field]).toEqual([
      400,
      'renderRef',
    ]);
    expect((await post({}, reader)).status).toBe(403);
    await app.request(path(a.name, 'app', '/pin'), as(operator, { method: 'DELETE' }));
  });

  it('the diff of two renders names added, removed and changed objects; Secret values are fingerprints only', async () => {
    const res = await app.request(path(a.name, 'app', `/renders/diff?from=${REF1}&to=${REF2}`), as(reader));
    expect(res.status).toBe(200);
    const text = await res.clone().text();
    const diff = await json<{
      objects: { kind: string; name: string; change: string; lines: string[] }[];
      unchanged: number;
    }>(res);
    expect(diff.objects.map((o) => `${o.kind}/${o.name} ${o.change}`)).toEqual([
      'ConfigMap/extra added',
      'ConfigMap/gone removed',
      'ConfigMap/web changed',
      'Secret/creds added',
    ]);
    expect(diff.objects.find((o) => o.name === 'web')?.lines).toEqual(
      expect.arrayContaining(['-   greeting: hello', '+   greeting: world']),
    );
    expect(diff.objects.find((o) => o.name === 'creds')?.lines.join('\n')).toMatch(
      /password: <hidden [0-9a-f]{12}>/,
    );
    expect(text).not.toContain('s3cret');
    expect(text).not.toContain(Buffer.from('s3cret').toString('base64'));
    const missing = await app.request(
      path(a.name, 'app', `/renders/diff?from=${REF1}&to=sha256:${'9'.repeat(64)}`),
      as(reader),
    );
    expect([missing.status, (await json<{ error: string }>(missing)).error]).toEqual([404, 'RenderNotFound']);
    const bad = await app.request(path(a.name, 'app', `/renders/diff?from=nope&to=${REF2}`), as(reader));
    expect([bad.status, (await json<{ field: string }>(bad)).field]).toEqual([400, 'from']);
  });

  it("the tree compares the applied render with the live objects using the caller's token", async () => {
    const res = await app.request(path(a.name, 'app', '/tree'), as(operator));
    expect(res.status).toBe(200);
    const tree = await json<{ renderRef: string; objects: { name: string; sync: string; health: string }[] }>(
      res,
    );
    expect(tree.renderRef).toBe(REF1);
    expect(tree.objects.map((o) => `${o.name} ${o.sync} ${o.health}`)).toEqual([
      'web Synced Healthy',
      'gone Missing Missing',
    ]);
    await admin
      .makeApiClient(CoreV1Api)
      .patchNamespacedConfigMap(
        { namespace: a.name, name: 'web', body: { data: { greeting: 'edited' } } },
        setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
      );
    const edited = await json<{ objects: { name: string; sync: string }[] }>(
      await app.request(path(a.name, 'app', '/tree'), as(operator)),
    );
    expect(edited.objects.find((o) => o.name === 'web')?.sync).toBe('OutOfSync');
    // The reader may get the Release but not the Cluster or the objects: the API server says no.
    const denied = await app.request(path(a.name, 'app', '/tree'), as(reader));
    expect(denied.status).toBe(403);
    expect((await json<{ message: string }>(denied)).message).toContain(
      `user "${reader.user}" may not read and dry-run the objects of Release ${a.name}/app`,
    );
  });

  it("Events are listed with the caller's token; without the right it is 403; a deleted Release is 404", async () => {
    await admin.makeApiClient(CustomObjectsApi).createNamespacedCustomObject({
      group: 'events.k8s.io',
      version: 'v1',
      namespace: a.name,
      plural: 'events',
      body: {
        apiVersion: 'events.k8s.io/v1',
        kind: 'Event',
        metadata: { name: 'app.test' },
        eventTime: '2026-12-01T10:00:00.000000Z',
        reportingController: 'convoy.dev/reconcile',
        reportingInstance: 'test',
        action: 'Apply',
        reason: 'RenderApplied',
        type: 'Normal',
        note: 'applied 2 objects',
        regarding: {
          apiVersion: `${API_GROUP}/${API_VERSION}`,
          kind: 'Release',
          name: 'app',
          namespace: a.name,
        },
      },
    });
    const res = await json<{ events: { reason: string; note: string }[] }>(
      await app.request(path(a.name, 'app', '/events'), as(operator)),
    );
    expect(res.events).toEqual([
      expect.objectContaining({ reason: 'RenderApplied', note: 'applied 2 objects' }),
    ]);
    const denied = await app.request(path(a.name, 'app', '/events'), as(reader));
    expect(denied.status).toBe(403);
    expect((await json<{ message: string }>(denied)).message).toContain(
      `may not list events.events.k8s.io in namespace "${a.name}"`,
    );
    expect((await app.request(path(a.name, 'nothere', '/events'), as(operator))).status).toBe(404);
  });
});
