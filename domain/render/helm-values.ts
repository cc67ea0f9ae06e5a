/**
 * Helm values layers → one values object, as `helm template -f layer1 -f layer2 …` merges them:
 * later layers win, mappings merge recursively, lists and scalars are replaced whole.
 *
 * `null` deletes a key, Helm-style: the merged result keeps `key: null` (a tombstone) rather than
 * dropping the key, because only then does Helm also delete the chart's own default for that
 * key when it coalesces the values with the chart's values.yaml. A later layer that sets the key
 * again replaces the tombstone.
 */
import { RenderError } from './errors.ts';
import { cloneJson, isPlainObject, setOwnProperty } from './kube-object.ts';

export type HelmValues = Record<string, unknown>;

function mergeInto(base: HelmValues, over: HelmValues): HelmValues {
  for (const [key, value] of Object.entries(over)) {
    const current = Object.hasOwn(base, key) ? base[key] : undefined;
    setOwnProperty(
      base,
      key,
      isPlainObject(current) && isPlainObject(value) ? mergeInto(current, value) : cloneJson(value),
    );
  }
  return base;
}

/** Merges values layers in order (the inline `values` of a Release go last). Inputs are not changed. */
export function mergeValues(layers: readonly unknown[]): HelmValues {
  return layers.reduce<HelmValues>((merged, layer, index) => {
    if (layer === null || layer === undefined) return merged;
    if (!isPlainObject(layer)) {
      throw new RenderError(`Helm values layer ${index + 1} is not a mapping of values; check its content`);
    }
    return mergeInto(merged, layer);
  }, {});
}
