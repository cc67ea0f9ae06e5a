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
 * (content-check.ts: links that leave the checkout, hard links, devices).
 *
 * Network: kustomize fetches remote bases and any `http(s)://` file itself, from the renderer's
 * network position and outside the egress policy. Every kustomization followed, and every plugin
 * config it names (a file, inline YAML, or the objects of a kustomization folder used as
 * generators/transformers/validators), is scanned for remote references
 * (domain/render/kustomize-remote.ts); one is refused naming the file and the field. kubectl then
 * runs in a private folder with an environment of its own (tool-sandbox.ts): no PATH (so no `git`
 * to clone with) and a proxy that refuses every connection (a second wall for what a scan could
 * miss, except loopback, which Go never proxies).
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
import {
  isPluginField,
  REMOTE_REFUSAL,
  remoteReferences,
  remoteReferencesInText,
  type RemoteReference,
} from '../../domain/render/kustomize-remote.ts';
import { parseManifests } from '../../domain/render/manifest-parse.ts';
import { isWithin, refusalMessage } from '../../domain/render/path-safety.ts';
import { openContentWalk, readCheckoutFile, type ContentWalk } from './content-check.ts';
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

/** Throws the refusal of the first remote reference in `refs`, read in `file`. */
function refuseRemote(file: string, refs: readonly RemoteReference[]): void {
  const [ref] = refs;
  if (ref === undefined) return;
  const value = ref.value.length > 200 ? `${ref.value.slice(0, 200)}…` : ref.value;
  throw new RenderError(`${file} (${ref.field}: ${JSON.stringify(value)}): ${REMOTE_REFUSAL}`, { file });
}

/** A file kustomize reads as plugin configs (a generator, transformer or validator): nothing in it may fetch. */
async function checkPluginFile(walk: ContentWalk, real: string): Promise<void> {
  const file = posix(walk.root, real);
  const text = await readCheckoutFile(walk.root, file);
  if (text !== undefined) refuseRemote(file, remoteReferencesInText(text, 'plugin config'));
}

/**
 * Follows the kustomization in the real folder `dir` and every local base it names. `plugins`:
 * the objects this kustomization yields are plugin configs (it is an entry of `generators`,
 * `transformers` or `validators`), so its resource files are checked like plugin config files.
 */
async function followKustomization(
  walk: ContentWalk,
  dir: string,
  plugins: boolean,
  seen: Set<string>,
): Promise<void> {
  const key = `${plugins ? 'plugins' : 'objects'}:${dir}`;
  if (seen.has(key)) return;
  seen.add(key);
  if (seen.size > MAX_KUSTOMIZATIONS) {
    throw new RenderError(`the kustomization graph has more than ${MAX_KUSTOMIZATIONS} folders`);
  }
  await walk.check(dir);
  const kustomization = await readKustomization(walk, dir);
  if (kustomization === undefined) return; // kubectl says what is missing
  // Before anything is followed: no field of this kustomization may make kustomize fetch.
  refuseRemote(kustomization.file, remoteReferences(kustomization.value));
  const from = posix(walk.root, dir);
  for (const { field, value } of kustomizationReferences(kustomization.value)) {
    const entry = `${kustomization.file} (${field}: ${JSON.stringify(value.length > 200 ? `${value.slice(0, 200)}…` : value)})`;
    const verdict = classifyKustomizeReference(from, value);
    if (verdict.kind === 'refused') {
      const message = verdict.remote
        ? `${entry}: ${verdict.why}`
        : refusalMessage({ file: entry, why: verdict.why });
      throw new RenderError(message, { file: kustomization.file });
    }
    let real: string;
    try {
      real = await realpath(join(walk.root, verdict.path));
    } catch {
      continue; // missing (or an inline plugin config, checked above): kubectl says so
    }
    if (!isWithin(walk.root, real)) {
      throw new RenderError(
        refusalMessage({ file: entry, why: 'leads through a symbolic link outside the repository checkout' }),
        { file: kustomization.file },
      );
    }
    const asPlugins = plugins || isPluginField(field);
    if ((await stat(real)).isDirectory()) await followKustomization(walk, real, asPlugins, seen);
    else if (asPlugins) await checkPluginFile(walk, real);
  }
}

export async function renderKustomize(dir: string, options: KustomizeOptions): Promise<KubeObject[]> {
  const walk = await openContentWalk(options.root ?? dir);
  const real = await walk.check(dir);
  await followKustomization(walk, real, false, new Set());
  const what = `kubectl kustomize ${dir}`;
  const maxBytes = options.maxOutputBytes ?? MAX_TOOL_OUTPUT_BYTES;
  const output = await withToolHome({ tempDir: options.tempDir }, (home) =>
    runTool(options.kubectl, ['kustomize', '--', real], {
      what,
      home,
      timeoutMs: options.timeoutMs,
      maxOutputBytes: maxBytes,
    }),
  );
  return parseManifests(output, { file: what, format: 'yaml', maxBytes });
}
