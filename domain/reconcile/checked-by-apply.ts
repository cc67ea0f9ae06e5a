import type { Release } from '../api/index.ts';
import { isCreator, type KubeObject } from '../render/kube-object.ts';
import { planWaves } from '../render/order.ts';

/**
 * The object whose own apply stands in for its dry run, or undefined.
 *
 * On a Release's first deploy the object applied first is the one write before which nothing
 * has been applied: if the cluster refuses it, convoy still applies nothing, exactly as if its
 * dry run had refused it — so its dry run would cost one request and decide nothing the apply
 * does not. Its refusal ends the run as the dry run's would (Unappliable, not retried).
 *
 * Not when:
 * - the Release attempted a render before (its objects may exist: the dry run then tells an
 *   unchanged object, which is not written);
 * - it has lifecycle hooks (PreSync Jobs would run before a refusal a dry run catches first);
 * - the render holds a Namespace or CustomResourceDefinition (their dry runs decide which of
 *   the other objects can be dry-run at all);
 * - a force sync (it runs no dry run).
 */
export function checkedByItsApply(
  release: Release,
  objects: readonly KubeObject[],
  forced: boolean,
): KubeObject | undefined {
  if (forced || release.status?.lastAttempted !== undefined || release.spec.lifecycleRef !== undefined)
    return undefined;
  if (objects.some(isCreator)) return undefined;
  return planWaves(objects)[0]?.objects[0];
}
