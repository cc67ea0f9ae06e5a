// `npm run gen:deploy`: writes deploy/ and charts/convoy from infra/relay-manifests.ts
// (via infra/install-files.ts). test/unit/infra/install-files.test.ts fails when they drift.
import { mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { dirname, join, relative, resolve } from 'node:path';
import { installFiles } from '../infra/install-files.ts';

const root = resolve(import.meta.dirname, '..');

async function listFiles(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true }).catch(() => [])) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...(await listFiles(path)));
    else out.push(relative(root, path));
  }
  return out;
}

async function main(): Promise<void> {
  const { version } = JSON.parse(await readFile(join(root, 'package.json'), 'utf8')) as { version: string };
  const files = installFiles(version);
  // Generated folders hold only generated files: drop what the generator no longer makes.
  for (const stale of [
    ...(await listFiles(join(root, 'deploy'))),
    ...(await listFiles(join(root, 'charts', 'convoy'))),
  ]) {
    if (!files.has(stale)) await rm(join(root, stale));
  }
  for (const [path, content] of files) {
    await mkdir(dirname(join(root, path)), { recursive: true });
    await writeFile(join(root, path), content);
  }
  process.stdout.write(`gen-deploy: wrote ${files.size} files under deploy/ and charts/convoy\n`);
}

await main();
