// Free loopback ports for the embedded cluster's components, `convoy dev`'s servers and the
// tests, picked outside the kernel's ephemeral range. A port the OS hands out for
// `listen(0)` comes from that range — the same range every outgoing connection takes its local
// port from — so in the seconds between closing the probe and the real listen, a connection to
// the apiserver, etcd or fauxqs could take it: a fresh-clone CI run (/tmp/ci39) had `convoy dev`
// refuse its --git-port as already in use, 6 s after the test found it free. Below the ephemeral
// range only a listener takes a port, and a listener checks first.
import { readFile } from 'node:fs/promises';
import { createServer } from 'node:net';

/** Linux's default `net.ipv4.ip_local_port_range`. */
export const DEFAULT_EPHEMERAL_RANGE: readonly [number, number] = [32768, 60999];
/** The lowest port picked: above the well-known and most registered service ports. */
export const LOWEST_PICKED_PORT = 10000;

/** Parses `/proc/sys/net/ipv4/ip_local_port_range` ("32768\t60999"); undefined when it is not two ports. */
export function parsePortRange(text: string): [number, number] | undefined {
  const parts = text.trim().split(/\s+/).map(Number);
  const [low, high] = parts;
  if (parts.length !== 2 || low === undefined || high === undefined) return undefined;
  if (!Number.isInteger(low) || !Number.isInteger(high) || low < 1 || high > 65535 || low > high)
    return undefined;
  return [low, high];
}

/**
 * The ports to pick from: every port from LOWEST_PICKED_PORT to 65535 outside the ephemeral range,
 * as [low, high] spans. Empty when the ephemeral range leaves none (then the caller asks the OS).
 */
export function pickableSpans(ephemeral: readonly [number, number]): [number, number][] {
  const [low, high] = ephemeral;
  const spans: [number, number][] = [];
  if (low - 1 >= LOWEST_PICKED_PORT) spans.push([LOWEST_PICKED_PORT, low - 1]);
  if (high + 1 <= 65535) spans.push([Math.max(high + 1, LOWEST_PICKED_PORT), 65535]);
  return spans;
}

/** The `index`-th port of `spans` (0 ≤ index < their total size). */
export function portAt(spans: readonly (readonly [number, number])[], index: number): number {
  let rest = index;
  for (const [a, b] of spans) {
    const size = b - a + 1;
    if (rest < size) return a + rest;
    rest -= size;
  }
  throw new RangeError(`port index ${index} is past the pickable ports`);
}

async function ephemeralRange(): Promise<readonly [number, number]> {
  const text = await readFile('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').catch(() => undefined);
  return (text !== undefined ? parsePortRange(text) : undefined) ?? DEFAULT_EPHEMERAL_RANGE;
}

/** Listens on `port` (0: any) on 127.0.0.1 and closes again; the port it got, or undefined when taken. */
function probe(port: number): Promise<number | undefined> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', (error: NodeJS.ErrnoException) =>
      error.code === 'EADDRINUSE' || error.code === 'EACCES' ? resolve(undefined) : reject(error),
    );
    server.listen(port, '127.0.0.1', () => {
      const address = server.address();
      const got = typeof address === 'object' && address !== null ? address.port : undefined;
      server.close(() => resolve(got));
    });
  });
}

/** `n` distinct free loopback ports, outside the ephemeral range when it leaves room (see the header). */
export async function freePorts(n: number): Promise<number[]> {
  const spans = pickableSpans(await ephemeralRange());
  const size = spans.reduce((sum, [a, b]) => sum + b - a + 1, 0);
  const ports: number[] = [];
  for (let tries = 0; ports.length < n && tries < 50 * n && size > 0; tries++) {
    const candidate = portAt(spans, Math.floor(Math.random() * size));
    if (ports.includes(candidate)) continue;
    if ((await probe(candidate)) !== undefined) ports.push(candidate);
  }
  // No room outside the ephemeral range (or all tried were taken): ask the OS, as before.
  while (ports.length < n) {
    const port = await probe(0);
    if (port !== undefined && !ports.includes(port)) ports.push(port);
  }
  return ports;
}
