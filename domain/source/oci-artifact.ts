/**
 * The pure parts of the `oci` source kind (spec.source.oci): manifests and Kustomize folders
 * stored as OCI artifacts, as `flux push artifact` and ORAS write them. The `oci://` location of
 * the artifact's repository, which tag a semver range picks, which layer of the manifest is the
 * content, and the plan of a safe extraction of that layer's tar entries. No network, no fs.
 */
import semver from 'semver';
import { linkTargetProblem, relativePathProblem } from '../render/path-safety.ts';
import type { TarEntry } from '../render/tar-entries.ts';
import { OCI_NAME_COMPONENT, type OciReference } from './oci.ts';

/** What `flux push artifact` writes: the config and the content layer (a tar+gzip of the folder). */
export const FLUX_CONFIG_MEDIA_TYPE = 'application/vnd.cncf.flux.config.v1+json';
export const FLUX_CONTENT_MEDIA_TYPE = 'application/vnd.cncf.flux.content.v1.tar+gzip';
/** What `oras push <ref> <folder>` writes for a folder (with the annotation io.deis.oras.content.unpack). */
export const OCI_LAYER_TAR_GZIP = 'application/vnd.oci.image.layer.v1.tar+gzip';
/** The Docker spelling of a gzipped tar layer. */
export const DOCKER_LAYER_TAR_GZIP = 'application/vnd.docker.image.rootfs.diff.tar.gzip';
/** A Helm chart's layer: such an artifact belongs in spec.source.helm. */
const HELM_CHART_LAYER = 'application/vnd.cncf.helm.chart.content.v1.tar+gzip';
/** The file name ORAS records for each layer. */
export const TITLE_ANNOTATION = 'org.opencontainers.image.title';

/** Layer media types extracted without a layerSelector, in order of preference. */
export const DEFAULT_CONTENT_MEDIA_TYPES = [
  FLUX_CONTENT_MEDIA_TYPE,
  OCI_LAYER_TAR_GZIP,
  DOCKER_LAYER_TAR_GZIP,
] as const;

const HOST =
  '[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)*(?::[0-9]{1,5})?';
/**
 * `oci://<registry host[:port]>/<repository>`: at least one lower-case repository component, no
 * credentials, query, tag or digest. The CRD checks the same expression (domain/api/release-spec.ts).
 */
export const OCI_ARTIFACT_URL_PATTERN = `^oci://${HOST}(?:/${OCI_NAME_COMPONENT})+$`;
const ARTIFACT_URL = new RegExp(OCI_ARTIFACT_URL_PATTERN);

export class OciArtifactError extends Error {
  override name = 'OciArtifactError';
}

/** `oci://host:5000/org/app` → registry `host:5000`, repository `org/app`. Throws OciArtifactError naming `field`. */
export function parseOciArtifactUrl(url: string, field: string): OciReference {
  if (!ARTIFACT_URL.test(url)) {
    throw new OciArtifactError(
      `${field}.url ${JSON.stringify(url.slice(0, 200))} is not an OCI artifact location: write ` +
        'oci://<registry host[:port]>/<repository>, with lower-case path components and no credentials, query, tag or digest',
    );
  }
  const rest = url.slice('oci://'.length);
  const slash = rest.indexOf('/');
  return { registry: rest.slice(0, slash).toLowerCase(), repository: rest.slice(slash + 1) };
}

export type ArtifactTagPick = { ok: true; tag: string } | { ok: false; message: string };

/**
 * The tag a semver range picks among a repository's tags, like Flux's OCIRepository
 * `ref.semver`: the highest tag that is a semver version (a leading `v` is allowed) and satisfies
 * the range; pre-releases only when the range names one. Other tags (`latest`, `main`) are ignored.
 */
export function pickSemverTag(
  tags: readonly string[],
  range: string,
  what: string,
  field: string,
): ArtifactTagPick {
  const valid = semver.validRange(range.trim());
  if (valid === null) {
    return {
      ok: false,
      message: `${field} ${JSON.stringify(range)} is not a semver range (e.g. "1.2.x", "~1.2", ">=1 <2")`,
    };
  }
  const versions = new Map<string, string>();
  let ignored = 0;
  for (const tag of tags) {
    const version = semver.valid(tag);
    if (version === null) {
      ignored++;
      continue;
    }
    // Two tags for one version (1.0.0 and v1.0.0): the plain one, as the registry lists it first alphabetically.
    const known = versions.get(version);
    if (known === undefined || tag < known) versions.set(version, tag);
  }
  const best = semver.maxSatisfying([...versions.keys()], valid);
  if (best === null) {
    const newest = [...versions.keys()].sort(semver.rcompare).slice(0, 10);
    return {
      ok: false,
      message:
        `${what} has no tag matching ${JSON.stringify(range)} (newest semver tags: ${newest.join(', ') || 'none'}` +
        `${ignored > 0 ? `; ${ignored} tag${ignored === 1 ? '' : 's'} that are not semver ignored` : ''}); push one or change ${field}`,
    };
  }
  return { ok: true, tag: versions.get(best)! };
}

