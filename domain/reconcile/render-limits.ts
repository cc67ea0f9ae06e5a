import { halt, type Halt } from './halt.ts';

/**
 * How large a render this installation takes. A render over the object limit
 * ends the run at Rendering (Applied False/DeployFailed, the row "Render or mutate: error") before
 * anything is stored or applied, naming its count and the limit, instead of the function running
 * out of memory or time part-way through the apply.
 */
export interface RenderLimits {
  /** Objects one render may hold. */
  maxObjects: number;
  /**
   * Bytes of render output (helm/kubectl stdout, the manifest files of a folder together) one
   * render may produce; more ends the render at Rendering before it is parsed. Few large objects
   * pass the object limit, and parsing is where their memory goes.
   */
  maxBytes: number;
}

/**
 * 10,000 objects: what the bench's largeRelease section applies end to end well inside the
 * reconcile function's defaults (1024 MB, 5 min); docs/decisions.md has the figures.
 */
export const DEFAULT_MAX_RENDER_OBJECTS = 10_000;

/**
 * 32 MiB: parsing and finishing a render of 64 MiB (the earlier bound) peaked at 416 MB
 * (127 objects of 512 KiB) to 594 MB (15,600 objects of 4 KiB) before the dry run, store and apply
 * added theirs; 32 MiB is about 10,000 objects of 3 KiB (docs/decisions.md).
 */
export const DEFAULT_MAX_RENDER_BYTES = 32 * 1024 * 1024;

export const DEFAULT_RENDER_LIMITS: RenderLimits = {
  maxObjects: DEFAULT_MAX_RENDER_OBJECTS,
  maxBytes: DEFAULT_MAX_RENDER_BYTES,
};

/** Where an installation sets the byte limit, as the message names it. */
export const MAX_RENDER_BYTES_SETTING = "CONVOY_MAX_RENDER_BYTES: the Convoy construct's maxRenderBytes";

/** A byte count as the messages show it: whole MiB, MiB with one decimal, or bytes below 1 MiB. */
export function describeBytes(bytes: number): string {
  const mib = bytes / (1024 * 1024);
  if (mib < 1) return `${bytes} bytes`;
  return `${Number.isInteger(mib) ? mib : mib.toFixed(1)} MiB`;
}

/** Where an installation sets the limit, as the message names it. */
export const MAX_RENDER_OBJECTS_SETTING =
  "CONVOY_MAX_RENDER_OBJECTS: the Convoy construct's maxRenderObjects, convoy dev --max-render-objects";

/** The stop for a render of `count` objects, or undefined when it is within the limit. */
export function renderOverLimit(
  count: number,
  limits: Pick<RenderLimits, 'maxObjects'>,
  what = 'the render',
): Halt | undefined {
  if (count <= limits.maxObjects) return undefined;
  return halt(
    'renderFailed',
    `${what} has ${count} objects, more than this installation's limit of ${limits.maxObjects} objects per render ` +
      `(${MAX_RENDER_OBJECTS_SETTING}); nothing was stored or applied. Split the content into smaller Releases, or raise the limit ` +
      "together with the reconcile function's memory and timeout",
  );
}

/** A limit as a setting gives it: a whole number of at least 1. */
export function validMaxObjects(value: number): boolean {
  return Number.isSafeInteger(value) && value >= 1;
}
