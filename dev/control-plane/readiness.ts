// Waits until kube-apiserver answers /readyz with "ok", failing early (with the log tail)
// when a process of the control plane exits first.
import type { ChildProcess } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { adminRequest } from './admin-request.ts';
import { rebuildHint } from './binaries.ts';
import { ControlPlaneStartError, errorText } from './errors.ts';
import type { Pki } from './pki.ts';

/** A started process that must keep running while the control plane starts. */
export interface Watched {
  readonly name: string;
  /** The binary it runs (named in the error). */
  readonly file: string;
  readonly proc: ChildProcess;
  readonly log: string;
}

export interface ReadyWait {
  server: string;
  pki: Pki;
  timeoutMs: number;
  watched: readonly Watched[];
}

export async function waitForReady(w: ReadyWait): Promise<void> {
  const deadline = Date.now() + w.timeoutMs;
  let last = 'no answer yet';
  for (;;) {
    await throwIfAnyExited(w.watched, `${w.server}/readyz was ok`);
    try {
      const res = await adminRequest(w.server, w.pki, 'GET', '/readyz');
      if (res.status === 200 && res.body.trim() === 'ok') return;
      last = `HTTP ${res.status}: ${readyzSummary(res.body)}`;
    } catch (err) {
      last = errorText(err);
    }
    if (Date.now() > deadline) {
      const apiserver = w.watched.find((p) => p.name === 'kube-apiserver');
      throw new ControlPlaneStartError(
        `kube-apiserver at ${w.server} not ready after ${w.timeoutMs} ms (last /readyz: ${last}).` +
          (apiserver ? ` Last lines of its log:\n${await tail(apiserver.log)}` : ''),
      );
    }
    await sleep(100);
  }
}

/**
 * What a /readyz body says is not ready: its failing checks (`[-]…` lines) when it lists any,
 * else its first 500 characters (the passing checks alone filled those and hid the failing one).
 */
export function readyzSummary(body: string): string {
  const failing = body.split('\n').filter((line) => line.startsWith('[-]'));
  return failing.length > 0 ? failing.join('; ') : body.slice(0, 500);
}

/** Throws a ControlPlaneStartError naming the first watched process that is gone, with its log tail. */
export async function throwIfAnyExited(watched: readonly Watched[], before: string): Promise<void> {
  for (const p of watched) {
    if (p.proc.exitCode === null && p.proc.signalCode === null) continue;
    const how = `code ${p.proc.exitCode ?? 'none'}, signal ${p.proc.signalCode ?? 'none'}`;
    throw new ControlPlaneStartError(
      `${p.name} exited (${how}) before ${before}. If it crashed at once, ${p.file} may be damaged. ${rebuildHint(p.file)} ` +
        `Last lines of its log (${p.log}):\n${await tail(p.log)}`,
    );
  }
}

export async function tail(file: string, lines = 40): Promise<string> {
  try {
    const text = await readFile(file, 'utf8');
    return text.trimEnd().split('\n').slice(-lines).join('\n');
  } catch (err) {
    return `(could not read ${file}: ${errorText(err)})`;
  }
}