export interface LayerDescriptor {
  mediaType?: string | undefined;
  digest?: string | undefined;
  size?: number | undefined;
  annotations?: Record<string, string> | undefined;
}

export interface LayerSelector {
  mediaType?: string | undefined;
  operation?: 'extract' | 'copy' | undefined;
}

export type LayerPick =
  | { ok: true; index: number; layer: LayerDescriptor & { digest: string }; operation: 'extract' | 'copy' }
  | { ok: false; message: string };

/**
 * The layer that holds the content: with `selector.mediaType`, the first layer of that media type;
 * without, the first of DEFAULT_CONTENT_MEDIA_TYPES (Flux's content layer first, then ORAS's folder
 * layer). `where` names the artifact (`host/repo@sha256:…`) and `field` the spec field for messages,
 * which list the media types found.
 */
export function selectLayer(
  layers: readonly LayerDescriptor[],
  selector: LayerSelector | undefined,
  where: string,
  field: string,
): LayerPick {
  const operation = selector?.operation ?? 'extract';
  const found = layers.map((l) => l.mediaType ?? '(none)');
  const listed = found.length === 0 ? 'no layers' : `layers of media type ${[...new Set(found)].join(', ')}`;
  let index = -1;
  if (selector?.mediaType !== undefined) {
    index = layers.findIndex((l) => l.mediaType === selector.mediaType);
    if (index < 0) {
      return {
        ok: false,
        message: `${where} has no layer of media type ${selector.mediaType} (${field}.layerSelector.mediaType); it has ${listed}`,
      };
    }
  } else {
    for (const type of DEFAULT_CONTENT_MEDIA_TYPES) {
      index = layers.findIndex((l) => l.mediaType === type);
      if (index >= 0) break;
    }
    if (index < 0) {
      const hint = found.includes(HELM_CHART_LAYER)
        ? '; it is a Helm chart: use spec.source.helm with its oci:// repository'
        : `; name the content layer in ${field}.layerSelector.mediaType`;
      return {
        ok: false,
        message: `${where} has no content layer (${DEFAULT_CONTENT_MEDIA_TYPES.join(' or ')}); it has ${listed}${hint}`,
      };
    }
  }
  const layer = layers[index];
  if (layer === undefined) return { ok: false, message: `${where} has no layer ${index}` };
  if (typeof layer.digest !== 'string' || !/^sha256:[0-9a-f]{64}$/.test(layer.digest)) {
    return {
      ok: false,
      message: `${where}: layer ${index} has no sha256 digest; convoy reads only sha256 layers`,
    };
  }
  return { ok: true, index, layer: { ...layer, digest: layer.digest }, operation };
}

/**
 * The file name a copied layer gets: its `org.opencontainers.image.title` annotation (ORAS writes
 * the pushed file's name there), a relative path without `..`. undefined with the reason otherwise.
 */
export function copiedLayerName(
  layer: LayerDescriptor,
): { ok: true; name: string } | { ok: false; message: string } {
  const title = layer.annotations?.[TITLE_ANNOTATION];
  if (title === undefined || title === '') {
    return {
      ok: false,
      message: `the layer has no ${TITLE_ANNOTATION} annotation, so convoy does not know the file name to copy it to (oras push writes it)`,
    };
  }
  const why = relativePathProblem(title);
  if (why !== undefined)
    return {
      ok: false,
      message: `the layer's ${TITLE_ANNOTATION} ${JSON.stringify(title.slice(0, 200))} ${why}`,
    };
  return {
    ok: true,
    name: title
      .split('/')
      .filter((s) => s !== '' && s !== '.')
      .join('/'),
  };
}

/** One step of an extraction, in the order it is carried out; every path is relative to the artifact's root. */
export type ExtractStep =
  | { op: 'dir'; path: string }
  | { op: 'file'; path: string; data: Uint8Array }
  | { op: 'symlink'; path: string; target: string };

