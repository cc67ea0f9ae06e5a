// Writes config/crds/*.yaml from the zod schemas in domain/api. `--check` fails when they differ.
import { readFile, writeFile, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { renderCrdFiles } from '../domain/api/crd-files.ts';

const dir = join(import.meta.dirname, '..', 'config', 'crds');
const check = process.argv.includes('--check');
let stale = 0;
await mkdir(dir, { recursive: true });
for (const { file, yaml } of renderCrdFiles()) {
  const path = join(dir, file);
  const current = await readFile(path, 'utf8').catch(() => '');
  if (current === yaml) continue;
  if (check) {
    console.error(`${path} differs from what the schemas generate; run npm run gen:crds`);
    stale++;
  } else {
    await writeFile(path, yaml);
    console.log(`wrote ${path}`);
  }
}
if (stale > 0) process.exit(1);
