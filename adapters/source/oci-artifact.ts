/**
 * Fetches an OCI artifact holding manifests or a Kustomize folder — spec.source.oci — as
 * `flux push artifact` (config application/vnd.cncf.flux.config.v1+json, one layer
 * application/vnd.cncf.flux.content.v1.tar+gzip) and `oras push <ref> <folder>` (a layer
 * application/vnd.oci.image.layer.v1.tar+gzip) write it, and unpacks its content layer into a
 * folder the renderers read exactly as a Git checkout.
 *
 * Which artifact (the registry client is oci-registry.ts, shared with OCI Helm charts):
 * - `ref.digest`: that manifest; no tag list, one manifest HEAD — also when the content is cached:
 *   the registry, asked with this Release's credentials, decides whether it may have the artifact;
 * - `ref.tag`: one manifest HEAD for the digest the tag names now;
 * - `ref.semver`: the tag list (paged), the highest semver tag in range, then one HEAD.
 * The unpacked content is cached under `<cacheDir>/artifact-<manifest hex>-<layer selection>/`, so a
 * moved tag (new digest) is a new download and a new render, and an unchanged tag costs one HEAD.
 *
 * The content layer's size is read from the manifest and refused over the limit before download;
 * the download itself is bounded again and checked against the layer digest; the unpacked size is
 * bounded too. Unpacking is oci-artifact-extract.ts: every tar entry is checked before anything is
 * written (no `..`, no absolute name, no link out of the artifact, no special file).
 */
import { createHash, randomBytes, type KeyObject } from 'node:crypto';
import { mkdir, realpath, rename, rm, stat } from 'node:fs/promises';
import { isAbsolute, join, relative, sep } from 'node:path';
import {
  copiedLayerName,
  OciArtifactError,
  parseOciArtifactUrl,
  pickSemverTag,
  selectLayer,
  type ExtractStep,
  type LayerSelector,
} from '../../domain/source/oci-artifact.ts';
import type { RegistryCredentials } from '../../domain/source/oci.ts';
import { ArtifactContentError, planLayer, writeSteps } from './oci-artifact-extract.ts';
import { SourceNotReadyError, SourcePathError, UnsupportedSourceError } from './errors.ts';
import type { Egress } from '../egress/client.ts';
import {
  createOciClient,
  DOCKER_MANIFEST,
  DOCKER_MANIFEST_LIST,
  OCI_INDEX,
  OCI_MANIFEST,
  type OciClient,
} from './oci-registry.ts';
import { verifyCosignSignature } from './oci-cosign.ts';
import { pathExists } from '../tools/path-exists.ts';

/** The largest content layer accepted by default (compressed, as the manifest gives it). */
export const DEFAULT_MAX_ARTIFACT_BYTES = 64 * 1024 * 1024;
/** The unpacked content may be this many times the layer limit. */
const UNPACKED_FACTOR = 4;

export interface OciArtifactRef {
  tag?: string | undefined;
  semver?: string | undefined;
  digest?: string | undefined;
}

export interface OciArtifactInput {
  /** `oci://registry/repository`. */
  url: string;
  ref: OciArtifactRef;
  /** Folder inside the artifact to render; relative, no `..`; default `.`. */
  path?: string | undefined;
  layerSelector?: LayerSelector | undefined;
  credentials?: RegistryCredentials | undefined;
  /** PEM CA bundle the registry's certificate must chain to (spec certSecretRef); default the public trust store. */
  caPem?: string | undefined;
  /** Verify the manifest's cosign signature with this public key before anything is used (spec verify). */
  cosignKey?: KeyObject | undefined;
  plainHttp?: boolean;
  /** Spec prefix for messages; default `spec.source.oci`. */
  field?: string;
}

