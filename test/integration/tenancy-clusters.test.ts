// Three real kube-apiservers in one run: the management cluster (the run's shared control plane)
// and two targets started here — A reached through kubeconfig Secrets with token users, B through
// client certificates. Releases of two tenants on each: every object lands only where its
// Release's identity (a ServiceAccount impersonated on the management cluster, the Cluster's own
// credentials on A and B) may write.
import { appendFile } from 'node:fs/promises';
import { join } from 'node:path';
import { webcrypto } from 'node:crypto';
import { CoreV1Api, KubeConfig, RbacAuthorizationV1Api } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { stringify } from 'yaml';
import type { Release } from '../../domain/api/objects.ts';
import { DEFAULT_TENANCY } from '../../domain/tenancy/settings.ts';
import { startControlPlane, type ControlPlane } from '../../dev/control-plane.ts';
import { loadX509 } from '../../dev/control-plane/load-x509.ts';
import { kubeConfigFor } from '../harness/kube.ts';
import { startReconcileEnv, type ReconcileEnv } from '../harness/reconcile-env.ts';

const TENANTS = ['team-a', 'team-b'] as const;
type Tenant = (typeof TENANTS)[number];
const tenancy = { ...DEFAULT_TENANCY, defaultServiceAccount: 'default' };
const applied = (release: Release) => release.status?.conditions?.find((c) => c.type === 'Applied');
const configMap = (name: string, namespace: string) =>
  `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: ${name}, namespace: ${namespace}}\ndata: {k: v}\n`;

/** A CA of our own whose client certificates target B also trusts (its client CA file is reloaded when it changes). */
async function clientCertificates(users: readonly string[]) {
  const x509 = await loadX509();
  const alg = { name: 'ECDSA', namedCurve: 'P-256' } as const;
  const signing = { name: 'ECDSA', hash: 'SHA-256' } as const;
  const keys = () => webcrypto.subtle.generateKey(alg, true, ['sign', 'verify']);
  const notBefore = new Date(Date.now() - 3600_000);
  const notAfter = new Date(Date.now() + 24 * 3600_000);
  const caKeys = await keys();
  const ca = await x509.X509CertificateGenerator.createSelfSigned(
    {
      name: 'CN=tenancy-test-client-ca',
      keys: caKeys,
      notBefore,
      notAfter,
      signingAlgorithm: signing,
      extensions: [
        new x509.BasicConstraintsExtension(true, undefined, true),
        new x509.KeyUsagesExtension(
          x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.digitalSignature,
          true,
        ),
      ],
    },
    webcrypto,
  );
  const certs: Record<string, { cert: string; key: string }> = {};
  for (const user of users) {
    const userKeys = await keys();
    const cert = await x509.X509CertificateGenerator.create(
      {
        subject: `CN=${user}`,
        issuer: ca.subject,
        publicKey: userKeys.publicKey,
        signingKey: caKeys.privateKey,
        notBefore,
        notAfter,
        signingAlgorithm: signing,
        extensions: [
          new x509.BasicConstraintsExtension(false, undefined, true),
          new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.clientAuth], false),
        ],
      },
      webcrypto,
    );
    const pkcs8 = await webcrypto.subtle.exportKey('pkcs8', userKeys.privateKey);
    certs[user] = { cert: cert.toString('pem'), key: x509.PemConverter.encode(pkcs8, 'PRIVATE KEY') };
  }
  return { caPem: ca.toString('pem'), certs };
}

function kubeconfigYaml(server: string, caPem: string, user: Record<string, string>): string {
  return stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [
      { name: 't', cluster: { server, 'certificate-authority-data': Buffer.from(caPem).toString('base64') } },
    ],
    users: [{ name: 'u', user }],
    contexts: [{ name: 't', context: { cluster: 't', user: 'u' } }],
    'current-context': 't',
  });
}

function kcOf(cp: ControlPlane): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromString(cp.kubeconfigYaml);
  return kc;
}

