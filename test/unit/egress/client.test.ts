// The egress client against real servers on loopback: what it refuses is never connected to, the
// address checked is the address connected, redirects follow domain/egress/redirect.ts's rules and
// credentials stay with their origin. The allow list opens exactly this file's servers where a row
// is the legitimate case; everything else on 127.0.0.1 stands for the management network.
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { createServer as createTlsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEgress } from '../../../adapters/egress/client.ts';
import { EgressRefusedError } from '../../../adapters/egress/errors.ts';
import type { Resolver } from '../../../adapters/egress/lookup.ts';
import { parseEgressAllow, STRICT_EGRESS, type EgressPolicy } from '../../../domain/egress/policy.ts';
import { makeTlsCertificate } from '../../harness/oci-registry.ts';

interface Recorder {
  server: Server;
  port: number;
  host: string;
  /** Connections accepted, and the headers of each request. */
  connections: number;
  requests: { url: string; headers: IncomingHttpHeaders }[];
}

type Handler = (url: string, res: import('node:http').ServerResponse) => void;

async function listen(server: Server, address = '127.0.0.1'): Promise<number> {
  await new Promise<void>((ok, fail) => {
    server.once('error', fail);
    server.listen(0, address, () => ok());
  });
  return (server.address() as AddressInfo).port;
}

async function recorder(
  handler: Handler,
  make: (h: Parameters<typeof createServer>[1]) => Server = (h) => createServer(h),
  address = '127.0.0.1',
): Promise<Recorder> {
  const r = { connections: 0, requests: [] } as unknown as Recorder;
  r.server = make((req, res) => {
    r.requests.push({ url: req.url ?? '', headers: req.headers });
    handler(req.url ?? '', res);
  });
  r.server.on('connection', () => r.connections++);
  r.server.on('secureConnection', () => undefined);
  r.port = await listen(r.server, address);
  r.host = `${address}:${r.port}`;
  return r;
}

const ok: Handler = (_url, res) => res.end('hello');
const allowing = (...hosts: string[]): EgressPolicy => ({
  allow: parseEgressAllow(hosts.join(','), 'test'),
  clusterNetworks: [],
});

async function refusal(promise: Promise<unknown>): Promise<EgressRefusedError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(EgressRefusedError);
  return error as EgressRefusedError;
}

let work: string;
let internal: Recorder; // stands for the apiserver: never allowed
let open: Recorder;
let other: Recorder;
let tls: Recorder;
let caPem: string;
const servers: Server[] = [];

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'convoy-egress-test-'));
  internal = await recorder((_url, res) =>
    res.writeHead(403).end('{"kind":"Status","message":"forbidden: User system:anonymous"}'),
  );
  other = await recorder(ok);
  open = await recorder((url, res) => {
    const to = /^\/to\/(.*)$/.exec(url)?.[1];
    if (to !== undefined) res.writeHead(302, { location: decodeURIComponent(to) }).end();
    else if (url === '/loop') res.writeHead(302, { location: '/loop' }).end();
    else if (/^\/chain\/\d+$/.test(url))
      res.writeHead(302, { location: `/chain/${Number(url.split('/')[2]) + 1}` }).end();
    else res.end('hello');
  });
  const cert = await makeTlsCertificate(work);
  caPem = cert.caPem;
  const [key, certPem] = await Promise.all([readFile(cert.keyFile), readFile(cert.certFile)]);
  tls = await recorder(
    (url, res) => {
      const to = /^\/to\/(.*)$/.exec(url)?.[1];
      if (to !== undefined) res.writeHead(301, { location: decodeURIComponent(to) }).end();
      else res.end('secure hello');
    },
    (h) => createTlsServer({ key, cert: certPem }, h),
  );
  servers.push(internal.server, other.server, open.server, tls.server);
});

afterAll(async () => {
  for (const s of servers) s.closeAllConnections();
  await Promise.all(servers.map((s) => new Promise((done) => s.close(done))));
  await rm(work, { recursive: true, force: true });
});

