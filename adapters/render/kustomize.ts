/**
 * Content type `Kustomize`: `kubectl kustomize <dir>` (the kustomize built into kubectl), with
 * kustomize's default load restrictions (no files from outside the kustomization root, links
 * resolved) and no plugins, exec functions or Helm inflation.
 *
 * Sandbox: what the load restrictor does not confine are bases and components, which kustomize
 * loads by a relative path from anywhere. Before kubectl runs, the kustomization graph is followed
 * inside the checkout (domain/render/kustomize-refs.ts): a base or component that is absolute, a
 * `file://` repository, or leads out of the checkout (`..`, or a link) is refused naming the
 * kustomization file and the entry, and every local kustomization folder is walked like a chart
 * (content-check.ts: links that leave the checkout, hard links, devices). kubectl then runs in a
 * private folder with an environment of its own (tool-sandbox.ts); PATH is kept for `git`, which
 * kustomize runs for remote bases.
 */
import { readFile, realpath, stat } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';
import { parse } from 'yaml';
import { RenderError } from '../../domain/render/errors.ts';
import type { KubeObject } from '../../domain/render/kube-object.ts';
import {
  classifyKustomizeReference,
  KUSTOMIZATION_FILES,
  kustomizationReferences,
} from '../../domain/render/kustomize-refs.ts';
import { parseManifests } from '../../domain/render/manifest-parse.ts';
import { isWithin, refusalMessage } from '../../domain/render/path-safety.ts';
import { openContentWalk, type ContentWalk } from './content-check.ts';
import { MAX_TOOL_OUTPUT_BYTES, runTool } from './run-tool.ts';
import { withToolHome } from './tool-sandbox.ts';
import { pathExists } from '../tools/path-exists.ts';

export interface KustomizeOptions {
  /** Path of the kubectl binary. */
  kubectl: string;
  timeoutMs?: number | undefined;
  /** The repository checkout: bases may live anywhere inside it. Default: the folder itself. */
  root?: string | undefined;
  /** Where the private temporary folder is made; default the OS temp folder. */
  tempDir?: string | undefined;
  /** Bytes of `kubectl kustomize` output taken (the installation's render byte limit); default MAX_TOOL_OUTPUT_BYTES. */
  maxOutputBytes?: number | undefined;
}

/** At most this many kustomization folders are followed (a base graph is rarely above a few dozen). */
const MAX_KUSTOMIZATIONS = 1000;

function posix(root: string, path: string): string {
  return relative(root, path).split(sep).join('/');
}

/** The parsed kustomization file of the real folder `dir`, with its path; undefined when none. */
async function readKustomization(
  walk: ContentWalk,
  dir: string,
): Promise<{ file: string; value: unknown } | undefined> {
  for (const name of KUSTOMIZATION_FILES) {
    const path = join(dir, name);
    if (!(await pathExists(path))) continue;
    const file = posix(walk.root, path);
    let value: unknown;
    try {
      // kustomize reads one document, merge keys resolved.
      value = parse(await readFile(path, 'utf8'), { merge: true, maxAliasCount: 100, prettyErrors: false });
    } catch (error) {
      const detail = error instanceof Error ? error.message.split('\n')[0] : String(error);
      throw new RenderError(`${file}: convoy cannot read this kustomization to check its bases (${detail})`, {
        file,
        cause: error,
      });
    }
    return { file, value };
  }
  return undefined;
}

/** Follows the kustomization in the real folder `dir` and every local base it names. */
async function followKustomization(walk: ContentWalk, dir: string, seen: Set<string>): Promise<void> {
  if (seen.has(dir)) return;
  seen.add(dir);
  if (seen.size > MAX_KUSTOMIZATIONS) {
    throw new RenderError(`the kustomization graph has more than ${MAX_KUSTOMIZATIONS} folders`);
  }
  await walk.check(dir);
  const kustomization = await readKustomization(walk, dir);
  if (kustomization === undefined) return; // kubectl says what is missing
  const from = posix(walk.root, dir);
  for (const { field, value } of kustomizationReferences(kustomization.value)) {
    const entry = `${kustomization.file} (${field}: ${JSON.stringify(value.length > 200 ? `${value.slice(0, 200)}…` : value)})`;
    const verdict = classifyKustomizeReference(from, value);
    if (verdict.kind === 'refused') {
      throw new RenderError(refusalMessage({ file: entry, why: verdict.why }), { file: kustomization.file });
    }
    if (verdict.path === undefined) continue;
    let real: string;
    try {
      real = await realpath(join(walk.root, verdict.path));
    } catch {
      continue; // not a local path (a remote base), or missing: kubectl says so
    }
    if (!isWithin(walk.root, real)) {
      throw new RenderError(
        refusalMessage({ file: entry, why: 'leads through a symbolic link outside the repository checkout' }),
        { file: kustomization.file },
      );
    }
    if ((await stat(real)).isDirectory()) await followKustomization(walk, real, seen);
  }
}

export async function renderKustomize(dir: string, options: KustomizeOptions): Promise<KubeObject[]> {
  const walk = await openContentWalk(options.root ?? dir);
  const real = await walk.check(dir);
  await followKustomization(walk, real, new Set());
  const what = `kubectl kustomize ${dir}`;
  const maxBytes = options.maxOutputBytes ?? MAX_TOOL_OUTPUT_BYTES;
  const output = await withToolHome({ tempDir: options.tempDir, path: true }, (home) =>
    runTool(options.kubectl, ['kustomize', '--', real], {
      what,
      home,
      timeoutMs: options.timeoutMs,
      maxOutputBytes: maxBytes,
    }),
  );
  return parseManifests(output, { file: what, format: 'yaml', maxBytes });
}
