/**
 * convoy's Kubernetes transport (adapters/kube/http.ts): requests, errors and retries, against a
 * small in-process HTTP server that answers what the apiserver would (a 429 on demand), and against
 * the real apiserver.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createKubeClient, KubeApiError, KubeTransportError } from '../../adapters/kube/http.ts';
import { fromKubeconfigFile, kubeClientConfig } from '../../adapters/kube/kubeconfig.ts';
import { isNotFound, retryThrottled } from '../../adapters/kube/management-reader.ts';

describe('the transport on the real apiserver', () => {
  it('reads over one kept-alive connection per cluster, with the kubeconfig client certificate', async () => {
    const config = fromKubeconfigFile(inject('kubeconfigPath'));
    const client = createKubeClient(config);
    const sockets = new Set<unknown>();
    for (let i = 0; i < 3; i++) {
      const ns = await client.get<{ metadata: { name: string } }>('/api/v1/namespaces/default');
      expect(ns.metadata.name).toBe('default');
      for (const list of Object.values(config.agent.freeSockets))
        for (const socket of list ?? []) sockets.add(socket);
    }
    expect(sockets.size).toBe(1);
  });

  it('a missing object → KubeApiError 404 (isNotFound) with the server message', async () => {
    const client = createKubeClient(fromKubeconfigFile(inject('kubeconfigPath')));
    const error = await client
      .get('/api/v1/namespaces/default/configmaps/convoy-does-not-exist')
      .catch((e: unknown) => e);
    expect(isNotFound(error)).toBe(true);
    expect((error as Error).message).toContain('configmaps "convoy-does-not-exist" not found');
  });
});

describe('the transport against a plain HTTP server', () => {
  let server: Server;
  let url: string;
  const seen: { method?: string; url?: string; auth?: string; type?: string; body: string }[] = [];
  beforeAll(async () => {
    let throttled = 0;
    server = createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        seen.push({
          method: req.method,
          url: req.url,
          auth: req.headers.authorization,
          type: req.headers['content-type'],
          body,
        });
        res.setHeader('Content-Type', 'application/json');
        if (req.url?.startsWith('/api/v1/namespaces/a/secrets/')) {
          res.statusCode = 404;
          res.end(
            JSON.stringify({
              kind: 'Status',
              reason: 'NotFound',
              message: 'secrets "b" not found, value hunter2',
              code: 404,
            }),
          );
        } else if (req.url === '/throttled' && throttled++ < 1) {
          res.statusCode = 429;
          res.setHeader('Retry-After', '1');
          res.end(JSON.stringify({ kind: 'Status', reason: 'TooManyRequests', code: 429 }));
        } else {
          res.end(JSON.stringify({ ok: true }));
        }
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise((resolve) => server.close(resolve)));

  it('sends the bearer token, query and apply-patch content type; parses JSON', async () => {
    const client = createKubeClient(kubeClientConfig({ server: url, token: 'tok' }));
    const answer = await client.patch(
      '/apis/g/v1/namespaces/a/things/b',
      { x: 1 },
      { type: 'apply', fieldManager: 'convoy', force: true, dryRun: true },
    );
    expect(answer).toEqual({ ok: true });
    expect(seen.at(-1)).toEqual({
      method: 'PATCH',
      url: '/apis/g/v1/namespaces/a/things/b?fieldManager=convoy&force=true&dryRun=All',
      auth: 'Bearer tok',
      type: 'application/apply-patch+yaml',
      body: '{"x":1}',
    });
  });

  it('an answer outside 2xx → KubeApiError with the status; isNotFound; no Secret message', async () => {
    const client = createKubeClient(kubeClientConfig({ server: url }));
    const error = await client.get('/api/v1/namespaces/a/secrets/b').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(KubeApiError);
    expect((error as KubeApiError).status).toBe(404);
    expect(isNotFound(error)).toBe(true);
    expect((error as Error).message).toBe('GET /api/v1/namespaces/a/secrets/b: HTTP 404 NotFound');
  });

  it('429 is retried after Retry-After by retryThrottled', async () => {
    const client = createKubeClient(kubeClientConfig({ server: url }));
    expect(await retryThrottled(() => client.get('/throttled'))).toEqual({ ok: true });
  });

  it('a refused connection → KubeTransportError with the code as reason', async () => {
    const client = createKubeClient(kubeClientConfig({ server: 'http://127.0.0.1:1' }));
    const error = await client.get('/version').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(KubeTransportError);
    expect((error as KubeTransportError).reason).toBe('ECONNREFUSED');
  });
});
