/**
 * Renders a Release's content (spec.content) from a checked-out folder into Kubernetes objects.
 * The result still needs `finishRender` (domain/render/pipeline.ts): target namespace,
 * Mutations, duplicate and wave checks, renderRef.
 */
import { RenderError, UnsupportedRenderError } from '../../domain/render/errors.ts';
import type { KubeObject } from '../../domain/render/kube-object.ts';
import { renderHelmChart } from './helm.ts';
import type { HelmChartOptions } from './helm.ts';
import { renderKustomize } from './kustomize.ts';
import { renderManifestsDir } from './manifests.ts';

/** Paths of the rendering binaries (what the tool locator of adapters/tools returns). */
export interface RenderTools {
  helm: string;
  kubectl: string;
}

export type ContentType = 'Manifests' | 'Kustomize' | 'Helm' | 'Jsonnet';

export interface RenderInput {
  type: ContentType;
  /** The folder to render: spec.source path inside the checkout, or the unpacked chart. */
  dir: string;
  /**
   * The root of the checkout `dir` is in: the render sandbox's boundary. Helm and Kustomize may
   * read anywhere inside it (a Kustomize base in another folder, a chart linking a library chart)
   * and nothing outside (adapters/render/content-check.ts). Default: `dir` itself.
   */
  root?: string | undefined;
  /** Required for type Helm. */
  helm?: Omit<HelmChartOptions, 'helm'>;
  timeoutMs?: number;
  /** Bytes of render output taken: tool stdout, or the manifest files together (render-limits.ts); default 32 MiB. */
  maxOutputBytes?: number | undefined;
}

export async function render(input: RenderInput, tools: RenderTools): Promise<KubeObject[]> {
  switch (input.type) {
    case 'Manifests':
      return renderManifestsDir(input.dir, { maxBytes: input.maxOutputBytes });
    case 'Kustomize':
      return renderKustomize(input.dir, {
        kubectl: tools.kubectl,
        timeoutMs: input.timeoutMs,
        root: input.root,
        maxOutputBytes: input.maxOutputBytes,
      });
    case 'Helm':
      if (!input.helm)
        throw new RenderError('content type Helm needs the Helm options (release name, namespace, values)');
      return renderHelmChart(input.dir, {
        timeoutMs: input.timeoutMs,
        ...input.helm,
        root: input.root,
        helm: tools.helm,
        maxOutputBytes: input.maxOutputBytes,
      });
    case 'Jsonnet':
      throw new UnsupportedRenderError(
        'Jsonnet',
        'spec.content.type',
        'content type Jsonnet is not supported; render the Jsonnet to YAML in CI and use type Manifests',
      );
  }
}
