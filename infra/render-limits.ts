import {
  DEFAULT_MAX_RENDER_BYTES,
  DEFAULT_MAX_RENDER_OBJECTS,
  validMaxObjects,
} from '../domain/reconcile/render-limits.ts';

/** The construct props this file reads. */
export interface RenderLimitProps {
  maxRenderObjects?: number | undefined;
  maxRenderBytes?: number | undefined;
  maxOciArtifactBytes?: number | undefined;
}

/** Why the construct's maxRenderObjects or maxRenderBytes is refused at synth, or undefined when both are fine (or unset). */
export function renderLimitProblem(props: RenderLimitProps): string | undefined {
  if (props.maxRenderObjects !== undefined && !validMaxObjects(props.maxRenderObjects)) {
    return `maxRenderObjects is ${props.maxRenderObjects}; it must be a whole number of at least 1 (objects per render)`;
  }
  if (props.maxRenderBytes !== undefined && !validMaxObjects(props.maxRenderBytes)) {
    return `maxRenderBytes is ${props.maxRenderBytes}; it must be a whole number of at least 1 (bytes of render output)`;
  }
  if (props.maxOciArtifactBytes !== undefined && !validMaxObjects(props.maxOciArtifactBytes)) {
    return `maxOciArtifactBytes is ${props.maxOciArtifactBytes}; it must be a whole number of at least 1 (bytes of an OCI artifact's content layer)`;
  }
  return undefined;
}

/**
 * The reconcile function's CONVOY_MAX_RENDER_OBJECTS and CONVOY_MAX_RENDER_BYTES for the
 * construct's maxRenderObjects and maxRenderBytes (domain/reconcile/render-limits.ts); always
 * set, so the template shows the limits in force; CONVOY_OCI_MAX_ARTIFACT_BYTES when
 * maxOciArtifactBytes is set.
 */
export function renderLimitEnvironment(props: RenderLimitProps): Record<string, string> {
  return {
    CONVOY_MAX_RENDER_OBJECTS: String(props.maxRenderObjects ?? DEFAULT_MAX_RENDER_OBJECTS),
    CONVOY_MAX_RENDER_BYTES: String(props.maxRenderBytes ?? DEFAULT_MAX_RENDER_BYTES),
    // Unset = the function's default (64 MiB, functions/runtime/config.ts).
    ...(props.maxOciArtifactBytes === undefined
      ? {}
      : { CONVOY_OCI_MAX_ARTIFACT_BYTES: String(props.maxOciArtifactBytes) }),
  };
}
