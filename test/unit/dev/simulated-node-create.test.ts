// The embedded cluster's simulated Nodes are created even when the apiserver drops a create: a
// fresh-clone CI beside two others (load 16) failed a whole test file's setup on one Node create
// that took over its 2-s timeout. A create that fails without an answer is sent again until the
// startup deadline; a 409 (an earlier create landed) is success; an HTTP error answer still stops.
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generatePki, type Pki } from '../../../dev/control-plane/pki.ts';
import {
  createSimulatedNode,
  type SimulatedClusterOptions,
} from '../../../dev/control-plane/simulated-cluster.ts';

describe('creating a simulated Node', () => {
  let pki: Pki;
  let server: Server;
  let url: string;
  /** What the next POSTs get: 'drop' closes the connection unanswered, a number is the status. */
  const script: ('drop' | number)[] = [];
  const seen: string[] = [];

  beforeAll(async () => {
    pki = await generatePki();
    server = createServer({ key: pki.servingKeyPem, cert: pki.servingCertPem }, (req, res) => {
      const next = script.shift() ?? 201;
      seen.push(`${req.method} ${req.url} ${next}`);
      if (next === 'drop') {
        req.socket.destroy();
        return;
      }
      res.writeHead(next, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ kind: next === 201 ? 'Node' : 'Status' }));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const options = (): SimulatedClusterOptions =>
    ({ server: url, pki, timeoutMs: 30_000, dir: '/nonexistent' }) as unknown as SimulatedClusterOptions;

  it('a create dropped without an answer is sent again; the 409 of a create that had landed is success', async () => {
    seen.length = 0;
    script.push('drop', 'drop', 409);
    await createSimulatedNode(options(), 'kwok-node-0', Date.now() + 30_000);
    expect(seen).toEqual(['POST /api/v1/nodes drop', 'POST /api/v1/nodes drop', 'POST /api/v1/nodes 409']);
  });

  it('an HTTP error answer stops the start at once, naming the Node and the status', async () => {
    seen.length = 0;
    script.push(403);
    await expect(createSimulatedNode(options(), 'kwok-node-1', Date.now() + 30_000)).rejects.toThrow(
      /creating the simulated Node kwok-node-1 failed: HTTP 403/,
    );
    expect(seen).toEqual(['POST /api/v1/nodes 403']);
  });

  it('past the deadline a dropped create ends the start, naming the Node and the error', async () => {
    seen.length = 0;
    script.push('drop');
    await expect(createSimulatedNode(options(), 'kwok-node-2', Date.now() - 1)).rejects.toThrow(
      /creating the simulated Node kwok-node-2 failed within 30000 ms: .*logs are in \/nonexistent/,
    );
    expect(seen).toEqual(['POST /api/v1/nodes drop']);
  });
});
