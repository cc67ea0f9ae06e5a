// One HTTPS request to the apiserver with the admin client certificate (no client library:
// used while the control plane is still starting).
import { request as httpsRequest } from 'node:https';
import type { Pki } from './pki.ts';

export interface AdminResponse {
  readonly status: number;
  readonly body: string;
}

export function adminRequest(
  server: string,
  pki: Pki,
  method: string,
  path: string,
  body?: unknown,
  timeoutMs = 2_000,
): Promise<AdminResponse> {
  return new Promise((ok, fail) => {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const req = httpsRequest(
      `${server}${path}`,
      {
        method,
        ca: pki.caPem,
        cert: pki.adminCertPem,
        key: pki.adminKeyPem,
        agent: false,
        timeout: timeoutMs,
        headers: payload === undefined ? {} : { 'content-type': 'application/json' },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          ok({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }),
        );
        res.on('error', fail);
      },
    );
    req.on('timeout', () => req.destroy(new Error(`${method} ${server}${path} timed out`)));
    req.on('error', fail);
    req.end(payload);
  });
}
