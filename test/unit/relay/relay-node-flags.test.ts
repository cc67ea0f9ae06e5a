import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ENTRYPOINT } from '../../../image/build-oci.ts';
import { RELAY_NODE_FLAGS } from '../../../image/relay-node-flags.ts';

const root = join(import.meta.dirname, '..', '..', '..');

describe("the relay image's Node.js flags", () => {
  it('the daemonless image and image/Dockerfile start the relay with the same flags', () => {
    expect(ENTRYPOINT).toEqual(['/usr/local/bin/node', ...RELAY_NODE_FLAGS, '/app/dist/relay/main.js']);
    const dockerfile = readFileSync(join(root, 'image', 'Dockerfile'), 'utf8');
    const line = /^ENTRYPOINT (.+)$/m.exec(dockerfile)?.[1] ?? '';
    expect(JSON.parse(line)).toEqual(['node', ...RELAY_NODE_FLAGS, '/app/dist/relay/main.js']);
  });
});
