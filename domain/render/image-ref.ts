/**
 * Container image references (`[registry[:port]/]path[:tag][@digest]`) and the Kustomize-style
 * image override of a Mutation.
 */

export interface ImageOverride {
  /** The image name to match: the reference without tag and digest, compared exactly. */
  name: string;
  newName?: string;
  newTag?: string;
  digest?: string;
}

export interface ImageRef {
  name: string;
  tag?: string;
  digest?: string;
}

export function splitImageRef(image: string): ImageRef {
  const at = image.indexOf('@');
  const digest = at >= 0 ? image.slice(at + 1) : undefined;
  const rest = at >= 0 ? image.slice(0, at) : image;
  // A colon after the last slash starts the tag; one before it belongs to a registry port.
  const colon = rest.lastIndexOf(':');
  const ref: ImageRef =
    colon > rest.lastIndexOf('/')
      ? { name: rest.slice(0, colon), tag: rest.slice(colon + 1) }
      : { name: rest };
  if (digest !== undefined) ref.digest = digest;
  return ref;
}

export function joinImageRef(ref: ImageRef): string {
  return `${ref.name}${ref.tag ? `:${ref.tag}` : ''}${ref.digest ? `@${ref.digest}` : ''}`;
}

/**
 * `image` with the override applied, or `image` itself when the name does not match. As in
 * Kustomize: a new tag drops the old digest, a new digest drops the old tag, both set both.
 */
export function overrideImage(image: string, override: ImageOverride): string {
  const ref = splitImageRef(image);
  if (ref.name !== override.name) return image;
  const next: ImageRef = { name: override.newName || ref.name };
  if (override.newTag || override.digest) {
    if (override.newTag) next.tag = override.newTag;
    if (override.digest) next.digest = override.digest;
  } else {
    if (ref.tag !== undefined) next.tag = ref.tag;
    if (ref.digest !== undefined) next.digest = ref.digest;
  }
  return joinImageRef(next);
}
