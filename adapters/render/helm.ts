/**
 * Content type `Helm`: `helm template` of a chart folder, offline.
 *
 * - Values: the merged layers (see domain/render/helm-values.ts) go to helm as one JSON file in a
 *   private temporary folder, removed afterwards (values may hold Secret data).
 * - Dependencies: `dependencyMode: Vendored` (the default) needs every dependency of Chart.yaml
 *   under charts/ (as a folder or a .tgz); `Resolve` is not supported. convoy never downloads.
 * - Sandbox: before helm runs, the chart folder is walked (content-check.ts): a symbolic link
 *   that leaves the checkout, a hard link, a device or FIFO, a link loop, or a vendored archive
 *   holding a link or an absolute or `..` name is refused, naming the file. helm follows links,
 *   so this is what keeps `.Files.Get` and templates inside the checkout.
 * - helm runs in that private temporary folder (its HOME, working directory and cache/config/data
 *   homes) with an environment of those paths only and a kubeconfig that does not exist
 *   (tool-sandbox.ts), so no user's helm repositories, plugins, clusters or credentials are involved.
 * - `--include-crds` (CRDs from crds/ are part of the render), `--skip-tests` (test hooks are
 *   for `helm test`, not for a deployment). Other hooks are rendered as ordinary objects.
 */
import { readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { RenderError, UnsupportedRenderError } from '../../domain/render/errors.ts';
import type { KubeObject } from '../../domain/render/kube-object.ts';
import { isPlainObject } from '../../domain/render/kube-object.ts';
import { parseManifests, parseYamlValue } from '../../domain/render/manifest-parse.ts';
import { checkContentTree } from './content-check.ts';
import { MAX_TOOL_OUTPUT_BYTES, runTool } from './run-tool.ts';
import { withToolHome } from './tool-sandbox.ts';

export interface HelmChartOptions {
  /** Path of the helm binary. */
  helm: string;
  releaseName: string;
  namespace: string;
  /** The merged values (`mergeValues`), null tombstones included. */
  values: Record<string, unknown>;
  /** `Capabilities.KubeVersion`, e.g. the target cluster's `v1.31.2`. */
  kubeVersion?: string;
  dependencyMode?: 'Vendored' | 'Resolve';
  timeoutMs?: number;
  /** Where the private temporary folder is made; default the OS temp folder (/tmp on Lambda). */
  tempDir?: string;
  /**
   * The repository checkout the chart folder is in: symbolic links may lead anywhere inside it,
   * nowhere outside. Default: the chart folder itself.
   */
  root?: string | undefined;
  /** Bytes of `helm template` output taken (the installation's render byte limit); default MAX_TOOL_OUTPUT_BYTES. */
  maxOutputBytes?: number | undefined;
}

interface ChartDependency {
  name: string;
  version?: string;
}

async function readYamlFile(path: string, what: string): Promise<unknown> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  try {
    return parseYamlValue(text, what);
  } catch (error) {
    throw new RenderError(error instanceof Error ? error.message : String(error), {
      file: what,
      cause: error,
    });
  }
}

/** The chart's name and dependencies (Chart.yaml, or requirements.yaml for apiVersion v1 charts). */
async function readChart(chartDir: string): Promise<{ name: string; dependencies: ChartDependency[] }> {
  const chart = await readYamlFile(join(chartDir, 'Chart.yaml'), 'Chart.yaml');
  if (!isPlainObject(chart)) {
    throw new RenderError(
      `${chartDir} holds no Chart.yaml (or it is not a mapping); is spec.source path the chart folder?`,
      {
        file: 'Chart.yaml',
      },
    );
  }
  const name = typeof chart.name === 'string' ? chart.name : chartDir;
  let list = chart.dependencies;
  if (list === undefined && chart.apiVersion === 'v1') {
    const requirements = await readYamlFile(join(chartDir, 'requirements.yaml'), 'requirements.yaml');
    list = isPlainObject(requirements) ? requirements.dependencies : undefined;
  }
  const dependencies = (Array.isArray(list) ? list : [])
    .filter((dep): dep is Record<string, unknown> => isPlainObject(dep) && typeof dep.name === 'string')
    .map((dep) => ({
      name: dep.name as string,
      ...(typeof dep.version === 'string' ? { version: dep.version } : {}),
    }));
  return { name, dependencies };
}