/** Namespaces team-a and team-b on a target, each deployer allowed ConfigMaps in its own only. */
async function prepareTarget(kc: KubeConfig, userOf: (tenant: Tenant) => string) {
  const core = kc.makeApiClient(CoreV1Api);
  const rbac = kc.makeApiClient(RbacAuthorizationV1Api);
  for (const tenant of TENANTS) {
    await core.createNamespace({ body: { metadata: { name: tenant } } });
    await rbac.createNamespacedRole({
      namespace: tenant,
      body: {
        metadata: { name: 'deployer' },
        rules: [
          {
            apiGroups: [''],
            resources: ['configmaps'],
            verbs: ['get', 'list', 'create', 'update', 'patch', 'delete'],
          },
        ],
      },
    });
    await rbac.createNamespacedRoleBinding({
      namespace: tenant,
      body: {
        metadata: { name: 'deployer' },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'deployer' },
        subjects: [{ kind: 'User', name: userOf(tenant), apiGroup: 'rbac.authorization.k8s.io' }],
      },
    });
  }
}

async function exists(kc: KubeConfig, namespace: string, name: string): Promise<boolean> {
  try {
    await kc.makeApiClient(CoreV1Api).readNamespacedConfigMap({ namespace, name });
    return true;
  } catch (error) {
    if ((error as { code?: number }).code === 404) return false;
    throw error;
  }
}

