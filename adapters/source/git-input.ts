// What a Git source's spec fields mean before anything is fetched: the URL (http(s) only, with
// any credentials it embeds taken out), exactly one ref (no semver), and a path that stays inside
// the repository. Each refusal names the field.
import { isAbsolute } from 'node:path';
import { redactUrl, SourcePathError, UnsupportedSourceError } from './errors.ts';

export type GitAuth = { username: string; password: string } | { bearerToken: string };

export interface GitRef {
  branch?: string;
  tag?: string;
  commit?: string;
  semver?: string;
}

export type RefKind = 'branch' | 'tag' | 'commit';

const SHA1 = /^[0-9a-f]{40}$/;

export function describeRef(kind: RefKind, name: string): string {
  return kind === 'commit' ? `commit ${name}` : `${kind} "${name}"`;
}

/** http(s) URL without credentials, plus credentials embedded in it (if any). */
export function parseUrl(url: string, field: string): { url: string; embedded: GitAuth | undefined } {
  const unsupported = (what: string) =>
    new UnsupportedSourceError(
      `${field}.url`,
      `${field}.url ${JSON.stringify(redactUrl(url))} ${what}; convoy fetches git over http(s) only: ` +
        `use the https:// URL of the repository, with ${field}.secretRef holding username+password or bearerToken`,
    );
  if (/^[^/:@\s]+@[^/:\s]+:/.test(url) || /^ssh:\/\//i.test(url) || /^git\+ssh:\/\//i.test(url)) {
    throw unsupported('is an SSH address');
  }
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw unsupported('is not a URL');
  }
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') {
    throw unsupported(`uses the ${parsed.protocol.replace(/:$/, '')} scheme`);
  }
  let embedded: GitAuth | undefined;
  if (parsed.username || parsed.password) {
    embedded = {
      username: decodeURIComponent(parsed.username),
      password: decodeURIComponent(parsed.password),
    };
    parsed.username = '';
    parsed.password = '';
  }
  return { url: parsed.toString().replace(/\/+$/, ''), embedded };
}

export function parseRef(ref: GitRef, field: string): { kind: RefKind; name: string } {
  const set = (['branch', 'tag', 'commit', 'semver'] as const).filter(
    (k) => ref[k] !== undefined && ref[k] !== '',
  );
  if (set.length !== 1) {
    throw new UnsupportedSourceError(
      `${field}.ref`,
      `${field}.ref must set exactly one of branch, tag, commit, semver (found ${set.length === 0 ? 'none' : set.join(', ')})`,
    );
  }
  const kind = set[0];
  if (kind === 'semver') {
    throw new UnsupportedSourceError(
      `${field}.ref.semver`,
      `${field}.ref.semver is not supported: convoy does not pick git tags by semver range; ` +
        `set ${field}.ref.tag to a tag instead (semver ranges are supported for helm repository sources)`,
    );
  }
  const name = ref[kind]!;
  if (kind === 'commit' && !SHA1.test(name.toLowerCase())) {
    throw new UnsupportedSourceError(
      `${field}.ref.commit`,
      `${field}.ref.commit ${JSON.stringify(name)} is not a full 40-character SHA-1 commit id; use the full id`,
    );
  }
  return { kind, name: kind === 'commit' ? name.toLowerCase() : name };
}

/** Checks `path` without touching the disk: relative, no `..` segment. Returns it normalized. */
export function checkPathSyntax(path: string | undefined, field: string): string {
  const value = path === undefined || path === '' ? '.' : path;
  const bad = (why: string) =>
    new SourcePathError(
      `${field}.path`,
      `${field}.path ${JSON.stringify(value)} ${why}; use a path relative to the repository root without ".." segments`,
    );
  if (value.includes('\0')) throw bad('contains a NUL character');
  if (isAbsolute(value) || /^[a-zA-Z]:[\\/]/.test(value) || value.startsWith('\\')) throw bad('is absolute');
  const segments = value.split(/[\\/]+/);
  if (segments.includes('..')) throw bad('contains a ".." segment');
  return segments.filter((s) => s !== '' && s !== '.').join('/') || '.';
}