export interface OciArtifactOptions {
  /** Per-request timeout; default 30 s. */
  timeoutMs?: number | undefined;
  /** Largest content layer, in bytes, checked against the manifest before download; default 64 MiB. Unpacked: 4 times that. */
  maxArtifactBytes?: number | undefined;
  onRequest?: (method: string, path: string, status: number) => void;
  /** The egress client every request goes through (registry, token realm, redirects); default the strict policy. */
  egress?: Egress | undefined;
  /** Which `host[:port]` a redirect or token realm may reach over plain HTTP (CONVOY_INSECURE_REGISTRIES). */
  plainHttpAllowed?: ((host: string) => boolean) | undefined;
}

export interface OciArtifactResult {
  /** Absolute real path of `path` inside the unpacked artifact. */
  dir: string;
  /** Absolute real path of the unpacked artifact: the render sandbox's boundary. */
  root: string;
  resolved: { url: string; digest: string; tag?: string };
  cacheHit: boolean;
}

/**
 * The registry client names the fields of a chart source (`.repository`, `.chart`, `.version`,
 * `.digest`); an artifact's are `.url` and `.ref.*`. Same error class, same cause.
 */
function renamed(error: unknown, field: string): unknown {
  if (!(error instanceof SourceNotReadyError) && !(error instanceof UnsupportedSourceError)) return error;
  // Exactly these two classes: a subclass (SourcePathError, a verification error) carries its own meaning.
  if (error.constructor !== SourceNotReadyError && error.constructor !== UnsupportedSourceError) return error;
  const fix = (text: string) =>
    text
      .replaceAll(`${field}.repository and ${field}.chart`, `${field}.url`)
      .replaceAll(`${field}.repository`, `${field}.url`)
      .replaceAll(`${field}.chart`, `${field}.url`)
      .replaceAll(`${field}.version`, `${field}.ref`)
      .replaceAll(`${field}.digest`, `${field}.ref.digest`)
      .replaceAll('push the chart', 'push the artifact');
  const options = { cause: error.cause ?? error };
  return error instanceof SourceNotReadyError
    ? new SourceNotReadyError(fix(error.field), fix(error.message), options)
    : new UnsupportedSourceError(fix(error.field), fix(error.message), options);
}

async function asArtifact<T>(field: string, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    throw renamed(error, field);
  }
}

/** The digest the ref names now, and the tag it came from (none for a digest). */
async function resolveRef(
  client: OciClient,
  input: OciArtifactInput,
  field: string,
): Promise<{ digest: string; tag?: string }> {
  const { tag, semver, digest } = input.ref;
  if (digest !== undefined && digest !== '') {
    // One HEAD even for a digest: the registry decides, with this Release's credentials, whether
    // it may have the artifact (the unpacked content may be cached from another Release's pull).
    const named = await asArtifact(field, () => client.resolveDigest(digest));
    if (named === undefined) {
      throw new SourceNotReadyError(
        `${field}.ref.digest`,
        `${client.location} has no manifest ${digest} (HTTP 404); push it or fix ${field}.ref.digest (will retry)`,
      );
    }
    return { digest };
  }
  let chosen: string;
  if (semver !== undefined && semver !== '') {
    const pick = pickSemverTag(
      await asArtifact(field, () => client.tags()),
      semver,
      `artifact ${client.location}`,
      `${field}.ref.semver`,
    );
    if (!pick.ok) throw new SourceNotReadyError(`${field}.ref.semver`, pick.message);
    chosen = pick.tag;
  } else if (tag !== undefined && tag !== '') {
    chosen = tag;
  } else {
    throw new UnsupportedSourceError(
      `${field}.ref`,
      `${field}.ref names none of tag, semver or digest; set exactly one`,
    );
  }
  const named = await asArtifact(field, () => client.resolveDigest(chosen));
  if (named === undefined) {
    throw new SourceNotReadyError(
      `${field}.ref`,
      `artifact ${client.location} has no tag ${chosen} (HTTP 404); push it or change ${field}.ref (will retry)`,
    );
  }
  return { digest: named, tag: chosen };
}

