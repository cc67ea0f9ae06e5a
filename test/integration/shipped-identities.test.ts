/**
 * Side doors through convoy's own identities, and the Events they may write, played as the
 * attacker with the identities an install has (dev/shipped-identities.ts applies the RBAC of infra/relay-manifests.ts): the
 * functions as a user of the convoy:functions group (a static token of the control plane), the
 * relay with its ServiceAccount's token. Never admin, except to set the scene.
 */
import { randomBytes } from 'node:crypto';
import {
  AuthorizationV1Api,
  CoreV1Api,
  CustomObjectsApi,
  PatchStrategy,
  RbacAuthorizationV1Api,
  setHeaderOptions,
  type KubeConfig,
} from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { fromClientNodeKubeConfig } from '../../adapters/kube/client-node-config.ts';
import { createEventRecorder } from '../../adapters/kube/events.ts';
import { createKubeClient, resourcePath } from '../../adapters/kube/http.ts';
import { actingAs, type KubeClientConfig } from '../../adapters/kube/kubeconfig.ts';
import { FUNCTIONS_USER } from '../../dev/control-plane.ts';
import { installShippedIdentities, type ShippedIdentities } from '../../dev/shipped-identities.ts';
import { createApiApp } from '../../relay/http/app.ts';
import { createKubeAuthenticator } from '../../relay/http/auth.ts';
import { createReleaseApi } from '../../relay/http/release-api.ts';
import { freshNamespace, kubeConfigFor, type FreshNamespace } from '../harness/kube.ts';
import { convoyApi, releaseSpec } from '../harness/releases.ts';

let admin: KubeConfig;
let installation: FreshNamespace;
let tenant: FreshNamespace;
let outsider: FreshNamespace;
let identities: ShippedIdentities;
let functions: KubeClientConfig;
const SECRET_VALUE = `relay-must-not-read-${randomBytes(4).toString('hex')}`;

/** A client of the functions' identity impersonating `serviceAccount` (namespace:name), as a Release's target access does. */
const asServiceAccount = (serviceAccount: string) =>
  createKubeClient(actingAs(functions, `system:serviceaccount:${serviceAccount}`), { timeoutMs: 10_000 });

beforeAll(async () => {
  admin = kubeConfigFor(inject('kubeconfigPath'));
  installation = await freshNamespace(admin, 'shipped-system');
  tenant = await freshNamespace(admin, 'shipped-tenant');
  outsider = await freshNamespace(admin, 'shipped-outsider');
  identities = await installShippedIdentities(admin, {
    namespace: installation.name,
    tenancy: { tenantNamespaces: [tenant.name] },
    watchSecrets: false,
    functionsToken: inject('tokens')[FUNCTIONS_USER.name],
    clusterScopedSuffix: `-${installation.name}`,
  });
  functions = fromClientNodeKubeConfig(identities.functions);
  await admin.makeApiClient(CoreV1Api).createNamespacedSecret({
    namespace: tenant.name,
    body: {
      metadata: { name: 'db', labels: { 'convoy.dev/watch': 'true' } },
      stringData: { password: SECRET_VALUE },
    },
  });
});

afterAll(async () => {
  await identities?.remove();
  await Promise.all([installation?.delete(), tenant?.delete(), outsider?.delete()]);
});

describe("the functions' identity under the shipped RBAC", () => {
  it('may impersonate a ServiceAccount of a tenant namespace (the request is made as it)', async () => {
    const review = await asServiceAccount(`${tenant.name}:default`).create<{
      status?: { userInfo?: { username?: string } };
    }>('/apis/authentication.k8s.io/v1/selfsubjectreviews', {
      apiVersion: 'authentication.k8s.io/v1',
      kind: 'SelfSubjectReview',
    });
    expect(review.status?.userInfo?.username).toBe(`system:serviceaccount:${tenant.name}:default`);
  });

  it.each([
    ['kube-system:clusterrole-aggregation-controller', 'kube-system'],
    ['a ServiceAccount outside the tenant namespaces', 'outsider'],
    ["convoy's own relay ServiceAccount", 'installation'],
  ])('may not impersonate %s: the apiserver refuses the impersonation itself', async (_what, where) => {
    const serviceAccount =
      where === 'kube-system'
        ? 'kube-system:clusterrole-aggregation-controller'
        : where === 'outsider'
          ? `${outsider.name}:default`
          : `${installation.name}:convoy-relay`;
    const client = asServiceAccount(serviceAccount);
    await expect(
      client.create('/apis/authentication.k8s.io/v1/selfsubjectreviews', {
        apiVersion: 'authentication.k8s.io/v1',
        kind: 'SelfSubjectReview',
      }),
    ).rejects.toMatchObject({
      status: 403,
      message: expect.stringMatching(/cannot impersonate resource "serviceaccounts"/) as unknown,
    });
  });

  it("cannot escalate through clusterrole-aggregation-controller: adding every verb on everything to the functions' ClusterRole is refused", async () => {
    const role = `convoy-functions-${installation.name}`;
    const escalation = asServiceAccount('kube-system:clusterrole-aggregation-controller').patch(
      resourcePath('rbac.authorization.k8s.io/v1', 'clusterroles', undefined, role),
      { rules: [{ apiGroups: ['*'], resources: ['*'], verbs: ['*'] }] },
      { type: 'merge', dryRun: true },
    );
    await expect(escalation).rejects.toMatchObject({ status: 403 });
  });

  it('a SubjectAccessReview for the group agrees: impersonate is allowed in the tenant namespace only', async () => {
    const authz = admin.makeApiClient(AuthorizationV1Api);
    const allowed = async (namespace: string) =>
      (
        await authz.createSubjectAccessReview({
          body: {
            spec: {
              user: 'x',
              groups: ['convoy:functions'],
              resourceAttributes: {
                verb: 'impersonate',
                resource: 'serviceaccounts',
                namespace,
                name: 'default',
              },
            },
          },
        })
      ).status?.allowed === true;
    expect(await allowed(tenant.name)).toBe(true);
    expect(await allowed('kube-system')).toBe(false);
    expect(await allowed(outsider.name)).toBe(false);
    expect(await allowed(installation.name)).toBe(false);
  });
});

