/**
 * Keeps in `<app>/node_modules` only the packages the relay can load: the bare imports reachable
 * from dist/relay/main.js through the compiled files, and their dependencies (installed peers
 * included). npm installs every dependency of the package, and peers too (aws-cdk-lib and the
 * kubectl layer serve the CDK construct, fauxqs serves `convoy dev`); the relay needs none of them.
 *
 *   node image/prune-deps.ts <app dir>      # prints {kept, removed} as JSON
 *
 * Used by image/stage-app.ts and by image/Dockerfile. No dependencies: Node.js 24 runs it as is.
 */
import { existsSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';

const IMPORT =
  /(?:^|[\s;}])(?:import|export)\s[^'"]*?from\s*["']([^"']+)["']|(?:^|[\s;])import\s*["']([^"']+)["']|import\(\s*["']([^"']+)["']\s*\)/gm;

export class PruneError extends Error {
  override name = 'PruneError';
}

function packageName(specifier: string): string {
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : (parts[0] ?? specifier);
}

/** Bare package names imported by the files reachable from `entry` (relative imports followed). */
export function reachablePackages(entry: string): Set<string> {
  const seen = new Set<string>();
  const packages = new Set<string>();
  const todo = [resolve(entry)];
  while (todo.length > 0) {
    const file = todo.pop() as string;
    if (seen.has(file)) continue;
    seen.add(file);
    const text = readFileSync(file, 'utf8');
    for (const m of text.matchAll(IMPORT)) {
      const spec = m[1] ?? m[2] ?? m[3];
      if (spec === undefined || spec.startsWith('node:')) continue;
      if (spec.startsWith('.')) {
        const target = resolve(dirname(file), spec);
        if (!existsSync(target)) throw new PruneError(`${file} imports ${spec}, which does not exist`);
        todo.push(target);
      } else packages.add(packageName(spec));
    }
  }
  return packages;
}

/** Where Node would find `name` from `fromDir` (walking up to the app's node_modules). */
function locate(name: string, fromDir: string, appDir: string): string | undefined {
  for (let dir = fromDir; ; dir = dirname(dir)) {
    const candidate = join(dir, 'node_modules', name);
    if (existsSync(join(candidate, 'package.json'))) return candidate;
    if (dir === appDir || dir === dirname(dir)) return undefined;
  }
}

export function pruneDependencies(
  appDir: string,
  entry = join(appDir, 'dist', 'relay', 'main.js'),
): { kept: string[]; removed: string[] } {
  const root = resolve(appDir);
  const modules = join(root, 'node_modules');
  if (!existsSync(entry))
    throw new PruneError(`${entry} does not exist; build the package first (npm run build)`);
  const keep = new Set<string>();
  const todo: [string, string][] = [...reachablePackages(entry)].map((name) => [name, root]);
  while (todo.length > 0) {
    const [name, from] = todo.pop() as [string, string];
    const dir = locate(name, from, root);
    if (dir === undefined) {
      if (from === root)
        throw new PruneError(`the relay imports ${name}, which is not installed in ${modules}`);
      continue; // an optional or uninstalled peer dependency
    }
    if (keep.has(dir)) continue;
    keep.add(dir);
    const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as Record<
      string,
      Record<string, string> | undefined
    >;
    for (const field of ['dependencies', 'optionalDependencies', 'peerDependencies'] as const) {
      for (const dep of Object.keys(pkg[field] ?? {})) todo.push([dep, dir]);
    }
  }
  const removed: string[] = [];
  for (const entryName of readdirSync(modules)) {
    const names =
      entryName.startsWith('@') && statSync(join(modules, entryName)).isDirectory()
        ? readdirSync(join(modules, entryName)).map((n) => `${entryName}/${n}`)
        : [entryName];
    for (const name of names) {
      const dir = join(modules, name);
      if (!keep.has(dir)) {
        rmSync(dir, { recursive: true, force: true });
        removed.push(name);
      }
    }
    if (
      entryName.startsWith('@') &&
      existsSync(join(modules, entryName)) &&
      readdirSync(join(modules, entryName)).length === 0
    ) {
      rmSync(join(modules, entryName), { recursive: true });
    }
  }
  const kept = [...keep]
    .filter((d) => dirname(d) === modules || dirname(dirname(d)) === modules)
    .map((d) => d.slice(modules.length + 1));
  return { kept: kept.sort(), removed: removed.sort() };
}

if (import.meta.main) {
  const appDir = process.argv[2];
  if (appDir === undefined) {
    process.stderr.write('usage: node image/prune-deps.ts <app dir>\n');
    process.exitCode = 2;
  } else {
    try {
      process.stdout.write(`${JSON.stringify(pruneDependencies(appDir))}\n`);
    } catch (error) {
      process.stderr.write(`prune-deps: ${error instanceof Error ? error.message : String(error)}\n`);
      process.exitCode = 1;
    }
  }
}