/** `path` inside the unpacked artifact: a folder, reached without leaving it. */
async function folderInside(root: string, path: string, field: string, where: string): Promise<string> {
  let real: string;
  try {
    real = await realpath(join(root, path));
  } catch (error) {
    throw new SourceNotReadyError(
      `${field}.path`,
      `${field}.path "${path}" does not exist in ${where}; push an artifact that has it or fix ${field}.path`,
      { cause: error },
    );
  }
  const rel = relative(root, real);
  if (rel === '..' || rel.startsWith(`..${sep}`) || isAbsolute(rel)) {
    throw new SourcePathError(
      `${field}.path`,
      `${field}.path "${path}" resolves through a symbolic link to a location outside the artifact (${where})`,
    );
  }
  if (!(await stat(real)).isDirectory()) {
    throw new SourceNotReadyError(
      `${field}.path`,
      `${field}.path "${path}" is not a folder in ${where}; point ${field}.path at a folder`,
    );
  }
  return real;
}

/** A short, stable name for the layer selection (part of the cache key: another selection is another content). */
function selectionKey(selector: LayerSelector | undefined): string {
  if (selector?.mediaType === undefined && (selector?.operation ?? 'extract') === 'extract') return 'default';
  return createHash('sha256')
    .update(`${selector?.mediaType ?? ''}\n${selector?.operation ?? 'extract'}`)
    .digest('hex')
    .slice(0, 12);
}

/** The registry client for the artifact's `oci://` URL, with the Release's credentials and CA. */
function artifactClient(input: OciArtifactInput, options: OciArtifactOptions, field: string): OciClient {
  let reference;
  try {
    reference = parseOciArtifactUrl(input.url, field);
  } catch (error) {
    if (error instanceof OciArtifactError)
      throw new UnsupportedSourceError(`${field}.url`, error.message, { cause: error });
    throw error;
  }
  return createOciClient({
    registry: reference.registry,
    repository: reference.repository,
    plainHttp: input.plainHttp ?? false,
    credentials: input.credentials,
    ...(input.caPem !== undefined ? { caPem: input.caPem } : {}),
    field,
    ...(options.timeoutMs !== undefined ? { timeoutMs: options.timeoutMs } : {}),
    ...(options.onRequest ? { onRequest: options.onRequest } : {}),
    egress: options.egress,
    plainHttpAllowed: options.plainHttpAllowed,
  });
}

/** Which artifact is being read, for the steps after the ref is resolved. */
interface Resolved {
  client: OciClient;
  digest: string;
  tag: string | undefined;
  field: string;
  /** `host[:port]/repository@digest`, for messages. */
  where: string;
}

/**
 * What to write for the artifact: its manifest read, the content layer chosen and checked against
 * the size limit before download, then downloaded and planned (a tar's entries checked, or one copied file).
 */
