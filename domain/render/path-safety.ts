/**
 * The path rules of the render sandbox: what a Release's content may name or link to. Pure: the
 * filesystem walk that applies them is adapters/render/content-check.ts.
 *
 * The boundary is the repository checkout (for a chart from a Helm repository: the unpacked
 * chart). Everything in it is the tenant's own; nothing outside it may reach a tool:
 *
 * - A symbolic link must have a relative target that, resolved from the link's own folder, stays
 *   inside the checkout. Absolute targets are refused even when they point back inside: the path
 *   would be resolved again by helm or kubectl, in another process (`/proc/self/…` differs), and a
 *   checkout has no business knowing where it lives.
 * - A regular file must have one name: a hard link (link count > 1) can be the same file as one
 *   outside the checkout, and neither git nor `helm package` ever writes one.
 * - Devices, FIFOs and sockets are refused (reading a FIFO blocks a render until its timeout).
 * - Paths the content names (an archive entry, a Kustomize base) are relative, without a NUL, and
 *   never climb out of the checkout with `..`.
 *
 * Refusal reasons say why, never what a target holds (nor where an outside target is).
 * Paths here are POSIX paths relative to the checkout root, `''` being the root itself.
 */

/** A symbolic link, file or folder that the sandbox refuses, and why (a phrase: "is …"). */
export interface PathRefusal {
  /** The path relative to the checkout root (or the archive entry), as shown to the user. */
  file: string;
  why: string;
}

/** Splits a POSIX path into its non-empty, non-`.` segments. */
function segments(path: string): string[] {
  return path.split('/').filter((s) => s !== '' && s !== '.');
}

/** Like `segments`, but `\` separates too: how Helm reads archive entries written on Windows. */
function anySeparatorSegments(path: string): string[] {
  return path.split(/[/\\]/).filter((s) => s !== '' && s !== '.');
}

function looksAbsolute(path: string): boolean {
  return path.startsWith('/') || path.startsWith('\\') || /^[A-Za-z]:/.test(path);
}

/**
 * Resolves `target` lexically against the folder `from` (relative to the root). Returns the
 * resolved relative path, or undefined when a `..` climbs above the root. This is what the kernel
 * does for one link, given that every link on the way is itself checked.
 */
export function resolveInside(from: string, target: string): string | undefined {
  const out = segments(from);
  for (const part of segments(target)) {
    if (part === '..') {
      if (out.length === 0) return undefined;
      out.pop();
    } else {
      out.push(part);
    }
  }
  return out.join('/');
}

/** The folder of a relative path (`''` for a top-level entry). */
export function parentOf(path: string): string {
  const parts = segments(path);
  parts.pop();
  return parts.join('/');
}

/** Why a relative path named by the content is refused, or undefined when it is fine. */
export function relativePathProblem(path: string): string | undefined {
  if (path.includes('\0')) return 'contains a NUL character';
  if (looksAbsolute(path)) return 'is an absolute path';
  if (anySeparatorSegments(path).includes('..')) return 'contains a ".." segment';
  if (anySeparatorSegments(path).length === 0) return 'is empty';
  return undefined;
}

/**
 * Why the symbolic link at `link` (relative to the root) with target `target` is refused, or
 * undefined when it stays inside. A chain of links is safe when each link is: the walk checks
 * every one it meets, and the resolved real path once more.
 */
export function linkTargetProblem(link: string, target: string): string | undefined {
  if (target === '') return 'is a symbolic link with an empty target';
  if (target.includes('\0')) return 'is a symbolic link whose target contains a NUL character';
  if (target.startsWith('/')) return 'is a symbolic link to an absolute path';
  if (resolveInside(parentOf(link), target) === undefined) {
    return 'is a symbolic link that leads outside the repository checkout';
  }
  return undefined;
}

export type EntryKind = 'file' | 'directory' | 'symlink' | 'other';

/** Why an entry (not a symbolic link: those go through `linkTargetProblem`) is refused. */
export function entryProblem(entry: { kind: EntryKind; nlink: number }): string | undefined {
  if (entry.kind === 'other')
    return 'is not a regular file, folder or symbolic link (a device, FIFO or socket)';
  if (entry.kind === 'file' && entry.nlink > 1) {
    return `is a hard link (a file with ${entry.nlink} names, which may be a file outside the checkout)`;
  }
  return undefined;
}

/** True when the absolute POSIX path `path` is `root` or below it. */
export function isWithin(root: string, path: string): boolean {
  const base = root.endsWith('/') ? root.slice(0, -1) : root;
  return path === base || path.startsWith(`${base}/`) || (base === '' && path.startsWith('/'));
}

/** The kinds of entry a tar archive holds, as far as the sandbox cares. */
export type ArchiveEntryType = 'file' | 'directory' | 'symlink' | 'hardlink' | 'other';

/**
 * Why an entry of a vendored chart archive (charts/*.tgz) is refused. Helm reads archives in
 * memory and follows no link in them, so this is defence in depth and the rule of chart archives
 * from Helm repositories (adapters/source/helm-repo.ts): `helm package` never writes a link.
 */
export function archiveEntryProblem(entry: { name: string; type: ArchiveEntryType }): string | undefined {
  if (entry.type === 'symlink') return 'is a symbolic link (helm package never writes one)';
  if (entry.type === 'hardlink') return 'is a hard link (helm package never writes one)';
  if (entry.type === 'other') return 'is not a regular file or folder (a device, FIFO or sparse file)';
  return relativePathProblem(entry.name);
}

/** The message of a refusal: the file, why, and what to do. Never a target's path or contents. */
export function refusalMessage(refusal: PathRefusal): string {
  return (
    `${refusal.file}: ${refusal.why}; convoy renders only files inside the repository checkout ` +
    '(copy the file into the repository instead of linking to it)'
  );
}
