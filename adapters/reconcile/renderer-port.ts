import { targetNamespaceOf } from '../../domain/api/objects.ts';
import type { ReconcilePorts, RenderInput } from '../../domain/reconcile/ports.ts';
import { mergeValues } from '../../domain/render/helm-values.ts';
import { render, type RenderTools } from '../render/index.ts';

/** Runs the content's renderer (manifests, kustomize, helm) on the fetched source; `maxOutputBytes`: the render byte limit. */
export function createRendererPort(
  tools: () => Promise<RenderTools>,
  limits: { maxOutputBytes?: number | undefined } = {},
): ReconcilePorts['renderer'] {
  return {
    async render({ release, tree, valuesLayers }: RenderInput) {
      const content = release.spec.content;
      const helm = content.helm;
      return render(
        {
          type: content.type,
          dir: tree.dir,
          root: tree.root,
          maxOutputBytes: limits.maxOutputBytes,
          ...(content.type === 'Helm'
            ? {
                helm: {
                  releaseName: helm?.releaseName ?? release.metadata.name,
                  namespace: targetNamespaceOf(release),
                  values: mergeValues([...valuesLayers, helm?.values ?? {}]),
                  dependencyMode: helm?.dependencyMode ?? 'Vendored',
                },
              }
            : {}),
        },
        await tools(),
      );
    },
  };
}
