// Bundles each Lambda entry point `functions/<fn>/handler.ts` with esbuild into
// `dist/functions/<fn>/index.mjs` (plus `index.mjs.map`, not referenced from the bundle).
//
//   node scripts/bundle-functions.ts                 # AWS SDK v3 left to the runtime (what we ship)
//   node scripts/bundle-functions.ts --aws-sdk bundled --out-dir dist/functions-full
//
// The Lambda nodejs24.x runtime ships the AWS SDK for JavaScript v3, and AWS recommends not
// bundling it (smaller package, faster cold start); so `@aws-sdk/*` stays external by default
// and everything else is bundled (the SDK's @smithy/* packages are only reached through it).
// `--aws-sdk bundled` pins the SDK version inside the bundle instead, at the cost of size.
//
// Prints ONE JSON document on stdout: an array of {fn, bytes, ms, awsSdk, out}.
import { ESM_BANNER } from '../infra/esm-banner.ts';
import { readdir, rm, stat } from 'node:fs/promises';
import { join, relative, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { build } from 'esbuild';

export type AwsSdkMode = 'external' | 'bundled';

export interface BundleOptions {
  /** The repository root; default the folder above scripts/. */
  root?: string;
  /** Where `<fn>/index.mjs` is written, relative to root; default `dist/functions`. */
  outDir?: string;
  /** default 'external' (the Lambda runtime provides AWS SDK v3). */
  awsSdk?: AwsSdkMode;
  /** Only these functions; default every `functions/<fn>/handler.ts` that exists. */
  only?: readonly string[];
}

export interface BundleResult {
  fn: string;
  /** Size of index.mjs (the source map is a separate file and is not counted). */
  bytes: number;
  /** esbuild wall time. */
  ms: number;
  awsSdk: AwsSdkMode;
  /** Path of index.mjs, relative to root. */
  out: string;
}

export class BundleError extends Error {
  override name = 'BundleError';
}

const repoRoot = resolve(import.meta.dirname, '..');

const BANNER = ESM_BANNER;

/** Functions with an entry point: every `functions/<fn>/handler.ts` (runtime/ has none). */
export async function listFunctions(root = repoRoot): Promise<string[]> {
  const dir = join(root, 'functions');
  const found: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    if (!entry.isDirectory()) continue;
    try {
      if ((await stat(join(dir, entry.name, 'handler.ts'))).isFile()) found.push(entry.name);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
  }
  return found.sort();
}

export async function bundleFunctions(options: BundleOptions = {}): Promise<BundleResult[]> {
  const root = options.root ?? repoRoot;
  const outDir = options.outDir ?? join('dist', 'functions');
  const awsSdk = options.awsSdk ?? 'external';
  const available = await listFunctions(root);
  const fns = options.only ?? available;
  for (const fn of fns) {
    if (!available.includes(fn)) {
      throw new BundleError(`functions/${fn}/handler.ts does not exist; functions with a handler: ${available.join(', ') || 'none'}`);
    }
  }
  const results: BundleResult[] = [];
  for (const fn of fns) {
    const dir = join(root, outDir, fn);
    await rm(dir, { recursive: true, force: true });
    const outfile = join(dir, 'index.mjs');
    const started = performance.now();
    const result = await build({
      absWorkingDir: root,
      entryPoints: [join(root, 'functions', fn, 'handler.ts')],
      outfile,
      bundle: true,
      platform: 'node',
      target: 'node24',
      format: 'esm',
      minify: true,
      sourcemap: 'external',
      banner: { js: BANNER },
      external: awsSdk === 'external' ? ['@aws-sdk/*'] : [],
      // Non-ASCII characters stay as UTF-8 instead of \u escapes (smaller; Node reads UTF-8).
      charset: 'utf8',
      // Prefer packages' ESM builds.
      mainFields: ['module', 'main'],
      logLevel: 'silent',
      metafile: false,
    });
    const ms = Math.round(performance.now() - started);
    if (result.errors.length > 0) {
      throw new BundleError(`esbuild failed for functions/${fn}/handler.ts: ${result.errors.map((e) => e.text).join('; ')}`);
    }
    for (const warning of result.warnings) {
      process.stderr.write(`bundle ${fn}: warning: ${warning.text}${warning.location ? ` (${warning.location.file}:${warning.location.line})` : ''}\n`);
    }
    results.push({ fn, bytes: (await stat(outfile)).size, ms, awsSdk, out: relative(root, outfile) });
  }
  return results;
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      'aws-sdk': { type: 'string', default: 'external' },
      'out-dir': { type: 'string' },
      only: { type: 'string', multiple: true },
    },
  });
  const awsSdk = values['aws-sdk'];
  if (awsSdk !== 'external' && awsSdk !== 'bundled') {
    throw new BundleError(`--aws-sdk must be 'external' or 'bundled', got ${JSON.stringify(awsSdk)}`);
  }
  const results = await bundleFunctions({
    awsSdk,
    ...(values['out-dir'] !== undefined ? { outDir: values['out-dir'] } : {}),
    ...(values.only !== undefined ? { only: values.only } : {}),
  });
  process.stdout.write(`${JSON.stringify(results, null, 2)}\n`);
}

if (import.meta.main) {
  main().catch((error: unknown) => {
    process.stderr.write(`bundle-functions: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exitCode = 1;
  });
}