describe('three kube-apiservers, two tenants on each', () => {
  let targetA: ControlPlane;
  let targetB: ControlPlane;
  let admin: KubeConfig;
  const envs = {} as Record<Tenant, ReconcileEnv>;

  beforeAll(async () => {
    admin = kubeConfigFor(inject('kubeconfigPath'));
    [targetA, targetB] = await Promise.all([
      startControlPlane({ controllers: false, extraUsers: TENANTS.map((t) => ({ name: `${t}-deployer` })) }),
      startControlPlane({ controllers: false }),
    ]);
    const client = await clientCertificates(TENANTS.map((t) => `${t}-deployer`));
    await appendFile(join(targetB.dir, 'ca.crt'), `\n${client.caPem}`);
    await prepareTarget(kcOf(targetA), (t) => `${t}-deployer`);
    await prepareTarget(kcOf(targetB), (t) => `${t}-deployer`);

    for (const tenant of TENANTS) {
      const env = await startReconcileEnv(admin, tenant);
      envs[tenant] = env;
      // The targets' apiservers (a Cluster's kubeconfig server goes through the egress policy).
      env.allowEgress(new URL(targetA.server).host, new URL(targetB.server).host);
      const core = admin.makeApiClient(CoreV1Api);
      const ns = env.ns.name;
      // Management cluster: the tenant's deployer ServiceAccount may write ConfigMaps in its namespace.
      await core.createNamespacedServiceAccount({ namespace: ns, body: { metadata: { name: 'deployer' } } });
      const rbac = admin.makeApiClient(RbacAuthorizationV1Api);
      // And read its Clusters' kubeconfig Secrets: a Release reads what it names as its own identity.
      await rbac.createNamespacedRole({
        namespace: ns,
        body: {
          metadata: { name: 'deployer' },
          rules: [
            {
              apiGroups: [''],
              resources: ['configmaps'],
              verbs: ['get', 'list', 'create', 'update', 'patch', 'delete'],
            },
            {
              apiGroups: [''],
              resources: ['secrets'],
              resourceNames: ['kubeconfig-a', 'kubeconfig-b'],
              verbs: ['get'],
            },
          ],
        },
      });
      await rbac.createNamespacedRoleBinding({
        namespace: ns,
        body: {
          metadata: { name: 'deployer' },
          roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'deployer' },
          subjects: [{ kind: 'ServiceAccount', name: 'deployer', namespace: ns }],
        },
      });
      // Target A: a token user; target B: a client certificate.
      await core.createNamespacedSecret({
        namespace: ns,
        body: {
          metadata: { name: 'kubeconfig-a' },
          stringData: {
            value: kubeconfigYaml(targetA.server, targetA.caPem, {
              token: targetA.tokens[`${tenant}-deployer`],
            }),
          },
        },
      });
      const cert = client.certs[`${tenant}-deployer`];
      await core.createNamespacedSecret({
        namespace: ns,
        body: {
          metadata: { name: 'kubeconfig-b' },
          stringData: {
            value: kubeconfigYaml(targetB.server, targetB.caPem, {
              'client-certificate-data': Buffer.from(cert.cert).toString('base64'),
              'client-key-data': Buffer.from(cert.key).toString('base64'),
            }),
          },
        },
      });
      await env.api.create('Cluster', ns, 'a', { kubeConfig: { secretRef: { name: 'kubeconfig-a' } } });
      await env.api.create('Cluster', ns, 'b', { kubeConfig: { secretRef: { name: 'kubeconfig-b' } } });
    }
    // Target B trusts the new client CA once it has reloaded its client CA file.
    const probe = new KubeConfig();
    probe.loadFromString(
      kubeconfigYaml(targetB.server, targetB.caPem, {
        'client-certificate-data': Buffer.from(client.certs['team-a-deployer'].cert).toString('base64'),
        'client-key-data': Buffer.from(client.certs['team-a-deployer'].key).toString('base64'),
      }),
    );
    const deadline = Date.now() + 90_000;
    for (;;) {
      try {
        await probe.makeApiClient(CoreV1Api).listNamespacedConfigMap({ namespace: 'team-a' });
        break;
      } catch (error) {
        if (Date.now() > deadline) throw error;
        await new Promise((r) => setTimeout(r, 500));
      }
    }
  }, 180_000);

  afterAll(async () => {
    for (const env of Object.values(envs)) await env.close();
    await Promise.all([targetA?.stop(), targetB?.stop()]);
  });

  it(
    'Releases of team-a and team-b on the management cluster, target A (token) and target B (client certificate) land only where their identity may write',
    { timeout: 180_000 },
    async () => {
      const targets = { local: admin, a: kcOf(targetA), b: kcOf(targetB) } as const;
      for (const tenant of TENANTS) {
        const env = envs[tenant];
        const other: Tenant = tenant === 'team-a' ? 'team-b' : 'team-a';
        for (const cluster of ['local', 'a', 'b'] as const) {
          const own = cluster === 'local' ? env.ns.name : tenant;
          const foreign = cluster === 'local' ? envs[other].ns.name : other;
          const repo = await env.repo(`${cluster}-own`, {
            'cm.yaml': configMap(`${tenant}-on-${cluster}`, own),
          });
          await env.api.create('Release', env.ns.name, `${cluster}-own`, {
            cluster: { name: cluster },
            serviceAccountName: 'deployer',
            source: { git: { url: repo.url, ref: { branch: 'main' } } },
          });
          const ok = await env.reconcile(
            `${cluster}-own`,
            env.ports({ wiring: { tenancy: { ...tenancy, egress: env.tenancy.egress } } }),
          );
          expect(applied(ok.release), `${tenant} on ${cluster}`).toMatchObject({
            status: 'True',
            reason: 'Applied',
          });
          expect(await exists(targets[cluster], own, `${tenant}-on-${cluster}`)).toBe(true);

          const intruder = await env.repo(`${cluster}-intrude`, {
            'cm.yaml': configMap(`${tenant}-intrudes-${cluster}`, foreign),
          });
          await env.api.create('Release', env.ns.name, `${cluster}-intrude`, {
            cluster: { name: cluster },
            serviceAccountName: 'deployer',
            source: { git: { url: intruder.url, ref: { branch: 'main' } } },
          });
          const refused = await env.reconcile(
            `${cluster}-intrude`,
            env.ports({ wiring: { tenancy: { ...tenancy, egress: env.tenancy.egress } } }),
          );
          const cond = applied(refused.release)!;
          expect(cond, `${tenant} into ${other} on ${cluster}`).toMatchObject({
            status: 'False',
            reason: 'Unappliable',
          });
          expect(cond.message).toContain(`ConfigMap ${foreign}/${tenant}-intrudes-${cluster}`);
          expect(cond.message).toContain(
            cluster === 'local'
              ? `system:serviceaccount:${env.ns.name}:deployer`
              : `credentials of Cluster ${env.ns.name}/${cluster}`,
          );
          expect(await exists(targets[cluster], foreign, `${tenant}-intrudes-${cluster}`)).toBe(false);
        }
      }
    },
  );
});
