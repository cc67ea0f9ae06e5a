/**
 * `fetch` for one registry that serves TLS with a certificate of a private CA (spec `certSecretRef`,
 * key ca.crt): node:https with `ca` set to that bundle, for this request only — never the process's
 * trust store (NODE_EXTRA_CA_CERTS would trust the CA for every Release and every host). The answer
 * is a web `Response`, so oci-registry.ts reads it as it reads fetch's.
 *
 * Redirects are followed (at most 5): to the same origin with the CA and the Authorization header;
 * to another origin (a blob on S3 or a CDN) with the global fetch, the public trust store and no
 * Authorization header, as fetch does across origins.
 */
import { createRequire } from 'node:module';
import { Readable } from 'node:stream';
import type { IncomingMessage } from 'node:http';

// Loaded through require, as adapters/node-http.ts does for node:http (the ESM facade costs cold start).
const https = createRequire(import.meta.url)('node:https') as typeof import('node:https');

export interface CaFetchInit {
  method: string;
  headers: Record<string, string>;
  signal: AbortSignal;
}

function request(url: URL, init: CaFetchInit, ca: string): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    const req = https.request(url, { method: init.method, headers: init.headers, ca, signal: init.signal, servername: /^[0-9.]+$|:/.test(url.hostname) ? undefined : url.hostname }, resolve);
    req.once('error', reject);
    req.end();
  });
}

export async function fetchWithCa(url: string, init: CaFetchInit, ca: string): Promise<Response> {
  let current = new URL(url);
  const origin = current.origin;
  for (let hop = 0; hop <= 5; hop++) {
    if (current.origin !== origin) {
      const headers = { ...init.headers };
      delete headers['authorization'];
      return fetch(current, { method: init.method, headers, redirect: 'follow', signal: init.signal });
    }
    const res = await request(current, init, ca);
    const status = res.statusCode ?? 0;
    const location = res.headers.location;
    if (status >= 300 && status < 400 && location !== undefined) {
      res.resume();
      current = new URL(location, current);
      continue;
    }
    const headers = new Headers();
    for (const [name, value] of Object.entries(res.headers)) {
      if (value === undefined) continue;
      for (const v of Array.isArray(value) ? value : [value]) headers.append(name, v);
    }
    const empty = init.method === 'HEAD' || status === 204 || status === 304;
    if (empty) res.resume();
    const body = empty ? null : (Readable.toWeb(res) as unknown as ReadableStream<Uint8Array>);
    return new Response(body, { status, statusText: res.statusMessage ?? '', headers });
  }
  throw Object.assign(new Error(`more than 5 redirects from ${origin}`), { code: 'ERR_TOO_MANY_REDIRECTS' });
}