/** Names of the charts vendored under charts/: folders (by their Chart.yaml name) and archives. */
async function vendoredCharts(chartDir: string): Promise<Set<string>> {
  const names = new Set<string>();
  let entries;
  try {
    entries = await readdir(join(chartDir, 'charts'), { withFileTypes: true });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return names;
    throw error;
  }
  for (const entry of entries) {
    // A link to a folder (a library chart elsewhere in the checkout) is a folder to helm.
    const folder =
      entry.isDirectory() ||
      (entry.isSymbolicLink() &&
        (await stat(join(chartDir, 'charts', entry.name)).catch(() => undefined))?.isDirectory());
    if (folder) {
      const sub = await readYamlFile(
        join(chartDir, 'charts', entry.name, 'Chart.yaml'),
        `charts/${entry.name}/Chart.yaml`,
      );
      names.add(isPlainObject(sub) && typeof sub.name === 'string' ? sub.name : entry.name);
    } else {
      // <name>-<semver>.tgz, as `helm dependency build` writes them.
      const archive = /^(.+)-v?\d+\.\d+\.\d+[^/]*\.tgz$/.exec(entry.name);
      if (archive?.[1] !== undefined) names.add(archive[1]);
    }
  }
  return names;
}

async function checkDependencies(chartDir: string, mode: 'Vendored' | 'Resolve'): Promise<void> {
  if (mode === 'Resolve') {
    throw new UnsupportedRenderError(
      'HelmDependencyResolve',
      'spec.content.helm.dependencyMode',
      'dependencyMode Resolve is not supported: vendor the chart dependencies under charts/ ' +
        '("helm dependency build", then commit charts/) and use dependencyMode Vendored',
    );
  }
  const chart = await readChart(chartDir);
  if (chart.dependencies.length === 0) return;
  const vendored = await vendoredCharts(chartDir);
  for (const dep of chart.dependencies) {
    if (vendored.has(dep.name)) continue;
    const version = dep.version === undefined ? '' : ` (version ${dep.version})`;
    throw new RenderError(
      `Helm chart "${chart.name}": dependency "${dep.name}"${version} is not vendored under charts/; ` +
        'run "helm dependency build" in the chart folder and commit charts/ (convoy does not download dependencies)',
      { file: 'Chart.yaml' },
    );
  }
}

/** Renders the chart in `chartDir`. Throws `RenderError` with helm's own message on failure. */
export async function renderHelmChart(chartDir: string, options: HelmChartOptions): Promise<KubeObject[]> {
  // Before anything reads the chart, Chart.yaml included.
  const { dir } = await checkContentTree(chartDir, { root: options.root, helm: true });
  await checkDependencies(dir, options.dependencyMode ?? 'Vendored');
  return withToolHome({ tempDir: options.tempDir }, async (home) => {
    const valuesFile = join(home.dir, 'values.json');
    await writeFile(valuesFile, JSON.stringify(options.values), { mode: 0o600 });
    const args = [
      'template',
      '--namespace',
      options.namespace,
      '-f',
      valuesFile,
      '--include-crds',
      '--skip-tests',
    ];
    if (options.kubeVersion) args.push('--kube-version', options.kubeVersion);
    // After "--", a release name or path starting with "-" cannot be taken for a flag.
    args.push('--', options.releaseName, dir);
    const what = `helm template ${options.releaseName}`;
    const maxBytes = options.maxOutputBytes ?? MAX_TOOL_OUTPUT_BYTES;
    const output = await runTool(options.helm, args, {
      what,
      home,
      timeoutMs: options.timeoutMs,
      maxOutputBytes: maxBytes,
    });
    // Helm itself accepts a mapping key given twice (the last wins); so does this parse.
    return parseManifests(output, {
      file: what,
      format: 'yaml',
      maxBytes,
      allowDuplicateKeys: true,
    });
  });
}
