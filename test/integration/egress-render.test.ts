// The egress door at Rendering, played as a Git author on the real apiserver: a kustomization in
// the tenant's own repository names a remote base or file — a loopback HTTP server this file
// starts (even allowed by the egress policy, kustomize would fetch it with its own client), the
// link-local metadata address, a git base on loopback — directly or from a base reached by a local
// path. kubectl's kustomize would fetch each itself, from the functions' network position. Each is
// Applied False/DeployFailed at failure.stage Rendering naming the kustomization and the field,
// nothing is applied, and the server records no request.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { CoreV1Api } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { Release } from '../../domain/api/objects.ts';
import type { FixtureFiles } from '../harness/git-fixtures.ts';
import { kubeConfigFor } from '../harness/kube.ts';
import { startReconcileEnv, type ReconcileEnv } from '../harness/reconcile-env.ts';

const applied = (release: Release) => release.status?.conditions?.find((c) => c.type === 'Applied');
const cm = (name: string) => `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: ${name}}\ndata: {a: b}\n`;
const REMOTE =
  "names a remote location, which kustomize would fetch itself, outside the installation's egress policy; convoy renders only what the Release's source holds: copy it into the repository, or deploy it as a Release of its own (a Git, Helm or OCI source)";

describe('the egress policy at Rendering: a kustomization cannot make kustomize fetch from the network', () => {
  let env: ReconcileEnv;
  let server: Server;
  let host: string;
  const requests: string[] = [];

  beforeAll(async () => {
    env = await startReconcileEnv(kubeConfigFor(inject('kubeconfigPath')), 'egress-render');
    server = createServer((req, res) => {
      requests.push(req.url ?? '');
      res.end(cm('fetched'));
    });
    await new Promise<void>((ok) => server.listen(0, '127.0.0.1', () => ok()));
    host = `127.0.0.1:${(server.address() as AddressInfo).port}`;
    // The legitimate case for convoy's own client: the policy allows this server. kustomize's is not convoy's.
    env.allowEgress(host);
  });
  afterAll(async () => {
    server?.closeAllConnections();
    await new Promise((ok) => server?.close(ok));
    await env?.close();
  });

  async function configMapExists(name: string): Promise<boolean> {
    try {
      await env.kc.makeApiClient(CoreV1Api).readNamespacedConfigMap({ name, namespace: env.ns.name });
      return true;
    } catch (error) {
      if ((error as { code?: number }).code === 404) return false;
      throw error;
    }
  }

  async function attack(name: string, files: FixtureFiles, path = '') {
    const repo = await env.repo(name, files);
    await env.api.create('Release', env.ns.name, name, {
      cluster: { name: 'local' },
      targetNamespace: env.ns.name,
      source: { git: { url: repo.url, ref: { branch: 'main' }, ...(path ? { path } : {}) } },
      content: { type: 'Kustomize' },
    });
    return (await env.reconcile(name, env.ports())).release;
  }

  function expectRefusedAtRendering(release: Release, named: string) {
    const cond = applied(release);
    expect(cond, JSON.stringify(release.status)).toMatchObject({ status: 'False', reason: 'DeployFailed' });
    expect(cond!.message.startsWith(named), cond!.message).toBe(true);
    expect(cond!.message).toContain(REMOTE);
    expect(release.status?.lastAttempted?.failure).toMatchObject({
      stage: 'Rendering',
      reason: 'DeployFailed',
    });
  }

  it('a remote base on a loopback server the egress policy allows, and the metadata address: refused, nothing fetched or applied', async () => {
    const rows: [string, string][] = [
      ['loopback-http', `http://${host}/base.yaml`],
      ['link-local', 'http://169.254.169.254/latest/meta-data/iam/security-credentials/'],
      ['loopback-git', `http://${host}/org/repo.git//deploy?ref=main`],
      ['github', 'https://github.com/org/repo//deploy?ref=v1'],
    ];
    for (const [name, remote] of rows) {
      const release = await attack(name, {
        'kustomization.yaml': `resources:\n- cm.yaml\n- ${remote}\n`,
        'cm.yaml': cm(`local-${name}`),
      });
      expectRefusedAtRendering(release, `kustomization.yaml (resources: ${JSON.stringify(remote)}): `);
      expect(await configMapExists(`local-${name}`), name).toBe(false);
    }
    expect(requests).toEqual([]);
  });

  it('a patch file and a generator file named by URL in a base reached by a local path: refused naming that base', async () => {
    const release = await attack(
      'nested',
      {
        'deploy/prod/kustomization.yaml': 'resources:\n- ../../bases/app\n',
        'bases/app/kustomization.yaml': `resources: [cm.yaml]\npatches:\n- path: http://${host}/patch.yaml\n`,
        'bases/app/cm.yaml': cm('local-nested'),
      },
      'deploy/prod',
    );
    expectRefusedAtRendering(
      release,
      `bases/app/kustomization.yaml (patches[0].path: "http://${host}/patch.yaml"): `,
    );
    const generator = await attack('generator', {
      'kustomization.yaml': `configMapGenerator:\n- name: loot\n  files:\n  - creds=http://169.254.169.254/latest/meta-data/\n`,
    });
    expectRefusedAtRendering(
      generator,
      'kustomization.yaml (configMapGenerator[0].files: "creds=http://169.254.169.254/',
    );
    expect(await configMapExists('local-nested')).toBe(false);
    expect(requests).toEqual([]);
  });

  it('control: the same overlay with the base in the repository renders and lands', async () => {
    const release = await attack(
      'control',
      {
        'deploy/prod/kustomization.yaml':
          'resources:\n- ../../bases/app\ncommonAnnotations: {docs: "https://example.com/runbook"}\n',
        'bases/app/kustomization.yaml': 'resources: [cm.yaml]\n',
        'bases/app/cm.yaml': cm('local-control'),
      },
      'deploy/prod',
    );
    expect(applied(release)).toMatchObject({ status: 'True', reason: 'Applied' });
    expect(await configMapExists('local-control')).toBe(true);
  });
});
