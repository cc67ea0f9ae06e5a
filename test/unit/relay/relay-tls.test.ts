// The relay's TLS: which files turn HTTPS on, the HTTPS server (a real socket and a real TLS handshake
// against a CA the test trusts), and the probes-only plain port that goes with it.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generatePki, type Pki } from '../../../dev/control-plane/pki.ts';
import { createProbeApp } from '../../../relay/http/app.ts';
import { serveApi } from '../../../relay/http/serve.ts';
import { loadTlsFiles, TlsConfigError } from '../../../relay/http/tls-files.ts';
import { Hono } from 'hono';

function httpsGet(url: string, ca: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { ca }, (res) => {
      let body = '';
      res.on('data', (chunk: Buffer) => (body += chunk.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('relay TLS', () => {
  let dir: string;
  let pki: Pki;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'convoy-tls-'));
    pki = await generatePki();
    await writeFile(join(dir, 'tls.crt'), pki.servingCertPem);
    await writeFile(join(dir, 'tls.key'), pki.servingKeyPem);
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('off without files; "missing" (plain HTTP, with the reason) when the mounted Secret is absent; one file alone is an error', async () => {
    expect(await loadTlsFiles(undefined, undefined)).toEqual({ kind: 'off' });
    const missing = await loadTlsFiles(join(dir, 'absent.crt'), join(dir, 'absent.key'));
    expect(missing.kind).toBe('missing');
    expect(missing.kind === 'missing' && missing.message).toMatch(
      /no TLS certificate at .*absent\.crt: .*plain HTTP; create the Secret convoy-relay-tls/,
    );
    await expect(loadTlsFiles(join(dir, 'tls.crt'), undefined)).rejects.toThrow(TlsConfigError);
    await expect(loadTlsFiles(join(dir, 'tls.crt'), undefined)).rejects.toThrow(
      /set both CONVOY_TLS_CERT_FILE and CONVOY_TLS_KEY_FILE/,
    );
  });

  it('serves HTTPS with the mounted certificate; the plain port answers probes and metrics only', async () => {
    const tls = await loadTlsFiles(join(dir, 'tls.crt'), join(dir, 'tls.key'));
    if (tls.kind !== 'on') throw new Error(`expected TLS on, got ${tls.kind}`);
    const app = new Hono();
    app.get('/dashboard', (c) => c.text('dashboard'));
    const secure = await serveApi(app, { port: 0, tls });
    const plain = await serveApi(createProbeApp({ metrics: { render: () => 'up 1\n' }, ready: () => true }), {
      port: 0,
    });
    try {
      expect(secure.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
      expect(await httpsGet(`${secure.url}/dashboard`, pki.caPem)).toEqual({
        status: 200,
        body: 'dashboard',
      });
      await expect(httpsGet(`${secure.url}/dashboard`, '')).rejects.toThrow(); // an untrusted certificate is refused
      expect((await fetch(`${plain.url}/readyz`)).status).toBe(200);
      expect(await (await fetch(`${plain.url}/metrics`)).text()).toBe('up 1\n');
      const dashboard = await fetch(`${plain.url}/dashboard`);
      expect(dashboard.status).toBe(404);
      expect(((await dashboard.json()) as { message: string }).message).toContain(
        "served on the relay's HTTPS port only",
      );
    } finally {
      await secure.close();
      await plain.close();
    }
  });
});
