// The egress door (docs/security.md), played as a hostile tenant on the real apiserver: Releases
// whose sources point at the management network — the apiserver itself (with the cluster CA of
// kube-root-ca.crt), convoy's own HTTP API, a closed port, a link-local address, a name that
// resolves to 127.0.0.1 — and a hostile registry that redirects to plain HTTP, to loopback, in a
// loop, down a long chain, or names its tag list's next page on another host. Each is SourceNotReady
// naming the refusal, the same whatever the internal server would have answered; the other host
// sees no credentials. Every server runs on 127.0.0.1: the env's egress allow list opens only the
// servers a row plays as legitimate (the hostile registry, the host a redirect may go to).
import { readFile } from 'node:fs/promises';
import {
  createServer as createHttpServer,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CoreV1Api } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { Resolver } from '../../adapters/egress/lookup.ts';
import { systemResolver } from '../../adapters/egress/lookup.ts';
import { formatAllowEntry } from '../../domain/egress/policy.ts';
import type { Release } from '../../domain/api/objects.ts';
import type { ReconcilePorts } from '../../domain/reconcile/ports.ts';
import type { ServedApi } from '../../relay/http/serve.ts';
import { serveDashboard } from '../harness/dashboard.ts';
import { kubeConfigFor } from '../harness/kube.ts';
import { makeTlsCertificate } from '../harness/oci-registry.ts';
import { startReconcileEnv, type ReconcileEnv } from '../harness/reconcile-env.ts';

const PASSWORD = 'registry-pa55word-9f1c';
const BASIC = `Basic ${Buffer.from(`puller:${PASSWORD}`).toString('base64')}`;

interface Recorder {
  server: Server;
  host: string;
  requests: { method: string; url: string; headers: IncomingHttpHeaders }[];
  connections: number;
}

async function record(
  server: Server,
  handler: (req: IncomingMessage, res: ServerResponse, self: Recorder) => void,
): Promise<Recorder> {
  const self: Recorder = { server, host: '', requests: [], connections: 0 };
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    self.requests.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers });
    handler(req, res, self);
  });
  server.on('connection', () => self.connections++);
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', () => ok()));
  self.host = `127.0.0.1:${(server.address() as AddressInfo).port}`;
  return self;
}

/**
 * A hostile registry: basic auth like a private one, then per repository an attack —
 * `to-http` / `to-loopback` / `to-other` redirect the manifest elsewhere, `loop` and `chain`
 * redirect forever, `link` answers its tag list with a next page on another host.
 */
function hostile(targets: () => { other: string; otherTls: string; apiserverPort: number }) {
  return (req: IncomingMessage, res: ServerResponse, self: Recorder) => {
    const url = req.url ?? '/';
    if (url.startsWith('/v2/attack/realm/')) {
      // A token realm on the management network: the credentials would go there.
      res
        .writeHead(401, {
          'www-authenticate': `Bearer realm="https://127.0.0.1:${targets().apiserverPort}/token",service="x"`,
        })
        .end();
      return;
    }
    if (req.headers.authorization !== BASIC) {
      res.writeHead(401, { 'www-authenticate': 'Basic realm="hostile"' }).end();
      return;
    }
    const t = targets();
    const repo = /^\/v2\/attack\/([a-z-]+)\//.exec(url)?.[1];
    const go = (location: string) => res.writeHead(302, { location }).end();
    if (repo === 'to-http') go(`http://${t.other}/v2/blob`);
    else if (repo === 'to-loopback') go(`https://127.0.0.1:${t.apiserverPort}/api/v1/secrets`);
    else if (repo === 'to-link-local') go('https://169.254.0.1/latest/meta-data/iam/security-credentials/');
    else if (repo === 'to-other') go(`http://${t.other}/v2/blob`);
    else if (repo === 'to-other-tls') go(`https://${t.otherTls}/v2/blob`);
    else if (repo === 'loop') go(url);
    else if (repo === 'chain') {
      const hop = Number(url.split('/').pop());
      go(`/v2/attack/chain/manifests/${Number.isInteger(hop) ? hop + 1 : 0}`);
    } else if (repo === 'link' && url.includes('/tags/list')) {
      res.writeHead(200, {
        'content-type': 'application/json',
        link: `<http://${t.other}/v2/attack/link/tags/list?last=1.0.0>; rel="next"`,
      });
      res.end(JSON.stringify({ name: 'attack/link', tags: ['1.0.0'] }));
    } else
      res.writeHead(404).end(`{"errors":[{"code":"NAME_UNKNOWN","message":"${self.host} knows nothing"}]}`);
  };
}

function applied(release: Release) {
  return release.status?.conditions?.find((c) => c.type === 'Applied');
}

