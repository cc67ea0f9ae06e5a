import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ENTRYPOINT } from '../../../image/build-oci.ts';
import { RELAY_MALLOC_ENV, RELAY_NODE_FLAGS } from '../../../image/relay-node-flags.ts';

const root = join(import.meta.dirname, '..', '..', '..');

describe("the relay image's Node.js flags", () => {
  it('the daemonless image and image/Dockerfile start the relay with the same flags', () => {
    expect(ENTRYPOINT).toEqual(['/usr/local/bin/node', ...RELAY_NODE_FLAGS, '/app/dist/relay/main.js']);
    const dockerfile = readFileSync(join(root, 'image', 'Dockerfile'), 'utf8');
    const line = /^ENTRYPOINT (.+)$/m.exec(dockerfile)?.[1] ?? '';
    expect(JSON.parse(line)).toEqual(['node', ...RELAY_NODE_FLAGS, '/app/dist/relay/main.js']);
  });

  it('image/Dockerfile sets the malloc environment the daemonless image sets', () => {
    const dockerfile = readFileSync(join(root, 'image', 'Dockerfile'), 'utf8');
    const set = Object.fromEntries(
      [...dockerfile.matchAll(/^ENV (.+)$/gm)].flatMap((m) =>
        (m[1] ?? '')
          .split(/\s+/)
          .map((pair) => [pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1)]),
      ),
    );
    expect(Object.keys(RELAY_MALLOC_ENV).length).toBeGreaterThan(0);
    for (const [key, value] of Object.entries(RELAY_MALLOC_ENV)) expect(set[key]).toBe(value);
  });
});
