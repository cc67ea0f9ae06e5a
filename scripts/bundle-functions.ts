// Bundles each Lambda entry point with esbuild into `dist/lambda/<fn>/index.mjs` (plus
// `index.mjs.map`, not referenced from the bundle). Entry points are resolved inside the package
// the script runs from: `functions/<fn>/handler.ts` in this repository, or the compiled
// `dist/functions/<fn>/handler.js` of an installed package (node_modules/convoy). Dependencies
// come from node_modules as Node resolves them; no lock file is read.
//
//   node scripts/bundle-functions.ts                 # AWS SDK v3 left to the runtime (what we ship)
//   node scripts/bundle-functions.ts --aws-sdk bundled --out-dir dist/functions-full
//   node node_modules/convoy/dist/scripts/bundle-functions.js --root node_modules/convoy --out-dir /tmp/b
//
// The Lambda nodejs24.x runtime ships the AWS SDK for JavaScript v3, and AWS recommends not
// bundling it (smaller package, faster cold start); so `@aws-sdk/*` stays external by default
// and everything else is bundled (the SDK's @smithy/* packages are only reached through it).
// `--aws-sdk bundled` pins the SDK version inside the bundle instead, at the cost of size.
//
// Prints ONE JSON document on stdout: an array of {fn, bytes, ms, awsSdk, out}.
import { ESM_BANNER } from '../infra/esm-banner.ts';
import { readdir, rm, stat } from 'node:fs/promises';
import { isAbsolute, join, relative, resolve } from 'node:path';
import { parseArgs } from 'node:util';

export type AwsSdkMode = 'external' | 'bundled';

export interface BundleOptions {
  /** The package root (this repository, or an installed node_modules/convoy); default the one this script belongs to. */
  root?: string;
  /** Where `<fn>/index.mjs` is written, relative to root (or absolute); default `dist/lambda`. */
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
  /** The entry point, relative to root. */
  entry: string;
}

export class BundleError extends Error {
  override name = 'BundleError';
}

/** The package this file belongs to: scripts/ in the repository, dist/scripts/ once compiled. */
const packageRoot = import.meta.filename.endsWith('.ts')
  ? resolve(import.meta.dirname, '..')
  : resolve(import.meta.dirname, '..', '..');

const BANNER = ESM_BANNER;

/** Where a package keeps its entry points: TypeScript sources (this repository) or the compiled build (an installed package). */
export interface EntryLayout {
  /** Folder holding `<fn>/<handler>`, relative to root. */
  dir: string;
  handler: 'handler.ts' | 'handler.js';
}

async function isFile(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isFile();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw error;
  }
}

async function isDir(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isDirectory();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw error;
  }
}

/** Sources when `functions/` exists at root (the repository), otherwise the compiled `dist/functions/` (an installed package). */
export async function entryLayout(root = packageRoot): Promise<EntryLayout> {
  if (await isDir(join(root, 'functions'))) return { dir: 'functions', handler: 'handler.ts' };
  if (await isDir(join(root, 'dist', 'functions')))
    return { dir: join('dist', 'functions'), handler: 'handler.js' };
  throw new BundleError(
    `${root} has neither functions/ (sources) nor dist/functions/ (a built package); run npm run build`,
  );
}

/** Functions with an entry point: every `<fn>/handler.{ts,js}` of the layout (runtime/ has none). */
export async function listFunctions(root = packageRoot): Promise<string[]> {
  const layout = await entryLayout(root);
  const dir = join(root, layout.dir);
  const found: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    if (entry.isDirectory() && (await isFile(join(dir, entry.name, layout.handler)))) found.push(entry.name);
  }
  return found.sort();
}

async function loadEsbuild(): Promise<typeof import('esbuild')> {
  try {
    return await import('esbuild');
  } catch (error) {
    throw new BundleError(
      `esbuild is not installed (${error instanceof Error ? error.message : String(error)}); install it beside convoy: npm install --save-dev esbuild`,
    );
  }
}

export async function bundleFunctions(options: BundleOptions = {}): Promise<BundleResult[]> {
  const root = resolve(options.root ?? packageRoot);
  const outDir = options.outDir ?? join('dist', 'lambda');
  const awsSdk = options.awsSdk ?? 'external';
  const layout = await entryLayout(root);
  const available = await listFunctions(root);
  const fns = options.only ?? available;
  for (const fn of fns) {
    if (!available.includes(fn)) {
      throw new BundleError(
        `${join(layout.dir, fn, layout.handler)} does not exist; functions with a handler: ${available.join(', ') || 'none'}`,
      );
    }
  }
  const { build } = await loadEsbuild();
  const results: BundleResult[] = [];
  for (const fn of fns) {
    const dir = isAbsolute(outDir) ? join(outDir, fn) : join(root, outDir, fn);
    await rm(dir, { recursive: true, force: true });
    const outfile = join(dir, 'index.mjs');
    const entry = join(layout.dir, fn, layout.handler);
    const started = performance.now();
    const result = await build({
      absWorkingDir: root,
      entryPoints: [join(root, entry)],
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
      throw new BundleError(`esbuild failed for ${entry}: ${result.errors.map((e) => e.text).join('; ')}`);
    }
    for (const warning of result.warnings) {
      process.stderr.write(
        `bundle ${fn}: warning: ${warning.text}${warning.location ? ` (${warning.location.file}:${warning.location.line})` : ''}\n`,
      );
    }
    results.push({ fn, bytes: (await stat(outfile)).size, ms, awsSdk, out: relative(root, outfile), entry });
  }
  return results;
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      'aws-sdk': { type: 'string', default: 'external' },
      'out-dir': { type: 'string' },
      root: { type: 'string' },
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
    ...(values.root !== undefined ? { root: values.root } : {}),
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
