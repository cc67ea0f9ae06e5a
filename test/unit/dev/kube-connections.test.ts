// convoy dev's and the harness's client-node clients: one HTTP/1.1 connection reused, where client-node alone opens
// a new HTTP/2 connection per request (the cause of a soak's "other side closed", dev/kube-connections.ts).
import { createSecureServer, type Http2SecureServer } from 'node:http2';
import type { AddressInfo } from 'node:net';
import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generatePki, type Pki } from '../../../dev/control-plane/pki.ts';
import { withSharedConnections } from '../../../dev/kube-connections.ts';

describe('the harness shares client-node connections', () => {
  let pki: Pki;
  let server: Http2SecureServer;
  let url: string;
  let connections = 0;
  const versions: string[] = [];

  beforeAll(async () => {
    pki = await generatePki();
    server = createSecureServer(
      { key: pki.servingKeyPem, cert: pki.servingCertPem, allowHTTP1: true },
      (req, res) => {
        versions.push(req.httpVersion);
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'x' } }));
      },
    );
    server.on('secureConnection', () => connections++);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  const kubeConfig = (): KubeConfig => {
    const kc = new KubeConfig();
    kc.loadFromOptions({
      clusters: [{ name: 'c', server: url, caData: Buffer.from(pki.caPem).toString('base64') }],
      users: [{ name: 'u', token: 't' }],
      contexts: [{ name: 'ctx', cluster: 'c', user: 'u' }],
      currentContext: 'ctx',
    });
    return kc;
  };

  async function tenReads(kc: KubeConfig): Promise<{ connections: number; versions: string[] }> {
    connections = 0;
    versions.length = 0;
    const api = kc.makeApiClient(CoreV1Api);
    for (let i = 0; i < 10; i++) expect((await api.readNamespace({ name: 'x' })).metadata?.name).toBe('x');
    return { connections, versions: [...versions] };
  }

  it('client-node alone: a new HTTP/2 connection for every request', async () => {
    expect(await tenReads(kubeConfig())).toEqual({
      connections: 10,
      versions: Array<string>(10).fill('2.0'),
    });
  });

  it('withSharedConnections: HTTP/1.1 connections reused (one may still be finishing a response as the next request goes)', async () => {
    const seen = await tenReads(withSharedConnections(kubeConfig()));
    expect(seen.versions).toEqual(Array<string>(10).fill('1.1'));
    expect(seen.connections).toBeGreaterThanOrEqual(1);
    expect(seen.connections).toBeLessThanOrEqual(2);
  });
});
