/**
 * What a kustomization may reach outside its own folder, for the render sandbox.
 *
 * kustomize's load restrictor (`LoadRestrictionsRootOnly`, kubectl's default) already keeps every
 * *file* a kustomization reads (patches, generators' files, …) inside the kustomization's folder,
 * after resolving symbolic links. What it does not confine are the entries that may name another
 * kustomization — a base or component — anywhere on the machine by a relative path:
 * `resources`, `bases`, `components`, and `generators` / `transformers` / `validators` (which
 * kustomize loads the same way). Those are what the sandbox checks (adapters/render/kustomize.ts):
 * no absolute path, no NUL, no `file://` repository (a git clone of a folder on the machine that
 * renders), and no `..` that climbs out of the checkout; each local base is then walked in turn.
 * Remote bases (`https://…`, `github.com/…`, `git@…`) fetch over the network and read nothing
 * local; they stay allowed (kustomize itself keeps them inside their clone).
 */
import { resolveInside } from './path-safety.ts';

/** The file names kustomize looks for in a folder, in its order. */
export const KUSTOMIZATION_FILES = ['kustomization.yaml', 'kustomization.yml', 'Kustomization'] as const;

/** The fields whose entries kustomize may load as another kustomization (a folder). */
const FOLDER_FIELDS = [
  'resources',
  'bases',
  'components',
  'generators',
  'transformers',
  'validators',
] as const;

export interface KustomizeReference {
  /** The field as written in the file (kustomize matches field names case-insensitively). */
  field: string;
  value: string;
}

/**
 * kustomize decodes a kustomization with Go's encoding/json, which matches field names
 * case-insensitively, including the two non-ASCII letters that fold into ASCII ones: `ſ` (s) and
 * the Kelvin sign (k). `RESOURCES:` or `reſources:` therefore still name bases.
 */
function foldFieldName(name: string): string {
  return name
    .replace(/\u017f/g, 's')
    .replace(/\u212a/g, 'k')
    .toLowerCase();
}

/** The entries of `kustomization` (a parsed kustomization file) that may name a folder. */
export function kustomizationReferences(kustomization: unknown): KustomizeReference[] {
  if (typeof kustomization !== 'object' || kustomization === null || Array.isArray(kustomization)) return [];
  const out: KustomizeReference[] = [];
  for (const [field, list] of Object.entries(kustomization as Record<string, unknown>)) {
    if (!(FOLDER_FIELDS as readonly string[]).includes(foldFieldName(field))) continue;
    if (!Array.isArray(list)) continue;
    for (const value of list) if (typeof value === 'string') out.push({ field, value });
  }
  return out;
}

export type KustomizeReferenceVerdict =
  /** A path inside the checkout, relative to its root (it may not exist: kustomize then says so). */
  | { kind: 'local'; path: string }
  /** Fetched over the network by kustomize (a git clone or an http file), if not a local path. */
  | { kind: 'remote'; path: string | undefined }
  | { kind: 'refused'; why: string };

const REMOTE = /^(?:[a-z][a-z0-9+.-]*:\/\/|git@|git::|gh:|(?:github\.com|gitlab\.com|bitbucket\.org)\/)/i;
const FILE_SCHEME = /^(?:git::)?file:/i;

/**
 * How kustomize would read `value`, written in the kustomization in folder `from` (relative to
 * the checkout root). kustomize joins a non-URL value to the folder lexically (Go's
 * `filepath.Join` cleans `..` before any link is resolved), so the lexical result must stay inside
 * the checkout; a URL-looking value that is also a local path is checked as one.
 */
export function classifyKustomizeReference(from: string, value: string): KustomizeReferenceVerdict {
  if (value.includes('\0')) return { kind: 'refused', why: 'contains a NUL character' };
  if (FILE_SCHEME.test(value.trim())) {
    return {
      kind: 'refused',
      why: 'is a file:// repository, which would read a folder of the machine that renders',
    };
  }
  if (value.startsWith('/')) return { kind: 'refused', why: 'is an absolute path' };
  const path = resolveInside(from, value);
  if (path === undefined) return { kind: 'refused', why: 'leads outside the repository checkout' };
  if (REMOTE.test(value)) return { kind: 'remote', path };
  return { kind: 'local', path };
}