export type ExtractPlan =
  { ok: true; steps: ExtractStep[]; bytes: number } | { ok: false; entry: string; why: string };

function shownName(name: string): string {
  return JSON.stringify(name.length > 200 ? `${name.slice(0, 200)}…` : name);
}

/**
 * Checks every entry of a content layer before anything is written, and plans the extraction:
 * - every name is relative, without `..`, NUL or a drive letter (`./` prefixes and the `.` root
 *   entry are fine: `tar -C dir .` writes them);
 * - a symbolic link's target is relative and, resolved from the link's folder, stays inside the
 *   artifact (the rule of Git checkouts, domain/render/path-safety.ts); links are created last, and
 *   no entry may lie below a link, so nothing is ever written through one;
 * - a hard link names a regular file earlier in the archive and becomes a copy of it (a file with
 *   two names is refused by the render sandbox); any other hard link is refused;
 * - devices, FIFOs and other special entries are refused; a path written twice is refused;
 * - regular files add up to at most `maxBytes`.
 * The first refusal names the entry and why; nothing of a refused archive is written.
 */
export function planExtraction(entries: readonly TarEntry[], maxBytes: number): ExtractPlan {
  const steps: ExtractStep[] = [];
  const links: ExtractStep[] = [];
  const files = new Map<string, Uint8Array>();
  const kinds = new Map<string, 'dir' | 'file' | 'symlink'>();
  let bytes = 0;
  const refuse = (name: string, why: string): ExtractPlan => ({ ok: false, entry: shownName(name), why });

  for (const entry of entries) {
    const segments = entry.name.split('/').filter((s) => s !== '' && s !== '.');
    if (segments.length === 0 && entry.type === 'directory' && !entry.name.startsWith('/')) continue; // the root itself
    const problem = relativePathProblem(entry.name);
    if (problem !== undefined) return refuse(entry.name, problem);
    const path = segments.join('/');
    for (let i = 1; i < segments.length; i++) {
      const above = segments.slice(0, i).join('/');
      const kind = kinds.get(above);
      if (kind === 'symlink')
        return refuse(
          entry.name,
          `lies below the symbolic link ${shownName(above)} (convoy never writes through a link)`,
        );
      if (kind === 'file') return refuse(entry.name, `lies below the file ${shownName(above)}`);
    }
    // Folders a file implies, even without entries of their own: a later link there is a conflict.
    for (let i = 1; i < segments.length; i++) {
      const above = segments.slice(0, i).join('/');
      if (!kinds.has(above)) kinds.set(above, 'dir');
    }
    const before = kinds.get(path);
    if (before !== undefined && !(before === 'dir' && entry.type === 'directory')) {
      return refuse(entry.name, 'appears twice in the archive');
    }
    switch (entry.type) {
      case 'directory':
        kinds.set(path, 'dir');
        steps.push({ op: 'dir', path });
        break;
      case 'file':
        bytes += entry.data.length;
        if (bytes > maxBytes)
          return refuse(entry.name, `takes the unpacked artifact over convoy's limit of ${maxBytes} bytes`);
        kinds.set(path, 'file');
        files.set(path, entry.data);
        steps.push({ op: 'file', path, data: entry.data });
        break;
      case 'symlink': {
        const target = entry.linkName ?? '';
        const why = linkTargetProblem(path, target);
        if (why !== undefined)
          return refuse(entry.name, why.replace('the repository checkout', 'the artifact'));
        kinds.set(path, 'symlink');
        links.push({ op: 'symlink', path, target });
        break;
      }
      case 'hardlink': {
        const target = entry.linkName ?? '';
        const targetProblem = relativePathProblem(target);
        if (targetProblem !== undefined)
          return refuse(entry.name, `is a hard link whose target ${targetProblem}, outside the artifact`);
        const data = files.get(
          target
            .split('/')
            .filter((s) => s !== '' && s !== '.')
            .join('/'),
        );
        if (data === undefined)
          return refuse(
            entry.name,
            'is a hard link to a file that is not an earlier regular file of the archive',
          );
        bytes += data.length;
        if (bytes > maxBytes)
          return refuse(entry.name, `takes the unpacked artifact over convoy's limit of ${maxBytes} bytes`);
        kinds.set(path, 'file');
        files.set(path, data);
        steps.push({ op: 'file', path, data });
        break;
      }
      default:
        return refuse(
          entry.name,
          'is not a regular file, folder or link (a device, FIFO or other special entry)',
        );
    }
  }
  return { ok: true, steps: [...steps, ...links], bytes };
}
