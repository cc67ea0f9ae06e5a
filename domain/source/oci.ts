/**
 * The pure parts of reading charts from an OCI registry (the distribution API, as Docker Hub, GHCR,
 * ECR, Harbor and distribution's `registry` serve it): `oci://` references, which tag a version
 * request picks, the `WWW-Authenticate` challenge, the `Link` header of a paged tag list, and the
 * credentials of a docker config JSON. No network, no fs.
 */
import semver from 'semver';

/** An OCI repository reference: `oci://<registry>/<repository>` (the registry host with its port). */
export interface OciReference {
  /** `host` or `host:port`, lower-cased. */
  registry: string;
  /** The repository name inside the registry, e.g. `org/charts/podinfo`. */
  repository: string;
}

/** One path component of a repository name (OCI distribution spec). */
export const OCI_NAME_COMPONENT = '[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*';
const HOST =
  '[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)*(?::[0-9]{1,5})?';
/**
 * A well-formed `oci://` repository location: a registry host (optional port), then zero or more
 * repository path components, no query, no credentials. The CRD schema checks the same expression
 * (domain/api/release-spec.ts), so a malformed URL is refused at admission.
 */
export const OCI_URL_PATTERN = `^oci://${HOST}(?:/${OCI_NAME_COMPONENT})*/?$`;
const OCI_URL = new RegExp(OCI_URL_PATTERN);
const COMPONENT = new RegExp(`^${OCI_NAME_COMPONENT}$`);
/** A tag (OCI distribution spec). */
const TAG = /^[A-Za-z0-9_][A-Za-z0-9._-]{0,127}$/;
/** `sha256:<64 hex>`, the only digest algorithm convoy accepts. */
export const OCI_DIGEST_PATTERN = '^sha256:[0-9a-f]{64}$';
const DIGEST = new RegExp(OCI_DIGEST_PATTERN);

export class OciReferenceError extends Error {
  override name = 'OciReferenceError';
}

export function isOciUrl(url: string): boolean {
  return /^oci:\/\//i.test(url);
}

/**
 * `oci://registry/repo` plus the chart name → the repository `repo/<chart>` on `registry`, as Flux's
 * HelmRepository type oci and Argo CD's OCI Helm sources compose them. Throws OciReferenceError
 * naming `field` for anything malformed.
 */
export function parseOciChartReference(repositoryUrl: string, chart: string, field: string): OciReference {
  if (!OCI_URL.test(repositoryUrl)) {
    throw new OciReferenceError(
      `${field}.repository ${JSON.stringify(repositoryUrl.slice(0, 200))} is not an oci:// repository location: ` +
        'write oci://<registry host[:port]>/<path>, with lower-case path components and no credentials, query or tag',
    );
  }
  if (!COMPONENT.test(chart)) {
    throw new OciReferenceError(
      `${field}.chart ${JSON.stringify(chart.slice(0, 200))} is not a valid OCI repository name component (lower-case letters, digits, . _ -)`,
    );
  }
  const rest = repositoryUrl.slice('oci://'.length).replace(/\/$/, '');
  const slash = rest.indexOf('/');
  const registry = (slash < 0 ? rest : rest.slice(0, slash)).toLowerCase();
  const path = slash < 0 ? '' : rest.slice(slash + 1);
  return { registry, repository: path === '' ? chart : `${path}/${chart}` };
}

export function isOciDigest(value: string): boolean {
  return DIGEST.test(value);
}

export function isOciTag(value: string): boolean {
  return TAG.test(value);
}

/**
 * How helm stores a chart version as a tag: `+` is not allowed in tags, helm writes `_`.
 * The tag of a version, and the version of a tag.
 */
export function tagOfVersion(version: string): string {
  return version.replace(/\+/g, '_');
}
export function versionOfTag(tag: string): string {
  return tag.replace(/_/g, '+');
}

export type TagPick = { ok: true; tag: string; version: string } | { ok: false; message: string };

/**
 * The tag a version request picks among a repository's tags, like helm: an exact version names its
 * tag; a semver range (or no version: `*`, stable releases only) picks the highest semver tag that
 * satisfies it. Tags that are not semver (`latest`, `main`, …) are never picked; the message says
 * how many were ignored when nothing matches. `what` names the chart for messages.
 */
export function pickOciTag(tags: readonly string[], requested: string, what: string, field: string): TagPick {
  const wanted = requested.trim();
  if (wanted !== '' && tags.includes(tagOfVersion(wanted)) && semver.valid(wanted) !== null) {
    return { ok: true, tag: tagOfVersion(wanted), version: wanted };
  }
  const range = semver.validRange(wanted === '' ? '*' : wanted);
  if (range === null) {
    return {
      ok: false,
      message: `${field}.version ${JSON.stringify(wanted)} is neither a version nor a semver range (e.g. "1.2.3", "~1.2", ">=1 <2")`,
    };
  }
  const versions = new Map<string, string>();
  let ignored = 0;
  for (const tag of tags) {
    const version = semver.valid(versionOfTag(tag));
    if (version === null) ignored++;
    else versions.set(version, tag);
  }
  const best = semver.maxSatisfying([...versions.keys()], range);
  if (best === null) {
    const newest = [...versions.keys()].sort(semver.rcompare).slice(0, 10);
    return {
      ok: false,
      message:
        `${what} has no tag matching ${JSON.stringify(wanted || '*')} (newest semver tags: ${newest.join(', ') || 'none'}` +
        `${ignored > 0 ? `; ${ignored} tag${ignored === 1 ? '' : 's'} that are not semver ignored` : ''}); push one or change ${field}.version`,
    };
  }
  return { ok: true, tag: versions.get(best)!, version: best };
}

