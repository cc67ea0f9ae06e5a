/**
 * JSON merge patch (RFC 7386), how spec.overrides apply over the template: objects merge key by
 * key, everything else (lists included) replaces, null removes the key. Overrides are an ordered
 * list applied one after the other (later wins), so there is nothing that could form a cycle.
 */
const isObject = (v: unknown): v is Record<string, unknown> =>
  v !== null && typeof v === 'object' && !Array.isArray(v);

export function mergePatch(target: unknown, patch: unknown): unknown {
  if (!isObject(patch)) return patch;
  const out: Record<string, unknown> = isObject(target) ? { ...target } : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete out[key];
    else out[key] = mergePatch(out[key], value);
  }
  return out;
}
