// The OCI registry client through the egress client, against a hostile registry on loopback
// (allowed, as the legitimate server of each row) and another host that must see no credentials.
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEgress } from '../../../adapters/egress/client.ts';
import { SourceNotReadyError } from '../../../adapters/source/errors.ts';
import { createOciClient } from '../../../adapters/source/oci-registry.ts';
import { parseEgressAllow } from '../../../domain/egress/policy.ts';

const credentials = { username: 'puller', password: 'pull-pa55word' };
const basic = `Basic ${Buffer.from('puller:pull-pa55word').toString('base64')}`;

let registry: Server;
let other: Server;
let registryHost: string;
let otherHost: string;
const seen: { url: string; headers: IncomingHttpHeaders }[] = [];

async function listen(server: Server): Promise<string> {
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', () => ok()));
  return `127.0.0.1:${(server.address() as AddressInfo).port}`;
}

beforeAll(async () => {
  other = createServer((req, res) => {
    seen.push({ url: req.url ?? '', headers: req.headers });
    res.writeHead(200, { 'content-type': 'application/json' }).end('{"tags":["9.9.9"],"token":"t"}');
  });
  otherHost = await listen(other);
  registry = createServer((req, res) => {
    const url = req.url ?? '';
    if (url.startsWith('/v2/realm/')) {
      res
        .writeHead(401, { 'www-authenticate': `Bearer realm="http://${otherHost}/token",service="x"` })
        .end();
      return;
    }
    if (req.headers.authorization !== basic) {
      res.writeHead(401, { 'www-authenticate': 'Basic realm="r"' }).end();
      return;
    }
    if (url.startsWith('/v2/link/')) {
      res
        .writeHead(200, {
          'content-type': 'application/json',
          link: `<http://${otherHost}/v2/link/tags/list?last=1.0.0>; rel="next"`,
        })
        .end('{"tags":["1.0.0"]}');
    } else if (url.startsWith('/v2/same/') && !url.includes('last=')) {
      res
        .writeHead(200, {
          'content-type': 'application/json',
          link: '</v2/same/tags/list?n=1000&last=1.0.0>; rel="next"',
        })
        .end('{"tags":["1.0.0"]}');
    } else if (url.startsWith('/v2/same/')) {
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"tags":["1.1.0"]}');
    } else if (url.startsWith('/v2/blob/')) {
      res.writeHead(307, { location: `http://${otherHost}/blob` }).end();
    } else res.writeHead(404).end();
  });
  registryHost = await listen(registry);
});

afterAll(async () => {
  for (const s of [registry, other]) {
    s.closeAllConnections();
    await new Promise((ok) => s.close(ok));
  }
});

const client = (repository: string, plainHttpAllowed?: (host: string) => boolean) =>
  createOciClient({
    registry: registryHost,
    repository,
    plainHttp: true,
    credentials,
    field: 'spec.source.oci',
    retries: 0,
    egress: createEgress({
      allow: parseEgressAllow(`${registryHost},${otherHost}`, 'test'),
      clusterNetworks: [],
    }),
    ...(plainHttpAllowed ? { plainHttpAllowed } : {}),
  });

describe('the OCI registry client keeps credentials with their host', () => {
  it('tag list pages on the registry are followed with the credentials', async () => {
    expect(await client('same').tags()).toEqual(['1.0.0', '1.1.0']);
  });

  it('a tag list whose Link names another host is refused; that host is never asked', async () => {
    const before = seen.length;
    const error = await client('link')
      .tags()
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect(error).toBeInstanceOf(SourceNotReadyError);
    expect((error as Error).message).toBe(
      `registry ${registryHost} names the next page of the tag list of ${registryHost}/link on another host or scheme; convoy reads tag lists from the registry itself only (nothing was sent there). Pin spec.source.oci.version to an exact version or use spec.source.oci.digest (will retry)`,
    );
    expect(seen.length).toBe(before);
  });

  it('a redirect to another host (plain HTTP allowed there) is followed without the Authorization header', async () => {
    const before = seen.length;
    const bytes = await client('blob', () => true)
      .blob(`sha256:${'0'.repeat(64)}`, 1000, 'the blob')
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect(bytes).toBeInstanceOf(SourceNotReadyError); // the other host's bytes do not match the digest
    expect(seen.slice(before).map((r) => r.url)).toEqual(['/blob']);
    expect(seen.slice(before)[0]?.headers.authorization).toBeUndefined();
  });

  it('a redirect to plain HTTP on a host the installation does not list is refused, and a plain-HTTP token realm there gets no credentials', async () => {
    const before = seen.length;
    const redirect = await client('blob')
      .blob(`sha256:${'0'.repeat(64)}`, 1000, 'the blob')
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect((redirect as Error).message).toContain(
      `registry ${registryHost}: a redirect leads to plain HTTP on a host the installation does not list in CONVOY_INSECURE_REGISTRIES`,
    );
    const realm = await client('realm')
      .tags()
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect((realm as Error).message).toContain(
      'names a token realm over plain HTTP on a host the installation does not list in CONVOY_INSECURE_REGISTRIES',
    );
    expect(seen.length).toBe(before);
  });
});
