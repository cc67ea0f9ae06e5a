import { DEFAULT_MAX_RENDER_BYTES, DEFAULT_MAX_RENDER_OBJECTS, validMaxObjects } from '../domain/reconcile/render-limits.ts';

/** Why the construct's maxRenderObjects or maxRenderBytes is refused at synth, or undefined when both are fine (or unset). */
export function renderLimitProblem(props: { maxRenderObjects?: number | undefined; maxRenderBytes?: number | undefined }): string | undefined {
  if (props.maxRenderObjects !== undefined && !validMaxObjects(props.maxRenderObjects)) {
    return `maxRenderObjects is ${props.maxRenderObjects}; it must be a whole number of at least 1 (objects per render)`;
  }
  if (props.maxRenderBytes !== undefined && !validMaxObjects(props.maxRenderBytes)) {
    return `maxRenderBytes is ${props.maxRenderBytes}; it must be a whole number of at least 1 (bytes of render output)`;
  }
  return undefined;
}

/**
 * The reconcile function's CONVOY_MAX_RENDER_OBJECTS and CONVOY_MAX_RENDER_BYTES for the
 * construct's maxRenderObjects and maxRenderBytes (domain/reconcile/render-limits.ts); always
 * set, so the template shows the limits in force.
 */
export function renderLimitEnvironment(props: { maxRenderObjects?: number | undefined; maxRenderBytes?: number | undefined }): Record<string, string> {
  return {
    CONVOY_MAX_RENDER_OBJECTS: String(props.maxRenderObjects ?? DEFAULT_MAX_RENDER_OBJECTS),
    CONVOY_MAX_RENDER_BYTES: String(props.maxRenderBytes ?? DEFAULT_MAX_RENDER_BYTES),
  };
}
