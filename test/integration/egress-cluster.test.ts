// The egress door through a Cluster, played as a tenant on the real apiserver: the tenant may
// create Clusters and kubeconfig Secrets in its namespace, so it names the API server the
// functions connect to with its credentials. Pointed at the management apiserver (with the
// cluster CA of kube-root-ca.crt), a loopback server, the link-local metadata range, the
// unspecified address or an IPv6 loopback, each Release is Applied False/ClusterNotReady naming
// the Cluster, the server and the egress rule — the same message whatever would have answered —
// and nothing connects. Listed in the egress allow list, the same server is reached.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { CoreV1Api } from '@kubernetes/client-node';
import { stringify } from 'yaml';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { Release } from '../../domain/api/objects.ts';
import { formatAllowEntry, parseEgressAllow, type EgressPolicy } from '../../domain/egress/policy.ts';
import type { ReconcilePorts } from '../../domain/reconcile/ports.ts';
import { createKubeClient } from '../../adapters/kube/http.ts';
import type { Cluster } from '../../views/cluster.ts';
import { ViewFailure } from '../../views/failure.ts';
import { targetConfig } from '../../views/live-compare.ts';
import { kubeConfigFor } from '../harness/kube.ts';
import { startReconcileEnv, type ReconcileEnv } from '../harness/reconcile-env.ts';

const TOKEN = 'tenant-cluster-token-5e1d';
const applied = (release: Release) => release.status?.conditions?.find((c) => c.type === 'Applied');