async function planContent(
  at: Resolved,
  selector: LayerSelector | undefined,
  limit: number,
): Promise<ExtractStep[]> {
  const { client, digest, tag, field, where } = at;
  const { manifest, mediaType } = await asArtifact(field, () => client.manifest(digest));
  if (mediaType === OCI_INDEX || mediaType === DOCKER_MANIFEST_LIST) {
    throw new UnsupportedSourceError(
      `${field}.url`,
      `${where} is an image index (${mediaType}), not an artifact manifest; push the artifact with flux push artifact or oras push and name its tag or digest`,
    );
  }
  if (mediaType !== OCI_MANIFEST && mediaType !== DOCKER_MANIFEST) {
    throw new UnsupportedSourceError(
      `${field}.url`,
      `${where} is a manifest of media type ${mediaType || '(none)'}; convoy reads ${OCI_MANIFEST} (flux push artifact, oras push)`,
    );
  }
  const pick = selectLayer(Array.isArray(manifest.layers) ? manifest.layers : [], selector, where, field);
  if (!pick.ok) throw new UnsupportedSourceError(`${field}.layerSelector`, pick.message);
  if (typeof pick.layer.size === 'number' && pick.layer.size > limit) {
    throw new UnsupportedSourceError(
      `${field}.url`,
      `the content layer of ${where} is ${pick.layer.size} bytes, over convoy's artifact size limit of ${limit} bytes (CONVOY_OCI_MAX_ARTIFACT_BYTES); nothing was downloaded`,
    );
  }
  if (pick.operation === 'copy') {
    const name = copiedLayerName(pick.layer);
    if (!name.ok)
      throw new UnsupportedSourceError(
        `${field}.layerSelector`,
        `${where} layer ${pick.index}: ${name.message}`,
      );
    const bytes = await asArtifact(field, () =>
      client.blob(pick.layer.digest, limit, `the content layer of ${tag ?? digest}`),
    );
    return [{ op: 'file', path: name.name, data: bytes }];
  }
  const bytes = await asArtifact(field, () =>
    client.blob(pick.layer.digest, limit, `the content layer of ${tag ?? digest}`),
  );
  try {
    return planLayer(bytes, limit * UNPACKED_FACTOR);
  } catch (error) {
    if (error instanceof ArtifactContentError)
      throw new UnsupportedSourceError(`${field}.url`, `artifact ${where}: ${error.message}`, {
        cause: error,
      });
    throw error;
  }
}

/**
 * Writes the planned content in a private temporary folder of cacheDir and renames it to `final`,
 * so a half-written artifact is never in the cache.
 */
async function unpack(steps: ExtractStep[], cacheDir: string, final: string, at: Resolved): Promise<void> {
  const work = join(cacheDir, `.tmp-${randomBytes(8).toString('hex')}`);
  const content = join(work, 'content');
  try {
    await mkdir(content, { recursive: true });
    try {
      await writeSteps(steps, content);
    } catch (error) {
      if (error instanceof ArtifactContentError)
        throw new UnsupportedSourceError(
          `${at.field}.url`,
          `artifact ${at.where}: ${error.message}; nothing was kept`,
          { cause: error },
        );
      throw error;
    }
    try {
      await rename(content, final);
    } catch (error) {
      // Another reconcile unpacked the same artifact first: theirs is identical.
      const code = error instanceof Error && 'code' in error ? String(error.code) : '';
      if (code !== 'EEXIST' && code !== 'ENOTEMPTY') throw error;
    }
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

export async function fetchOciArtifact(
  input: OciArtifactInput,
  cacheDir: string,
  options: OciArtifactOptions = {},
): Promise<OciArtifactResult> {
  const field = input.field ?? 'spec.source.oci';
  const client = artifactClient(input, options, field);
  const path = input.path ?? '.';
  const { digest, tag } = await resolveRef(client, input, field);
  const resolved = { url: input.url, digest, ...(tag !== undefined ? { tag } : {}) };
  const where = `${client.location}@${digest}`;
  // Before the cache: content unpacked for another Release is served only once the signature verifies.
  if (input.cosignKey !== undefined) {
    await verifyCosignSignature(client, digest, input.cosignKey, {
      artifact: `artifact ${client.location}`,
      field,
    });
  }

  const final = join(
    cacheDir,
    `artifact-${digest.slice('sha256:'.length)}-${selectionKey(input.layerSelector)}`,
  );
  if (await pathExists(final)) {
    const root = await realpath(final);
    return { dir: await folderInside(root, path, field, where), root, resolved, cacheHit: true };
  }

  const at: Resolved = { client, digest, tag, field, where };
  const steps = await planContent(
    at,
    input.layerSelector,
    options.maxArtifactBytes ?? DEFAULT_MAX_ARTIFACT_BYTES,
  );
  await unpack(steps, cacheDir, final, at);
  const root = await realpath(final);
  return { dir: await folderInside(root, path, field, where), root, resolved, cacheHit: false };
}
