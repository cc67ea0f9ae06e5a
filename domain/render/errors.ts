/**
 * Errors raised while rendering a Release (parsing manifests, running helm / kustomize,
 * applying Mutations, ordering objects).
 *
 * - `RenderError` is transient as far as the reconcile is concerned: it maps to the `Applied`
 *   reason `DeployFailed` with `failure.stage: Rendering` and is retried with backoff (the source
 *   or a Mutation may be fixed by then).
 * - `UnsupportedRenderError` is terminal: the spec asks for something convoy does not implement
 *   (Jsonnet content, Helm `dependencyMode: Resolve`, StrategicMerge patches). It maps to the
 *   reason `Unsupported` and is not retried. It is deliberately NOT a `RenderError`, so a
 *   `catch (e) { if (e instanceof RenderError) … }` never retries it by accident.
 *
 * Messages name the file, document, object or Mutation involved and say what to do. They never
 * quote Secret data or Helm values.
 */

export interface RenderErrorDetails {
  /** The file (path relative to the rendered folder) or the command whose output was parsed. */
  file?: string;
  /**
   * Position of the YAML/JSON document in `file`, counting from 0 and including empty documents.
   * Messages say "document <docIndex + 1>".
   */
  docIndex?: number;
  /** 1-based line of the document (or of the syntax error) in `file`, when known. */
  line?: number;
  /** The object involved, as `Kind namespace/name` (or `Kind name` when cluster-scoped). */
  object?: string;
  /** The Mutation involved, by name. */
  mutation?: string;
  cause?: unknown;
}

export class RenderError extends Error {
  readonly retryable = true;
  readonly file: string | undefined;
  readonly docIndex: number | undefined;
  readonly line: number | undefined;
  readonly object: string | undefined;
  readonly mutation: string | undefined;

  constructor(message: string, details: RenderErrorDetails = {}) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause });
    this.name = 'RenderError';
    this.file = details.file;
    this.docIndex = details.docIndex;
    this.line = details.line;
    this.object = details.object;
    this.mutation = details.mutation;
  }
}

/** The unimplemented features `UnsupportedRenderError.feature` names. */
export type UnsupportedRenderFeature =
  'Jsonnet' | 'HelmDependencyResolve' | 'StrategicMergePatch' | 'SetBasedLabelSelector';

export class UnsupportedRenderError extends Error {
  readonly retryable = false;
  readonly feature: UnsupportedRenderFeature;
  /** The spec field the error is about, e.g. `spec.content.type`. */
  readonly field: string;
  readonly mutation: string | undefined;

  constructor(
    feature: UnsupportedRenderFeature,
    field: string,
    message: string,
    details: { mutation?: string } = {},
  ) {
    super(message);
    this.name = 'UnsupportedRenderError';
    this.feature = feature;
    this.field = field;
    this.mutation = details.mutation;
  }
}
