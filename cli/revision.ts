/**
 * The source revision of a render as the CLI shows it: a Git commit (12 hex), a chart version, or
 * an OCI artifact's `<tag>@<12 hex of the manifest digest>` (`sha256:<12 hex>` when pinned by
 * digest). undefined when the status names none. No imports: `convoy get` stays light.
 */
export interface ResolvedSourceLike {
  git?: { commit?: string | undefined } | undefined;
  helm?: { version?: string | undefined } | undefined;
  oci?: { digest?: string | undefined; tag?: string | undefined } | undefined;
}

export function revisionOf(resolved: ResolvedSourceLike | undefined, commitLength = 12): string | undefined {
  if (resolved?.git?.commit !== undefined) return resolved.git.commit.slice(0, commitLength);
  if (resolved?.helm?.version !== undefined) return resolved.helm.version;
  const oci = resolved?.oci;
  if (oci?.digest === undefined) return undefined;
  const hex = oci.digest.replace(/^sha256:/, '').slice(0, 12);
  return oci.tag !== undefined ? `${oci.tag}@${hex}` : `sha256:${hex}`;
}