describe('egress client: refused addresses are never connected to', () => {
  it.each([
    ['a loopback literal', (p: number) => `http://127.0.0.1:${p}/api`],
    ['decimal IPv4', (p: number) => `http://2130706433:${p}/api`],
    ['octal IPv4', (p: number) => `http://0177.0.0.1:${p}/api`],
    ['hex IPv4', (p: number) => `http://0x7f.1:${p}/api`],
    ['IPv6 loopback', (p: number) => `http://[::1]:${p}/api`],
    ['IPv4-mapped IPv6', (p: number) => `http://[::ffff:127.0.0.1]:${p}/api`],
    ['localhost (the system resolver)', (p: number) => `http://localhost:${p}/api`],
    ['the unspecified address', (p: number) => `http://0.0.0.0:${p}/api`],
  ])('%s: refused by the policy naming the rule, the server saw no connection', async (_what, url) => {
    const before = internal.connections;
    const error = await refusal(createEgress(STRICT_EGRESS).fetch(url(internal.port)));
    expect(error.message).toMatch(
      /^refused by the egress policy \(((a loopback)|(the unspecified)) address\)/,
    );
    expect(error.message).not.toContain('forbidden');
    expect(internal.connections).toBe(before);
  });

  it('a link-local address is refused before any packet (169.254.0.1: nothing would answer there)', async () => {
    const error = await refusal(createEgress(STRICT_EGRESS).fetch('http://169.254.0.1/latest/meta-data/'));
    expect(error.rule).toBe('link-local');
  });

  it('a name the resolver maps to 127.0.0.1 is refused; allowed by a host:port entry it connects', async () => {
    const lookups: string[] = [];
    const resolver: Resolver = (name) => {
      lookups.push(name);
      return Promise.resolve([{ address: '127.0.0.1', family: 4 }]);
    };
    const error = await refusal(
      createEgress(STRICT_EGRESS, { resolver }).fetch(`http://registry.attacker.test:${internal.port}/v2/`),
    );
    expect(error.rule).toBe('loopback');
    expect(lookups).toEqual(['registry.attacker.test']);
    const allowed = createEgress(allowing(`registry.attacker.test:${open.port}`), { resolver });
    expect(await (await allowed.fetch(`http://registry.attacker.test:${open.port}/`)).text()).toBe('hello');
  });

  it('the address checked is the address connected: one resolution per connection, no second lookup to rebind', async () => {
    // The same port on 127.0.0.2: what a rebinding attack would reach after a check of 127.0.0.1.
    const rebound = await recorder(ok, undefined, '127.0.0.2').catch(() => undefined);
    if (rebound === undefined) throw new Error('cannot listen on 127.0.0.2: the test needs the loopback /8');
    servers.push(rebound.server);
    let calls = 0;
    const resolver: Resolver = () =>
      Promise.resolve([{ address: calls++ === 0 ? '127.0.0.1' : '127.0.0.2', family: 4 }]);
    const egress = createEgress(allowing(`127.0.0.1:${open.port}`), { resolver });
    expect(await (await egress.fetch(`http://rebind.test:${open.port}/`)).text()).toBe('hello');
    expect(calls).toBe(1);
    expect(rebound.connections).toBe(0);
    // A second resolution (a new connection) to the other address is checked again, and refused.
    await new Promise((r) => setTimeout(r, 10));
    const fresh = createEgress(allowing(`127.0.0.1:${open.port}`), { resolver });
    expect((await refusal(fresh.fetch(`http://rebind.test:${open.port}/`))).rule).toBe('loopback');
    expect(rebound.connections).toBe(0);
  });
});

describe('egress client: redirects', () => {
  const via = (server: Recorder, to: string, scheme = 'http') =>
    `${scheme}://${server.host}/to/${encodeURIComponent(to)}`;

  it('to another allowed origin: followed, without the Authorization header', async () => {
    const egress = createEgress(allowing(open.host, other.host));
    const response = await egress.fetch(via(open, `http://${other.host}/blob`), {
      headers: { authorization: 'Basic c2VjcmV0LXBhc3N3b3Jk' },
    });
    expect(await response.text()).toBe('hello');
    expect(open.requests.at(-1)?.headers.authorization).toBe('Basic c2VjcmV0LXBhc3N3b3Jk');
    expect(other.requests.at(-1)?.url).toBe('/blob');
    expect(other.requests.at(-1)?.headers.authorization).toBeUndefined();
  });

  it('to a loopback port the policy does not allow: refused, the target never connected', async () => {
    const before = internal.connections;
    const error = await refusal(
      createEgress(allowing(open.host)).fetch(via(open, `http://127.0.0.1:${internal.port}/api`)),
    );
    expect(error.message).toMatch(/^refused by the egress policy \(a redirect leads to a loopback address\)/);
    expect(internal.connections).toBe(before);
  });

  it('to a link-local metadata-like address: refused (169.254.0.1, never connected)', async () => {
    const error = await refusal(
      createEgress(allowing(open.host)).fetch(via(open, 'http://169.254.0.1/latest/meta-data/iam/')),
    );
    expect(error.rule).toBe('link-local');
  });

  it('HTTPS to plain HTTP: refused, even to an allowed server, which sees nothing', async () => {
    const before = other.connections;
    const egress = createEgress(allowing(tls.host, other.host));
    expect(await (await egress.fetch(`https://${tls.host}/`, { ca: caPem })).text()).toBe('secure hello');
    const error = await refusal(
      egress.fetch(via(tls, `http://${other.host}/blob`, 'https'), {
        ca: caPem,
        headers: { authorization: 'Bearer tok' },
      }),
    );
    expect(error.message).toBe(
      'a redirect was not followed: redirected from HTTPS to plain HTTP; convoy follows redirects to the same scheme or HTTPS only',
    );
    expect(other.connections).toBe(before);
  });

  it('plain HTTP to a host the caller does not allow in clear text (CONVOY_INSECURE_REGISTRIES): refused', async () => {
    const egress = createEgress(allowing(open.host, other.host));
    const plainHttp = (host: string) => host === open.host;
    const error = await refusal(egress.fetch(via(open, `http://${other.host}/blob`), { plainHttp }));
    expect(error.message).toContain(
      'plain HTTP on a host the installation does not list in CONVOY_INSECURE_REGISTRIES',
    );
  });

  it('a loop and a chain longer than five hops: refused with what happened', async () => {
    const egress = createEgress(allowing(open.host));
    expect((await refusal(egress.fetch(`http://${open.host}/loop`))).message).toBe(
      'a redirect was not followed: redirect loop',
    );
    expect((await refusal(egress.fetch(`http://${open.host}/chain/0`))).message).toBe(
      'a redirect was not followed: more than 5 redirects',
    );
    expect(open.requests.filter((r) => r.url.startsWith('/chain/')).length).toBe(6);
  });

  it('to a URL with user info or a host with a trailing dot: refused', async () => {
    const egress = createEgress(allowing(open.host, other.host));
    expect((await refusal(egress.fetch(via(open, `http://user:pw@${other.host}/`)))).message).toContain(
      'user info',
    );
    expect((await refusal(egress.fetch(via(open, `http://localhost.:${other.port}/`)))).message).toContain(
      'trailing dot',
    );
    expect((await refusal(egress.fetch(`http://user:pw@${open.host}/`))).message).toContain('user info');
  });
});