/** A `WWW-Authenticate` challenge: its scheme (lower-cased) and parameters (keys lower-cased). */
export interface AuthChallenge {
  scheme: string;
  params: Record<string, string>;
}

/**
 * The challenges of a `WWW-Authenticate` header (RFC 9110 §11.6.1): `Bearer realm="…",service="…",
 * scope="…"`, `Basic realm="…"`, several separated by commas. Quoted strings may hold commas and
 * backslash escapes. Unparseable parts are skipped.
 */
export function parseWwwAuthenticate(header: string): AuthChallenge[] {
  const out: AuthChallenge[] = [];
  const n = header.length;
  let i = 0;
  const isTokenChar = (c: string | undefined) => c !== undefined && /[!#$%&'*+.^_`|~0-9A-Za-z-]/.test(c);
  const skip = (chars: string) => {
    while (i < n && chars.includes(header[i])) i++;
  };
  let current: AuthChallenge | undefined;
  while (i < n) {
    skip(' \t,');
    const start = i;
    while (isTokenChar(header[i])) i++;
    const name = header.slice(start, i);
    if (name === '') {
      i++;
      continue;
    }
    skip(' \t');
    if (header[i] === '=' && current !== undefined) {
      i++;
      skip(' \t');
      let value = '';
      if (header[i] === '"') {
        i++;
        while (i < n && header[i] !== '"') {
          if (header[i] === '\\' && i + 1 < n) i++;
          value += header[i];
          i++;
        }
        i++;
      } else {
        const vs = i;
        while (i < n && header[i] !== ',' && header[i] !== ' ') i++;
        value = header.slice(vs, i);
      }
      current.params[name.toLowerCase()] = value;
      continue;
    }
    current = { scheme: name.toLowerCase(), params: {} };
    out.push(current);
  }
  return out;
}

/**
 * The `next` URL of an RFC 8288 `Link` header (`<…/tags/list?n=100&last=x>; rel="next"`), resolved
 * against the request URL; undefined when there is none.
 */
export function nextLink(header: string | null | undefined, base: string): string | undefined {
  if (!header) return undefined;
  for (const part of header.split(/,(?=\s*<)/)) {
    const m = /^\s*<([^>]*)>(.*)$/.exec(part);
    if (!m) continue;
    if (/;\s*rel\s*=\s*"?(?:[^";]*\s)?next(?:\s[^";]*)?"?/i.test(m[2])) {
      try {
        return new URL(m[1], base).toString();
      } catch {
        return undefined;
      }
    }
  }
  return undefined;
}

export interface RegistryCredentials {
  username: string;
  password: string;
}

/** Why a docker config JSON gives no credentials; the message names keys, never values. */
export class DockerConfigError extends Error {
  override name = 'DockerConfigError';
}

/** The host of a docker config `auths` key: `https://index.docker.io/v1/`, `ghcr.io`, `host:5000`. */
function authsKeyHost(key: string): string {
  const trimmed = key.trim().toLowerCase();
  const withoutScheme = trimmed.replace(/^[a-z][a-z0-9+.-]*:\/\//, '');
  return withoutScheme.split('/')[0] ?? '';
}

/**
 * The username and password a `.dockerconfigjson` (type kubernetes.io/dockerconfigjson) holds for
 * `registry` (host[:port]): the `auths` entry whose key's host is the registry (`docker.io` also
 * matches `index.docker.io`), from its `auth` (base64 `user:password`) or `username`+`password`.
 * undefined when there is no entry for the registry. `what` names the Secret for messages.
 */
export function dockerConfigCredentials(
  json: string,
  registry: string,
  what: string,
): RegistryCredentials | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(json);
  } catch {
    throw new DockerConfigError(
      `${what}: .dockerconfigjson is not JSON; recreate it with kubectl create secret docker-registry`,
    );
  }
  const auths =
    typeof parsed === 'object' && parsed !== null ? (parsed as { auths?: unknown }).auths : undefined;
  if (typeof auths !== 'object' || auths === null) {
    throw new DockerConfigError(
      `${what}: .dockerconfigjson has no "auths" object; recreate it with kubectl create secret docker-registry`,
    );
  }
  const want = registry.toLowerCase();
  const aliases =
    want === 'docker.io' || want === 'index.docker.io' || want === 'registry-1.docker.io'
      ? ['docker.io', 'index.docker.io', 'registry-1.docker.io']
      : [want];
  for (const [key, entry] of Object.entries(auths as Record<string, unknown>)) {
    if (!aliases.includes(authsKeyHost(key))) continue;
    if (typeof entry !== 'object' || entry === null) continue;
    const e = entry as Record<string, unknown>;
    if (typeof e['username'] === 'string' && typeof e['password'] === 'string' && e['username'] !== '') {
      return { username: e['username'], password: e['password'] };
    }
    if (typeof e['auth'] === 'string' && e['auth'] !== '') {
      const decoded = decodeBase64(e['auth']);
      const colon = decoded.indexOf(':');
      if (colon <= 0)
        throw new DockerConfigError(
          `${what}: the "auth" of the ${JSON.stringify(key)} entry is not base64 of user:password`,
        );
      return { username: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
    }
    throw new DockerConfigError(
      `${what}: the ${JSON.stringify(key)} entry has neither "auth" nor "username" and "password"`,
    );
  }
  return undefined;
}

/** base64 → UTF-8 text without node:buffer (domain/ stays platform-free). */
function decodeBase64(text: string): string {
  let binary: string;
  try {
    binary = atob(text.trim());
  } catch {
    return '';
  }
  return new TextDecoder().decode(Uint8Array.from(binary, (c) => c.charCodeAt(0)));
}
