// go-containerregistry's crane (built from Go modules, cached) and its in-memory registry.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createServer } from 'node:net';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
export const CRANE_VERSION = 'v0.22.1';

/** ~/.cache/convoy/tools/crane-<version>/crane, built with `go install` when missing. */
export async function ensureCrane(): Promise<string> {
  const cache = process.env['XDG_CACHE_HOME'] ?? join(homedir(), '.cache');
  const dir = join(cache, 'convoy', 'tools', `crane-${CRANE_VERSION}`);
  const bin = join(dir, 'crane');
  if (existsSync(bin)) return bin;
  const go = ['/usr/local/go/bin/go', 'go'].find((g) => g === 'go' || existsSync(g)) ?? 'go';
  await run(go, ['install', `github.com/google/go-containerregistry/cmd/crane@${CRANE_VERSION}`], {
    env: { ...process.env, GOBIN: dir, PATH: `/usr/local/go/bin:${process.env['PATH'] ?? ''}` },
  });
  return bin;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() =>
        typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port')),
      );
    });
  });
}

export interface Registry {
  readonly host: string;
  stop(): Promise<void>;
}

/** `crane registry serve` on a free loopback port, answering /v2/. */
export async function startRegistry(crane: string): Promise<Registry> {
  const port = await freePort();
  const child: ChildProcess = spawn(crane, ['registry', 'serve', '--address', `127.0.0.1:${port}`], {
    stdio: 'ignore',
  });
  const host = `127.0.0.1:${port}`;
  const deadline = Date.now() + 15_000;
  for (;;) {
    try {
      if ((await fetch(`http://${host}/v2/`)).status < 500) break;
    } catch {
      if (Date.now() > deadline) {
        child.kill();
        throw new Error(`crane registry serve did not answer on ${host} within 15 s`);
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  return {
    host,
    stop: () =>
      new Promise((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill();
      }),
  };
}
