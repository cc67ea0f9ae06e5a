import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SourceNotReadyError } from '../../../adapters/source/errors.ts';
import { createGitCache } from '../../../adapters/source/git-cache.ts';
import { fetchGitSource } from '../../../adapters/source/git.ts';
import { gitHttpClient } from '../../../adapters/source/git-http.ts';
import { createEgress } from '../../../adapters/egress/client.ts';
import { parseEgressAllow } from '../../../domain/egress/policy.ts';

/** An egress client that allows exactly this test's server (loopback is refused otherwise). */
const egressFor = (url: string) =>
  createEgress({ allow: parseEgressAllow(new URL(url).host, 'test'), clusterNetworks: [] });

describe('a Git server that never answers', () => {
  let server: Server;
  let url: string;
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'convoy-git-timeout-'));
    server = createServer(() => {
      /* accepts the request and never answers */
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const address = server.address();
    url = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}/stuck.git`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
    await rm(dir, { recursive: true, force: true });
  });

  it('gives up after the answer timeout with SourceNotReady (retried), not a hung reconcile', async () => {
    const started = Date.now();
    const error = await fetchGitSource({ url, ref: { branch: 'main' } }, createGitCache({ dir }), {
      egress: egressFor(url),
      answerTimeoutMs: 300,
    }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(SourceNotReadyError);
    expect((error as Error).message).toMatch(/no answer within/);
    expect(Date.now() - started).toBeLessThan(5_000);
  });
});

describe('a Git server that takes longer than 5 s to answer', () => {
  let server: Server;
  let url: string;
  beforeAll(async () => {
    // Answers each request after 5.5 s: longer than the idle timeout of node's global agent (5 s).
    server = createServer((_req, res) => {
      setTimeout(() => res.end('slow but fine'), 5_500);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const address = server.address();
    url = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}/slow.git/info/refs`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  it(
    'is waited for up to the answer timeout, not cut off by a 5-s socket timeout',
    { timeout: 20_000 },
    async () => {
      const res = await gitHttpClient(egressFor(url), 15_000).request({ url, method: 'GET', headers: {} });
      expect(res.statusCode).toBe(200);
      const chunks: Uint8Array[] = [];
      for await (const chunk of res.body ?? []) chunks.push(chunk);
      expect(Buffer.concat(chunks).toString()).toBe('slow but fine');
    },
  );
});
