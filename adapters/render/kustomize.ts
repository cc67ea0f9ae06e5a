/**
 * Content type `Kustomize`: `kubectl kustomize <dir>` (the kustomize built into kubectl), with
 * kustomize's default load restrictions (no files from outside the kustomization root, though
 * bases may live elsewhere in the checkout) and no plugins or Helm inflation.
 */
import { tmpdir } from 'node:os';
import type { KubeObject } from '../../domain/render/kube-object.ts';
import { parseManifests } from '../../domain/render/manifest-parse.ts';
import { MAX_TOOL_OUTPUT_BYTES, runTool } from './run-tool.ts';

export interface KustomizeOptions {
  /** Path of the kubectl binary. */
  kubectl: string;
  timeoutMs?: number;
}

export async function renderKustomize(dir: string, options: KustomizeOptions): Promise<KubeObject[]> {
  const what = `kubectl kustomize ${dir}`;
  const output = await runTool(options.kubectl, ['kustomize', '--', dir], {
    what,
    // Only what kustomize needs: PATH (git for remote bases) and a HOME that holds no kubeconfig.
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: tmpdir() },
    timeoutMs: options.timeoutMs,
  });
  return parseManifests(output, { file: what, format: 'yaml', maxBytes: MAX_TOOL_OUTPUT_BYTES });
}