describe('the egress policy for a Cluster’s kubeconfig server: a tenant cannot point the functions at the management network', () => {
  let env: ReconcileEnv;
  let core: CoreV1Api;
  let apiserverHost: string;
  let server: Server;
  let serverHost: string;
  const requests: { url: string; authorization: string | undefined }[] = [];
  let connections = 0;
  let clusterCa: string;
  let n = 0;

  /** The env's egress policy without its apiserver, plus `extra` entries. */
  function policyWith(extra: string[] = []): EgressPolicy {
    const egress = env.tenancy.egress!;
    return {
      ...egress,
      allow: [
        ...egress.allow.filter((e) => formatAllowEntry(e) !== apiserverHost),
        ...(extra.length > 0 ? parseEgressAllow(extra.join(','), 'the test') : []),
      ],
    };
  }
  function portsWith(extra: string[] = []): ReconcilePorts {
    return env.ports({ wiring: { tenancy: { ...env.tenancy, egress: policyWith(extra) } } });
  }

  beforeAll(async () => {
    env = await startReconcileEnv(kubeConfigFor(inject('kubeconfigPath')), 'egress-cluster');
    core = env.kc.makeApiClient(CoreV1Api);
    apiserverHost = new URL(env.kc.getCurrentCluster()!.server).host;
    server = createServer((req, res) => {
      requests.push({ url: req.url ?? '', authorization: req.headers.authorization });
      res.writeHead(403, { 'content-type': 'application/json' }).end('{"message":"internal secret answer"}');
    });
    server.on('connection', () => connections++);
    await new Promise<void>((ok) => server.listen(0, '127.0.0.1', () => ok()));
    serverHost = `127.0.0.1:${(server.address() as AddressInfo).port}`;
    clusterCa =
      (await core.readNamespacedConfigMap({ namespace: env.ns.name, name: 'kube-root-ca.crt' })).data?.[
        'ca.crt'
      ] ?? '';
    expect(clusterCa).toContain('BEGIN CERTIFICATE');
  });
  afterAll(async () => {
    server?.closeAllConnections();
    await new Promise((ok) => server?.close(ok));
    await env?.close();
  });

  /** The tenant's Cluster `name` with a kubeconfig Secret naming `url`, and a Release onto it; one reconcile. */
  async function attack(url: string, ports: ReconcilePorts): Promise<{ release: Release; cluster: string }> {
    const name = `ec-${++n}`;
    const kubeconfig = {
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [
        {
          name: 't',
          cluster: {
            server: url,
            ...(url.startsWith('https:')
              ? { 'certificate-authority-data': Buffer.from(clusterCa).toString('base64') }
              : {}),
          },
        },
      ],
      users: [{ name: 'u', user: { token: TOKEN } }],
      contexts: [{ name: 't', context: { cluster: 't', user: 'u' } }],
      'current-context': 't',
    };
    await core.createNamespacedSecret({
      namespace: env.ns.name,
      body: { metadata: { name: `${name}-kubeconfig` }, stringData: { value: stringify(kubeconfig) } },
    });
    await env.api.create('Cluster', env.ns.name, name, {
      kubeConfig: { secretRef: { name: `${name}-kubeconfig` } },
    });
    const repo = await env.repo(name, {
      'cm.yaml': `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: ${name}-applied}\ndata: {a: b}\n`,
    });
    await env.api.create('Release', env.ns.name, name, {
      cluster: { name },
      targetNamespace: env.ns.name,
      source: { git: { url: repo.url, ref: { branch: 'main' } } },
      content: { type: 'Manifests' },
    });
    const { release } = await env.reconcile(name, ports);
    return { release, cluster: `Cluster ${env.ns.name}/${name}` };
  }

  it('the management apiserver, a loopback server, link-local, unspecified and [::1]: refused before any connection, one message whatever would have answered', async () => {
    const port = serverHost.split(':')[1];
    const rows: [string, string, string][] = [
      ['the management apiserver, with the cluster CA', `https://${apiserverHost}`, 'a loopback address'],
      ['a loopback server answering 403', `http://${serverHost}`, 'a loopback address'],
      ['the same as decimal IPv4', `http://2130706433:${port}`, 'a loopback address'],
      ['link-local (never connected)', 'https://169.254.0.1', 'a link-local address'],
      ['[::1]', `https://[::1]:${port}`, 'a loopback address'],
      ['unspecified (0.0.0.0 reaches the local host)', `http://0.0.0.0:${port}`, 'the unspecified address'],
    ];
    const ports = portsWith();
    const messages = new Set<string>();
    for (const [what, url, rule] of rows) {
      const { release, cluster } = await attack(url, ports);
      const cond = applied(release);
      expect(cond, what).toMatchObject({ status: 'False', reason: 'ClusterNotReady' });
      const host = new URL(url).host;
      expect(cond!.message, what).toContain(
        `${cluster}: its kubeconfig: the server ${host}: refused by the egress policy (${rule})`,
      );
      expect(cond!.message, what).toContain('egress.allow (CONVOY_EGRESS_ALLOW)');
      messages.add(cond!.message.replace(cluster, '<cluster>').replace(host, '<server>'));
      expect(JSON.stringify(release.status), what).not.toMatch(
        /internal secret answer|\b403\b|Forbidden|Unauthorized/,
      );
      expect(await configMapExists(`ec-${n}-applied`), what).toBe(false);
    }
    expect(messages.size).toBe(3); // one per rule: loopback, link-local, unspecified
    expect(connections).toBe(0);
    expect(requests).toEqual([]);
  });

  it('control: the same loopback server, listed in the egress allow list, is reached with the tenant’s credentials', async () => {
    const { release } = await attack(`http://${serverHost}`, portsWith([serverHost]));
    expect(applied(release)?.status).toBe('False'); // what it answers is no API server
    expect(requests.length).toBeGreaterThan(0);
    expect(requests[0]).toEqual({ url: '/version', authorization: `Bearer ${TOKEN}` });
    expect(JSON.stringify(release.status)).not.toContain('internal secret answer');
  });

  it('the relay’s tree view (the dashboard, with the caller’s rights) reads the same Cluster under the same policy: refused, nothing connects', async () => {
    const { release } = await attack(`http://${serverHost}`, portsWith());
    const before = { connections, requests: requests.length };
    const relayView: Cluster = {
      client: createKubeClient(env.config),
      config: env.config,
      close: () => undefined,
      targetEgress: { policy: policyWith() },
    };
    const error = await targetConfig(relayView, release).then(
      () => expect.fail('the view should have been refused'),
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(ViewFailure);
    expect((error as Error).message).toBe(
      `Cluster ${env.ns.name}/ec-${n}: its kubeconfig: the server ${serverHost}: refused by the egress policy (a loopback address); if tenants may use that server, the installation's operator lists it in egress.allow (CONVOY_EGRESS_ALLOW)`,
    );
    expect({ connections, requests: requests.length }).toEqual(before);
    // The CLI (no policy: the user's machine and network) gets the Cluster's config as stored.
    const cliView: Cluster = { client: relayView.client, config: env.config, close: () => undefined };
    expect((await targetConfig(cliView, release)).server).toBe(`http://${serverHost}`);
  });

  async function configMapExists(name: string): Promise<boolean> {
    try {
      await core.readNamespacedConfigMap({ name, namespace: env.ns.name });
      return true;
    } catch (error) {
      if ((error as { code?: number }).code === 404) return false;
      throw error;
    }
  }
});