describe('the egress policy on the real apiserver: a tenant cannot map or reach the management network', () => {
  let env: ReconcileEnv;
  let core: CoreV1Api;
  let work: string;
  let apiserverPort: number;
  let convoyApi: ServedApi;
  let closedPort: number;
  let https: Recorder; // the hostile registry, over TLS (its CA in a Secret)
  let plain: Recorder; // the same, over plain HTTP (listed in the insecure registries)
  let other: Recorder; // another host, plain HTTP: where redirects and Links lead
  let otherTls: Recorder; // another host over TLS: a legitimate cross-origin redirect
  let ports: ReconcilePorts;
  let n = 0;

  beforeAll(async () => {
    const kc = kubeConfigFor(inject('kubeconfigPath'));
    env = await startReconcileEnv(kc, 'egress');
    core = env.kc.makeApiClient(CoreV1Api);
    work = await mkdtemp(join(tmpdir(), 'convoy-egress-'));
    apiserverPort = Number(new URL(env.kc.getCurrentCluster()!.server).port);
    convoyApi = await serveDashboard(env.kc);
    const closed = createHttpServer();
    await new Promise<void>((ok) => closed.listen(0, '127.0.0.1', () => ok()));
    closedPort = (closed.address() as AddressInfo).port;
    await new Promise<void>((ok) => closed.close(() => ok()));

    const cert = await makeTlsCertificate(work);
    const tls = { key: await readFile(cert.keyFile), cert: await readFile(cert.certFile) };
    const targets = () => ({ other: other.host, otherTls: otherTls.host, apiserverPort });
    https = await record(createHttpsServer(tls), hostile(targets));
    plain = await record(createHttpServer(), hostile(targets));
    other = await record(createHttpServer(), (_req, res) => res.end('{"tags":["9.9.9"]}'));
    otherTls = await record(createHttpsServer(tls), (_req, res) => res.writeHead(404).end());
    // The legitimate servers of these rows; the apiserver, convoy's API and the closed port are not listed.
    env.allowEgress(https.host, plain.host, other.host, otherTls.host);
    // A name the attacker's DNS points at 127.0.0.1 (a resolver stub; everything else resolves as usual).
    const resolver: Resolver = (name) =>
      name === 'registry.attacker.test'
        ? Promise.resolve([{ address: '127.0.0.1', family: 4 }])
        : systemResolver(name);
    // The env allows its apiserver (the Clusters of other tests' kubeconfig Secrets); here it is the target.
    const egress = env.tenancy.egress!;
    const policy = {
      ...egress,
      allow: egress.allow.filter((e) => formatAllowEntry(e) !== `127.0.0.1:${apiserverPort}`),
    };
    expect(policy.allow.length).toBe(egress.allow.length - 1);
    ports = env.ports({
      wiring: {
        tenancy: { ...env.tenancy, insecureRegistries: 'all', egress: policy },
        egressResolver: resolver,
      },
    });

    const clusterCa =
      (await core.readNamespacedConfigMap({ namespace: env.ns.name, name: 'kube-root-ca.crt' })).data?.[
        'ca.crt'
      ] ?? '';
    expect(clusterCa).toContain('BEGIN CERTIFICATE');
    const secret = (name: string, stringData: Record<string, string>) =>
      core.createNamespacedSecret({ namespace: env.ns.name, body: { metadata: { name }, stringData } });
    await secret('cluster-ca', { 'ca.crt': clusterCa });
    await secret('hostile-ca', { 'ca.crt': cert.caPem });
    await secret('registry-creds', { username: 'puller', password: PASSWORD });
  });

  afterAll(async () => {
    await convoyApi?.close();
    for (const r of [https, plain, other, otherTls]) {
      r?.server.closeAllConnections();
      await new Promise((ok) => r?.server.close(ok));
    }
    await env?.close();
    await rm(work, { recursive: true, force: true });
  });

  async function reconcile(source: Record<string, unknown>): Promise<{ release: Release; kind: string }> {
    const name = `eg-${++n}`;
    await env.api.create('Release', env.ns.name, name, {
      cluster: { name: 'local' },
      targetNamespace: env.ns.name,
      source,
      content: { type: 'Manifests' },
    });
    const result = await env.reconcile(name, ports);
    return { release: result.release, kind: result.outcome.kind };
  }

  const oci = (url: string, extra: Record<string, unknown> = {}) => ({
    oci: { url, ref: { tag: '1.0.0' }, ...extra },
  });

  it('the apiserver, convoy API, a closed port and a name resolving to 127.0.0.1: the same refusal, whatever each would have answered', async () => {
    const rows = [
      {
        what: 'apiserver, with the cluster CA',
        host: `127.0.0.1:${apiserverPort}`,
        source: oci(`oci://127.0.0.1:${apiserverPort}/api/v1`, { certSecretRef: { name: 'cluster-ca' } }),
      },
      {
        what: "convoy's HTTP API",
        host: new URL(convoyApi.url).host,
        source: oci(`oci://${new URL(convoyApi.url).host}/v1/releases`, { insecure: true }),
      },
      {
        what: 'a closed port',
        host: `127.0.0.1:${closedPort}`,
        source: oci(`oci://127.0.0.1:${closedPort}/x`, { insecure: true }),
      },
      {
        what: 'a name resolving to 127.0.0.1',
        host: `registry.attacker.test:${apiserverPort}`,
        source: oci(`oci://registry.attacker.test:${apiserverPort}/api/v1`, {
          certSecretRef: { name: 'cluster-ca' },
        }),
      },
      {
        what: 'the apiserver as decimal IPv4',
        host: `2130706433:${apiserverPort}`,
        source: oci(`oci://2130706433:${apiserverPort}/api/v1`),
      },
      {
        what: 'the apiserver as octal IPv4',
        host: `0177.0.0.1:${apiserverPort}`,
        source: oci(`oci://0177.0.0.1:${apiserverPort}/api/v1`),
      },
      {
        what: 'the apiserver as hex IPv4',
        host: `0x7f.1:${apiserverPort}`,
        source: oci(`oci://0x7f.1:${apiserverPort}/api/v1`),
      },
    ];
    const messages: string[] = [];
    for (const row of rows) {
      const { release, kind } = await reconcile(row.source);
      const cond = applied(release);
      expect(cond, row.what).toMatchObject({ status: 'False', reason: 'SourceNotReady' });
      expect(kind, row.what).toBe('retry');
      messages.push((cond?.message ?? '').replaceAll(row.host, '<registry>'));
      // The host is masked first: a random port such as 40312 holds "403" without any answer in it.
      expect(JSON.stringify(release.status).replaceAll(row.host, '<registry>'), row.what).not.toMatch(
        /HTTP \d{3}|\b403\b|\b401\b|ECONNREFUSED|connection refused|TLS|Forbidden|Unauthorized/,
      );
    }
    expect(new Set(messages).size).toBe(1);
    expect(messages[0]).toBe(
      "registry <registry>: refused by the egress policy (a loopback address); if tenants may use that server, the installation's operator lists it in egress.allow (CONVOY_EGRESS_ALLOW) (will retry)",
    );
  });

  it('a link-local address (169.254.0.1: never connected) is refused naming its rule', async () => {
    const { release } = await reconcile(oci('oci://169.254.0.1/latest/meta-data'));
    expect(applied(release)).toMatchObject({ status: 'False', reason: 'SourceNotReady' });
    expect(applied(release)?.message).toBe(
      "registry 169.254.0.1: refused by the egress policy (a link-local address); if tenants may use that server, the installation's operator lists it in egress.allow (CONVOY_EGRESS_ALLOW) (will retry)",
    );
  });

  it('Git and Helm URLs in IPv6 and the other spellings reach the same refusal; a trailing dot and credentials in the URL are refused, the password nowhere', async () => {
    const rows: [string, Record<string, unknown>, RegExp][] = [
      [
        '[::1]',
        { git: { url: `http://[::1]:${apiserverPort}/x.git`, ref: { branch: 'main' } } },
        /refused by the egress policy \(a loopback address\)/,
      ],
      [
        '[::ffff:127.0.0.1]',
        { git: { url: `http://[::ffff:127.0.0.1]:${apiserverPort}/x.git`, ref: { branch: 'main' } } },
        /refused by the egress policy \(a loopback address\)/,
      ],
      [
        'userinfo on a Git URL',
        {
          git: { url: `https://user:${PASSWORD}@127.0.0.1:${apiserverPort}/x.git`, ref: { branch: 'main' } },
        },
        /refused by the egress policy \(a loopback address\)/,
      ],
      [
        'octal Helm repository',
        { helm: { repository: `https://0177.0.0.1:${apiserverPort}/charts`, chart: 'x', version: '1.0.0' } },
        /refused by the egress policy \(a loopback address\)/,
      ],
      [
        'trailing dot',
        { helm: { repository: `https://localhost.:${apiserverPort}/charts`, chart: 'x', version: '1.0.0' } },
        /the host ends in a dot; write it without the trailing dot/,
      ],
    ];
    for (const [what, source, message] of rows) {
      const name = `eg-${++n}`;
      await env.api.create('Release', env.ns.name, name, {
        cluster: { name: 'local' },
        targetNamespace: env.ns.name,
        source,
        content: { type: source['helm'] ? 'Helm' : 'Manifests' },
      });
      const { release } = await env.reconcile(name, ports);
      expect(applied(release), what).toMatchObject({ status: 'False', reason: 'SourceNotReady' });
      expect(applied(release)?.message, what).toMatch(message);
      expect(JSON.stringify(release.status), what).not.toContain(PASSWORD);
    }
  });

  it('an OCI URL with user info, an IPv6 literal or a trailing dot is refused at admission, naming the field', async () => {
    for (const url of [
      `oci://user:${PASSWORD}@127.0.0.1:${apiserverPort}/x`,
      `oci://[::1]:${apiserverPort}/x`,
      'oci://localhost./x',
    ]) {
      await expect(
        env.api.create('Release', env.ns.name, `eg-${++n}`, {
          cluster: { name: 'local' },
          targetNamespace: env.ns.name,
          source: oci(url),
          content: { type: 'Manifests' },
        }),
        url,
      ).rejects.toThrow(/spec\.source\.oci/);
    }
  });

  it('a hostile HTTPS registry redirecting to plain HTTP, to loopback or to link-local, or naming a token realm on loopback: refused, nothing reaches the target', async () => {
    const access = { certSecretRef: { name: 'hostile-ca' }, secretRef: { name: 'registry-creds' } };
    const rows: [string, string][] = [
      [
        'to-http',
        'a redirect was not followed: redirected from HTTPS to plain HTTP; convoy follows redirects to the same scheme or HTTPS only',
      ],
      ['to-loopback', 'refused by the egress policy (a redirect leads to a loopback address)'],
      ['to-link-local', 'refused by the egress policy (a redirect leads to a link-local address)'],
      ['realm', 'refused by the egress policy (a loopback address)'],
    ];
    for (const [repo, message] of rows) {
      const { release } = await reconcile(oci(`oci://${https.host}/attack/${repo}`, access));
      expect(applied(release), repo).toMatchObject({ status: 'False', reason: 'SourceNotReady' });
      expect(applied(release)?.message, repo).toContain(`registry ${https.host}: ${message}`);
    }
    expect(other.connections).toBe(0);
  });

  it("a redirect to another allowed host is followed without the credentials, over TLS without the tenant's CA; a loop and a long chain end with what happened", async () => {
    const access = { certSecretRef: { name: 'hostile-ca' }, secretRef: { name: 'registry-creds' } };
    const before = other.requests.length;
    const plainRegistry = await reconcile(
      oci(`oci://${plain.host}/attack/to-other`, { insecure: true, secretRef: { name: 'registry-creds' } }),
    );
    expect(applied(plainRegistry.release)?.status).toBe('False'); // what the other host serves is no artifact
    const followed = other.requests.slice(before);
    expect(followed.map((r) => r.url)).toContain('/v2/blob');
    expect(followed.every((r) => r.headers.authorization === undefined)).toBe(true);
    expect(plain.requests.some((r) => r.headers.authorization === BASIC)).toBe(true);
    // The tenant's CA is trusted for its registry's origin only: another host is checked against the public trust store.
    const connections = otherTls.connections;
    const tlsRegistry = await reconcile(oci(`oci://${https.host}/attack/to-other-tls`, access));
    expect(applied(tlsRegistry.release)?.message).toContain(
      `registry ${https.host}: TLS failure: certificate not trusted`,
    );
    expect(otherTls.connections).toBeGreaterThan(connections);
    expect(otherTls.requests).toEqual([]);

    const loop = await reconcile(oci(`oci://${https.host}/attack/loop`, access));
    expect(applied(loop.release)?.message).toContain(
      `registry ${https.host}: a redirect was not followed: redirect loop`,
    );
    const chain = await reconcile(oci(`oci://${https.host}/attack/chain`, access));
    expect(applied(chain.release)?.message).toContain(
      `registry ${https.host}: a redirect was not followed: more than 5 redirects`,
    );
  });

  it("a tag list whose Link names another host: refused, the other host never asked, no credentials anywhere but the registry's", async () => {
    for (const registry of [https, plain]) {
      const before = other.requests.length;
      const access = registry === https ? { certSecretRef: { name: 'hostile-ca' } } : { insecure: true };
      const { release } = await reconcile({
        oci: {
          url: `oci://${registry.host}/attack/link`,
          ref: { semver: '>=1.0.0' },
          secretRef: { name: 'registry-creds' },
          ...access,
        },
      });
      expect(applied(release)).toMatchObject({ status: 'False', reason: 'SourceNotReady' });
      expect(applied(release)?.message).toContain(
        `registry ${registry.host} names the next page of the tag list of ${registry.host}/attack/link on another host or scheme`,
      );
      expect(
        registry.requests.some((r) => r.url.includes('/tags/list') && r.headers.authorization === BASIC),
      ).toBe(true);
      expect(other.requests.slice(before)).toEqual([]);
      expect(JSON.stringify(release.status)).not.toContain(PASSWORD);
    }
    expect(other.requests.some((r) => r.headers.authorization !== undefined)).toBe(false);
  });
});
