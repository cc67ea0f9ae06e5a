// Waits until kube-apiserver answers /readyz with "ok", failing early (with the log tail)
// when etcd or kube-apiserver exits first.
import type { ChildProcess } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { request as httpsRequest } from 'node:https';
import { setTimeout as sleep } from 'node:timers/promises';
import { ControlPlaneStartError, errorText } from './errors.ts';
import type { Pki } from './pki.ts';

export interface ReadyWait {
  server: string;
  pki: Pki;
  timeoutMs: number;
  etcd: ChildProcess;
  apiserver: ChildProcess;
  etcdLog: string;
  apiserverLog: string;
}

export async function waitForReady(w: ReadyWait): Promise<void> {
  const deadline = Date.now() + w.timeoutMs;
  let last = 'no answer yet';
  for (;;) {
    for (const [name, proc, log] of [
      ['etcd', w.etcd, w.etcdLog],
      ['kube-apiserver', w.apiserver, w.apiserverLog],
    ] as const) {
      if (proc.exitCode !== null || proc.signalCode !== null) {
        throw new ControlPlaneStartError(
          `${name} exited (code ${proc.exitCode ?? 'none'}, signal ${proc.signalCode ?? 'none'}) before ${w.server}/readyz was ok. ` +
            `Last lines of its log:\n${await tail(log)}`,
        );
      }
    }
    try {
      const res = await get(`${w.server}/readyz`, w.pki);
      if (res.status === 200 && res.body.trim() === 'ok') return;
      last = `HTTP ${res.status}: ${res.body.slice(0, 500)}`;
    } catch (err) {
      last = errorText(err);
    }
    if (Date.now() > deadline) {
      throw new ControlPlaneStartError(
        `kube-apiserver at ${w.server} not ready after ${w.timeoutMs} ms (last /readyz: ${last}). ` +
          `Last lines of its log:\n${await tail(w.apiserverLog)}`,
      );
    }
    await sleep(100);
  }
}

function get(url: string, pki: Pki): Promise<{ status: number; body: string }> {
  return new Promise((ok, fail) => {
    const req = httpsRequest(
      url,
      { ca: pki.caPem, cert: pki.adminCertPem, key: pki.adminKeyPem, agent: false, timeout: 2_000 },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          ok({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }),
        );
        res.on('error', fail);
      },
    );
    req.on('timeout', () => req.destroy(new Error(`GET ${url} timed out`)));
    req.on('error', fail);
    req.end();
  });
}

async function tail(file: string, lines = 40): Promise<string> {
  try {
    const text = await readFile(file, 'utf8');
    return text.trimEnd().split('\n').slice(-lines).join('\n');
  } catch (err) {
    return `(could not read ${file}: ${errorText(err)})`;
  }
}
