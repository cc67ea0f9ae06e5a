/**
 * Remote references in a kustomization: what kustomize would fetch over the network itself.
 *
 * kustomize (the one built into kubectl) fetches far more than remote bases. An `http(s)://` entry
 * of any field it reads a file from is fetched with Go's own HTTP client before the load
 * restrictor is asked — `resources`, `components`, `crds`, `configurations`,
 * `patchesStrategicMerge`, `patches[].path`, `patchesJson6902[].path`, `replacements[].path`,
 * `openapi.path`, a generator's `files` / `envs` / `env`, and the same fields inside the plugin
 * configs that `generators` / `transformers` / `validators` name (a file, an inline YAML string,
 * or the objects a kustomization folder yields); git forms (`github.com/…`, `git@…`, `user@host/…`,
 * `ssh://`) are cloned with the `git` program. Those requests would leave from the renderer's
 * network position outside convoy's egress policy (the metadata address, the apiserver, the
 * management network), so every one is refused at Rendering, naming the file and the field.
 * Which fields fetch was measured against kubectl's kustomize (v5.8), not taken from its docs.
 */
import { parseAllDocuments } from 'yaml';

/**
 * kustomize decodes a kustomization with Go's encoding/json, which matches field names
 * case-insensitively, including the two non-ASCII letters that fold into ASCII ones: `ſ` (s) and
 * the Kelvin sign (k). `RESOURCES:` or `reſources:` therefore still name bases.
 */
export function foldFieldName(name: string): string {
  return name
    .replace(/\u017f/g, 's')
    .replace(/\u212a/g, 'k')
    .toLowerCase();
}

/** Fields (folded) whose entries are plugin configs: a file, a folder or inline YAML. */
const PLUGIN_FIELDS = new Set(['generators', 'transformers', 'validators']);

/** Fields (folded), at any depth, whose string values kustomize may load from a location. */
const LOADING_FIELDS = new Set([
  'resources',
  'bases',
  'components',
  ...PLUGIN_FIELDS,
  'crds',
  'configurations',
  'patchesstrategicmerge',
  'path',
  'files',
  'envs',
  'env',
  // helmCharts (kubectl runs no Helm inflation, but a refusal is clearer than its error).
  'repo',
  'valuesfile',
  'additionalvaluesfiles',
]);

const SCHEME_URL = /^[a-z][a-z0-9+.-]*:\/\//i;
const URL_SCHEME = /^(?:https?|git|ssh|s3|gcs):/i;
const GIT_FORMS = /^(?:git::|gh:|(?:www\.)?(?:github\.com|gitlab\.com|bitbucket\.org)[/:])/i;
/** `git@host:org/repo`, `user@host/org/repo`: kustomize clones both. */
const USER_AT_HOST = /^[^/\s:@]+@[^/\s:@]+[:/]/;
/** Any of the above anywhere in a text convoy could not parse. */
const REMOTE_ANYWHERE =
  /[a-z][a-z0-9+.-]*:\/\/|\bgit::|\bgh:|\b(?:github\.com|gitlab\.com|bitbucket\.org)[/:]|[^\s/:@]+@[^\s/:@]+[:/]/i;

/** `file:` names the renderer's own disk, not the network: kustomize-refs.ts refuses it as such. */
const FILE_SCHEME = /^(?:git::)?file:/i;

/** True when `value` names a location kustomize would fetch (http, git) rather than a local path. */
export function isRemoteReference(value: string): boolean {
  const v = value.trim();
  if (FILE_SCHEME.test(v)) return false;
  return SCHEME_URL.test(v) || URL_SCHEME.test(v) || GIT_FORMS.test(v) || USER_AT_HOST.test(v);
}

/** What the refusal says after the file and the entry. */
export const REMOTE_REFUSAL =
  "names a remote location, which kustomize would fetch itself, outside the installation's egress policy; " +
  "convoy renders only what the Release's source holds: copy it into the repository, or deploy it as a " +
  'Release of its own (a Git, Helm or OCI source)';

export interface RemoteReference {
  /** Where in the document, e.g. `resources`, `patches[0].path`, `transformers[1] (inline).path`. */
  field: string;
  value: string;
}

const YAML_OPTIONS = { merge: true, maxAliasCount: 100, uniqueKeys: false, prettyErrors: false } as const;

/**
 * The YAML documents of `text` (a plugin config file or an inline entry), or undefined when it is
 * not YAML convoy can read.
 */
export function yamlDocuments(text: string): unknown[] | undefined {
  try {
    const docs = parseAllDocuments(text, YAML_OPTIONS);
    if (!Array.isArray(docs) || docs.some((d) => d.errors.length > 0)) return undefined;
    return docs.map((d) => d.toJS({ maxAliasCount: 100 }) as unknown);
  } catch {
    return undefined;
  }
}

/**
 * The remote references in `text` read as plugin configs (YAML documents). Text convoy cannot
 * parse is refused when anything in it looks remote: kustomize's parser may read it differently.
 */
export function remoteReferencesInText(text: string, field: string): RemoteReference[] {
  const docs = yamlDocuments(text);
  if (docs === undefined) {
    const found = REMOTE_ANYWHERE.exec(text);
    return found ? [{ field: `${field} (YAML convoy cannot read)`, value: found[0] }] : [];
  }
  return docs.flatMap((doc) => remoteReferences(doc, field));
}

function isMapping(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A string entry of a loading field: its remote reference, if any (`files` entries may be `key=path`). */
function checkEntry(out: RemoteReference[], field: string, value: string, plugin: boolean): void {
  const eq = value.indexOf('=');
  if (isRemoteReference(value) || (eq > 0 && isRemoteReference(value.slice(eq + 1)))) {
    out.push({ field, value });
    return;
  }
  // kustomize takes a generators/transformers/validators entry that parses as objects as inline config.
  if (plugin && /[:{\n]/.test(value)) out.push(...remoteReferencesInText(value, `${field} (inline)`));
}

function collect(out: RemoteReference[], node: unknown, at: string): void {
  if (Array.isArray(node)) {
    node.forEach((item, i) => collect(out, item, `${at}[${i}]`));
    return;
  }
  if (!isMapping(node)) return;
  for (const [key, value] of Object.entries(node)) {
    const folded = foldFieldName(key);
    const field = at === '' ? key : `${at}.${key}`;
    if (LOADING_FIELDS.has(folded)) {
      const plugin = PLUGIN_FIELDS.has(folded);
      if (typeof value === 'string') checkEntry(out, field, value, plugin);
      if (Array.isArray(value)) {
        value.forEach((item, i) =>
          typeof item === 'string'
            ? checkEntry(out, field, item, plugin)
            : collect(out, item, `${field}[${i}]`),
        );
        continue;
      }
    }
    collect(out, value, field);
  }
}

/**
 * Every remote reference in `document` (a parsed kustomization, or a plugin config), at any depth
 * of the fields kustomize loads from, inline plugin configs included. `at` prefixes the fields.
 */
export function remoteReferences(document: unknown, at = ''): RemoteReference[] {
  const out: RemoteReference[] = [];
  collect(out, document, at);
  return out;
}

/** True for the fields whose entries are plugin configs (whatever their case). */
export function isPluginField(field: string): boolean {
  return PLUGIN_FIELDS.has(foldFieldName(field));
}
