import type { Release } from '../api/index.ts';
import { Annotation, annotationOf } from './annotations.ts';
import { fetchSource } from './fetch-source.ts';
import { findCluster } from './find-cluster.ts';
import { isHalt, type Halt } from './halt.ts';
import { readHelmValues } from './helm-values.ts';
import { loadPinnedRender } from './load-pinned.ts';
import type { ReconcilePorts } from './ports.ts';
import { mutateRender, renderManifests } from './render-manifests.ts';
import type { PinState, PreparedRender, Resolved } from './resolved.ts';

export type { PinState, Resolved };

export type { PreparedRender };

/**
 * The first steps of the reconcile: fetch the source, find the cluster, read Helm values,
 * render and mutate — or, with a pin, find the cluster and load the pinned render. Fills
 * `resolved` as it goes, so a stop reports what was found.
 */
export async function prepareRender(
  release: Release,
  ports: ReconcilePorts,
  resolved: Resolved,
  pin: { state?: PinState },
): Promise<PreparedRender | Halt> {
  const pinnedRef = annotationOf(release, Annotation.pin);
  if (pinnedRef !== undefined) return loadPinnedRender(release, ports, resolved, pinnedRef, pin);

  const tree = await fetchSource(release, ports, resolved);
  if (isHalt(tree)) return tree;
  const target = await findCluster(release, ports, resolved);
  if (isHalt(target)) return target;
  const valuesLayers = await readHelmValues(release, ports);
  if (isHalt(valuesLayers)) return valuesLayers;
  const rendered = await renderManifests(release, ports, tree, valuesLayers);
  if (isHalt(rendered)) return rendered;
  const finished = await mutateRender(release, ports, rendered, resolved);
  if (isHalt(finished)) return finished;
  return { target, objects: finished.objects, renderRef: finished.renderRef, pinned: false };
}
