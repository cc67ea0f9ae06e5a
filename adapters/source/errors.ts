/**
 * Errors raised while fetching a Release's source (git repository, helm chart repository).
 *
 * - `SourceNotReadyError` is transient: the reconcile is retried with backoff (network trouble,
 *   authentication rejected, ref or chart version not published yet, ...).
 * - `UnsupportedSourceError` is terminal: the spec asks for something convoy does not do
 *   (ssh URLs, semver git refs, oci:// chart repositories, ...). Retrying cannot help; the user
 *   has to change the spec. It maps to the `Unsupported` reason.
 * - `SourcePathError` (an `UnsupportedSourceError`) is a `path` that would leave the checkout.
 *
 * Messages name the spec field and say what to do. They never contain credentials: URLs are
 * passed through `redactUrl` before they are put in a message.
 */

export class SourceNotReadyError extends Error {
  /** The spec field the error is about, e.g. `spec.source.git.ref.branch`. */
  readonly field: string;
  readonly retryable = true;

  constructor(field: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'SourceNotReadyError';
    this.field = field;
  }
}

export class UnsupportedSourceError extends Error {
  /** The spec field the error is about, e.g. `spec.source.git.ref.semver`. */
  readonly field: string;
  readonly retryable = false;

  constructor(field: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'UnsupportedSourceError';
    this.field = field;
  }
}

/**
 * The artifact's signature does not verify (missing, another key, another digest): Applied False
 * with reason SourceNotReady, but not retried with backoff — retrying cannot fix a signature. The
 * next reconcile (a spec change, the interval, a convoy sync) verifies again, so a signed push or a
 * fixed key heals it. Nothing of the artifact is rendered.
 */
export class SourceVerificationError extends Error {
  readonly field: string;
  readonly retryable = false;
  /** Read by domain/reconcile/stops.ts (isUnverified): SourceNotReady rather than Unsupported. */
  readonly unverified = true;

  constructor(field: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'SourceVerificationError';
    this.field = field;
  }
}

/** `path` is absolute, contains `..`, or resolves (through symlinks) outside the checkout. Terminal. */
export class SourcePathError extends UnsupportedSourceError {
  constructor(field: string, message: string, options?: { cause?: unknown }) {
    super(field, message, options);
    this.name = 'SourcePathError';
  }
}

/**
 * The URL without user info, query and fragment (which may carry tokens), for messages and
 * status. Unparseable input is replaced by a placeholder rather than echoed.
 */
export function redactUrl(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    // scp-like git addresses (git@host:org/repo.git) are not URLs; keep host and path only.
    const scp = /^(?:[^@/\s]+@)?([^:/\s]+):(.*)$/.exec(url);
    return scp ? `${scp[1]}:${scp[2]}` : '<unparseable URL>';
  }
  parsed.username = '';
  parsed.password = '';
  parsed.search = '';
  parsed.hash = '';
  return parsed.toString();
}
