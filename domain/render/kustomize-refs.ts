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
 * Remote bases (`https://…`, `github.com/…`, `git@…`) are refused too: kustomize would fetch them
 * itself, outside the egress policy (kustomize-remote.ts, which also finds the other fields that
 * fetch).
 */
import { foldFieldName, isRemoteReference, REMOTE_REFUSAL } from './kustomize-remote.ts';
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
  /** `remote`: fetched over the network by kustomize (a git clone or an http file). */
  | { kind: 'refused'; why: string; remote?: true };

const FILE_SCHEME = /^(?:git::)?file:/i;

/**
 * How kustomize would read `value`, written in the kustomization in folder `from` (relative to
 * the checkout root). kustomize joins a non-URL value to the folder lexically (Go's
 * `filepath.Join` cleans `..` before any link is resolved), so the lexical result must stay inside
 * the checkout. A URL-looking value is refused even where a local folder of that name exists:
 * kustomize tries the network first for http(s), and always for the git forms.
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
  if (isRemoteReference(value)) return { kind: 'refused', why: REMOTE_REFUSAL, remote: true };
  const path = resolveInside(from, value);
  if (path === undefined) return { kind: 'refused', why: 'leads outside the repository checkout' };
  return { kind: 'local', path };
}