describe("the relay's identity under the shipped RBAC", () => {
  it("may not patch or replace a Release's spec (another tenant's serviceAccountName or source)", async () => {
    const name = `victim-${randomBytes(3).toString('hex')}`;
    await convoyApi(admin).create('Release', tenant.name, name, releaseSpec());
    const relay = identities.relay.makeApiClient(CustomObjectsApi);
    const target = {
      group: 'convoy.dev',
      version: 'v1alpha1',
      namespace: tenant.name,
      plural: 'releases',
      name,
    };
    await expect(
      relay.patchNamespacedCustomObject(
        { ...target, dryRun: 'All', body: { spec: { serviceAccountName: 'cluster-admin-sa' } } },
        setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
      ),
    ).rejects.toMatchObject({ code: 403 });
    const current = (await relay.getNamespacedCustomObject(target)) as { spec: Record<string, unknown> };
    await expect(
      relay.replaceNamespacedCustomObject({
        ...target,
        dryRun: 'All',
        body: { ...current, spec: { ...current.spec, serviceAccountName: 'cluster-admin-sa' } },
      }),
    ).rejects.toMatchObject({ code: 403 });
  });

  it('may neither list nor get Secrets (watchSecrets off: no Secret data reaches the relay)', async () => {
    const core = identities.relay.makeApiClient(CoreV1Api);
    await expect(
      core.listSecretForAllNamespaces({ labelSelector: 'convoy.dev/watch=true' }),
    ).rejects.toMatchObject({ code: 403 });
    await expect(core.listNamespacedSecret({ namespace: tenant.name })).rejects.toMatchObject({ code: 403 });
    await expect(core.readNamespacedSecret({ namespace: tenant.name, name: 'db' })).rejects.toMatchObject({
      code: 403,
    });
  });

  it("the HTTP API still syncs: the write is made with the caller's token (alice may update), not the relay's", async () => {
    const name = `synced-${randomBytes(3).toString('hex')}`;
    await convoyApi(admin).create('Release', tenant.name, name, releaseSpec());
    const rbac = admin.makeApiClient(RbacAuthorizationV1Api);
    await rbac.createNamespacedRole({
      namespace: tenant.name,
      body: {
        metadata: { name: 'release-operator' },
        rules: [{ apiGroups: ['convoy.dev'], resources: ['releases'], verbs: ['get', 'update'] }],
      },
    });
    await rbac.createNamespacedRoleBinding({
      namespace: tenant.name,
      body: {
        metadata: { name: 'alice-operator' },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'release-operator' },
        subjects: [{ kind: 'User', name: 'alice', apiGroup: 'rbac.authorization.k8s.io' }],
      },
    });
    const app = createApiApp({
      auth: createKubeAuthenticator(fromClientNodeKubeConfig(identities.relay)),
      releases: createReleaseApi(fromClientNodeKubeConfig(identities.relay)),
      metrics: { render: () => '' },
      ready: () => true,
    });
    const sync = await app.request(`/v1/namespaces/${tenant.name}/releases/${name}/sync`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${inject('tokens')['alice']}` },
    });
    expect(sync.status, await sync.clone().text()).toBe(202);
    const { annotation, value } = (await sync.json()) as { annotation: string; value: string };
    const release = await convoyApi(admin).getRelease(tenant.name, name);
    expect(release.metadata.annotations?.[annotation]).toBe(value);
    const suspend = await app.request(`/v1/namespaces/${tenant.name}/releases/${name}/suspend`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${inject('tokens')['alice']}` },
    });
    expect(suspend.status, await suspend.clone().text()).toBe(200);
    expect((await convoyApi(admin).getRelease(tenant.name, name)).spec.suspend).toBe(true);
  });
});

describe('Events under the shipped RBAC', () => {
  it("the functions' group creates a Release's Events in its namespace and counts a repeat in the series", async () => {
    const recorder = createEventRecorder(functions, {
      controller: 'convoy.dev/reconcile',
      instance: 'shipped-identities',
    });
    const subject = { namespace: tenant.name, name: 'hello', uid: randomBytes(8).toString('hex') };
    const event = {
      type: 'Normal' as const,
      reason: 'RenderApplied',
      action: 'Apply',
      note: 'applied 3 objects',
    };
    expect(await recorder.record(subject, [event])).toEqual([]);
    expect(await recorder.record(subject, [event])).toEqual([]);
    const events = (
      await createKubeClient(fromClientNodeKubeConfig(admin)).get<{
        items: { reason: string; series?: { count: number } }[];
      }>(resourcePath('events.k8s.io/v1', 'events', tenant.name))
    ).items;
    expect(events).toContainEqual(
      expect.objectContaining({
        reason: 'RenderApplied',
        series: expect.objectContaining({ count: 2 }) as unknown,
      }),
    );
  });
});
