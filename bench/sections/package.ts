// package: the installable product as a user gets it.
// - the npm tarball (packed and unpacked size, file count), built by `npm run build`;
// - the function bundles built FROM THE INSTALLED PACKAGE (the tarball installed in a fresh
//   folder; esbuild entry points resolved inside node_modules/convoy, no lock file) with their
//   cold import times — targets < 2 MiB and < 250 ms each — and the prebuilt bundles it ships;
// - the relay image built without Docker (image/build-oci.ts): compressed and uncompressed layers.
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { buildOciImage } from '../../image/build-oci.ts';
import { stageApp } from '../../image/stage-app.ts';
import { buildPackage } from '../../scripts/build-package.ts';
import { bundleFunctions } from '../../scripts/bundle-functions.ts';
import { since } from '../lib/stats.ts';
import { log } from '../lib/stdout.ts';
import { coldImport } from './functions.ts';

const run = promisify(execFile);
const MAX_BYTES = 2 * 1024 * 1024;
const MAX_IMPORT_MS = 250;

export async function benchPackage(root: string): Promise<Record<string, unknown>> {
  const work = await mkdtemp(join(tmpdir(), 'convoy-bench-package-'));
  try {
    log('package: npm run build');
    let t = performance.now();
    const built = await buildPackage();
    const buildMs = since(t);
    const { stdout } = await run(
      'npm',
      ['pack', '--ignore-scripts', '--json', '--pack-destination', work, '--loglevel=error'],
      { cwd: root, maxBuffer: 64 << 20 },
    );
    const [packed] = JSON.parse(stdout) as {
      filename: string;
      size: number;
      unpackedSize: number;
      entryCount: number;
    }[];
    if (packed === undefined) throw new Error(`npm pack --json printed no package: ${stdout.slice(0, 200)}`);
    const tarball = join(work, packed.filename);

    log('package: installing the tarball in a fresh folder');
    const app = join(work, 'app');
    await mkdir(app);
    await run('npm', ['init', '-y'], { cwd: app });
    t = performance.now();
    await run(
      'npm',
      ['install', '--no-audit', '--no-fund', '--prefer-offline', '--loglevel=error', tarball],
      { cwd: app, maxBuffer: 64 << 20 },
    );
    const installMs = since(t);

    log('package: bundling the functions from the installed package');
    const bundles = await bundleFunctions({
      root: join(app, 'node_modules', 'convoy'),
      outDir: join(app, 'bundles'),
    });
    const fromInstalled = [];
    for (const b of bundles) {
      const imported = await coldImport(app, join('bundles', b.fn, 'index.mjs'));
      fromInstalled.push({
        fn: b.fn,
        entry: b.entry,
        bytes: b.bytes,
        importMedianMs: imported.medianMs,
        importMedianCpuMs: imported.medianCpuMs,
        bytesMet: b.bytes < MAX_BYTES,
        importMet: imported.medianMs < MAX_IMPORT_MS,
      });
    }
    const shipped = [];
    for (const b of built.bundles) {
      shipped.push({
        fn: b.fn,
        bytes: (await stat(join(app, 'node_modules', 'convoy', 'dist', 'lambda', b.fn, 'index.mjs'))).size,
      });
    }

    log('package: the relay image (OCI layout, no Docker)');
    t = performance.now();
    const staged = await stageApp({ workDir: join(work, 'stage'), tarball });
    const image = await buildOciImage({ appDir: staged.appDir, outDir: join(work, 'oci') });
    const imageMs = since(t);

    return {
      how: "npm run build; npm pack; npm install <tarball> in a fresh folder; esbuild of dist/functions/<fn>/handler.js inside node_modules/convoy (AWS SDK external); cold import median of 5 fresh node processes; image: stage (npm ci --omit=dev, pruned to the relay's imports) + image/build-oci.ts",
      targets: { maxBundleBytes: MAX_BYTES, maxImportMs: MAX_IMPORT_MS },
      met: fromInstalled.every((f) => f.bytesMet && f.importMet),
      npmPackage: {
        packedBytes: packed.size,
        unpackedBytes: packed.unpackedSize,
        files: packed.entryCount,
        buildMs,
        installMs,
      },
      bundlesFromInstalledPackage: fromInstalled,
      shippedBundles: shipped,
      relayImage: {
        compressedBytes: image.compressedBytes,
        uncompressedBytes: image.uncompressedBytes,
        layers: image.layers.map((l) => ({
          name: l.name,
          compressedBytes: l.size,
          uncompressedBytes: l.uncompressedSize,
        })),
        buildMs: imageMs,
      },
    };
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}
