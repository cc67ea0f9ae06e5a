/**
 * Content type `Manifests`: every `*.yaml`, `*.yml` and `*.json` file under a folder, recursively,
 * in path order. Hidden files and folders (`.git`, `.github`, `.gitlab-ci.yml`, …) are skipped:
 * they are tooling, not manifests. Symbolic links are followed only while they stay inside the
 * folder; one that leads outside is refused (a source must not read the machine's files).
 * No external tool reads this content: convoy's own walk below is the sandbox, its boundary the
 * rendered folder (stricter than the checkout that bounds Helm and Kustomize, content-check.ts).
 * A file it would read must also be a regular file with one name (no hard link, FIFO, device).
 */
import { readdir, readFile, realpath, stat } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';
import { compareStrings } from '../../domain/render/canonical.ts';
import { RenderError } from '../../domain/render/errors.ts';
import { assertNoDuplicates } from '../../domain/render/identity.ts';
import type { KubeObject } from '../../domain/render/kube-object.ts';
import { fileTooLargeError, MAX_MANIFEST_BYTES, parseManifests } from '../../domain/render/manifest-parse.ts';
import { entryProblem, refusalMessage } from '../../domain/render/path-safety.ts';
import {
  DEFAULT_MAX_RENDER_BYTES,
  describeBytes,
  MAX_RENDER_BYTES_SETTING,
} from '../../domain/reconcile/render-limits.ts';

const MANIFEST_FILE = /\.(ya?ml|json)$/i;

interface Walk {
  root: string;
  files: string[];
  /** Real paths of folders already listed, so a link loop is listed once. */
  visited: Set<string>;
}

function inside(root: string, path: string): boolean {
  return path === root || path.startsWith(root + sep);
}

async function walk(state: Walk, dir: string): Promise<void> {
  const real = await realpath(dir);
  if (state.visited.has(real)) return;
  state.visited.add(real);
  const entries = await readdir(dir, { withFileTypes: true });
  for (const entry of entries) {
    if (entry.name.startsWith('.')) continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      await walk(state, path);
    } else if (entry.isFile()) {
      if (MANIFEST_FILE.test(entry.name)) state.files.push(path);
    } else if (entry.isSymbolicLink()) {
      await followLink(state, path, entry.name);
    }
  }
}

async function followLink(state: Walk, path: string, name: string): Promise<void> {
  const shown = relative(state.root, path);
  let target: string;
  try {
    target = await realpath(path);
  } catch {
    if (MANIFEST_FILE.test(name)) {
      throw new RenderError(`${shown}: the symbolic link leads nowhere; fix or remove it`, { file: shown });
    }
    return;
  }
  const info = await stat(target);
  if (!info.isDirectory() && !MANIFEST_FILE.test(name)) return;
  if (!inside(state.root, target)) {
    throw new RenderError(
      `${shown}: the symbolic link leads outside the rendered folder, which convoy does not follow; ` +
        'copy the file into the folder or render a folder that contains both',
      { file: shown },
    );
  }
  if (info.isDirectory()) await walk(state, path);
  else if (info.isFile()) state.files.push(path);
}

/**
 * The objects of every manifest file under `dir`, in path order, then file order. The files
 * together may hold at most `maxBytes` (the installation's render byte limit, render-limits.ts),
 * checked from their sizes before any is parsed.
 */
export async function renderManifestsDir(
  dir: string,
  options: { maxBytes?: number | undefined } = {},
): Promise<KubeObject[]> {
  const maxTotal = options.maxBytes ?? DEFAULT_MAX_RENDER_BYTES;
  const root = await realpath(dir);
  const state: Walk = { root, files: [], visited: new Set() };
  await walk(state, root);
  const files = state.files
    .map((path) => ({ path, shown: relative(root, path).split(sep).join('/') }))
    .sort((a, b) => compareStrings(a.shown, b.shown));

  let total = 0;
  for (const { path, shown } of files) {
    const info = await stat(path);
    const why = entryProblem({ kind: info.isFile() ? 'file' : 'other', nlink: info.nlink });
    if (why !== undefined) throw new RenderError(refusalMessage({ file: shown, why }), { file: shown });
    if (info.size > MAX_MANIFEST_BYTES) throw fileTooLargeError(shown, MAX_MANIFEST_BYTES);
    total += info.size;
    if (total > maxTotal) {
      throw new RenderError(
        `the manifest files take more than this installation's render limit of ${describeBytes(maxTotal)} together (${MAX_RENDER_BYTES_SETTING}; reached at ${shown}); ` +
          "nothing was stored or applied. Split the content into smaller Releases, or raise the limit together with the reconcile function's memory",
        { file: shown },
      );
    }
  }

  const objects: KubeObject[] = [];
  const origins: string[] = [];
  for (const { path, shown } of files) {
    const parsed = parseManifests(await readFile(path, 'utf8'), { file: shown });
    parsed.forEach((obj, i) => {
      objects.push(obj);
      origins.push(`${shown}, object ${i + 1}`);
    });
  }
  // Catches exact duplicates with their files named; the render pipeline checks again once
  // the target namespace is applied.
  assertNoDuplicates(objects, { describe: (index) => origins[index] ?? `object ${index + 1}` });
  return objects;
}
