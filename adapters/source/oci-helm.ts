/**
 * Fetches a Helm chart from an OCI registry — spec.source.helm with an `oci://` repository, as
 * `helm push` stores charts (a manifest with a `application/vnd.cncf.helm.chart.content.v1.tar+gzip`
 * layer).
 *
 * Which artifact:
 * - `digest`: that manifest; no tag list, one manifest HEAD (also when the chart is cached: the
 *   registry, asked with this Release's credentials, decides whether it may have the artifact);
 * - an exact `version`: its tag (helm writes `+` as `_`), one manifest HEAD for the digest it names now;
 * - a semver range or no version: the tag list (paged), the highest matching semver tag (tags that
 *   are not semver are ignored), then one HEAD.
 * The chart is cached under `<cacheDir>/oci-sha256-<manifest hex>/` — keyed on the manifest digest,
 * so a moved tag (same tag, new digest) is a new download and a new render, and an unchanged tag
 * costs one HEAD. The manifest is checked against its digest and the layer against the manifest.
 *
 * convoy downloads the layer itself rather than running `helm pull` (docs/decisions.md "OCI chart
 * sources"): the render sandbox runs helm offline with no credentials, and one HTTP client keeps
 * every registry request under the same timeouts, size limits and error messages.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import {
  OciReferenceError,
  parseOciChartReference,
  pickOciTag,
  tagOfVersion,
  type RegistryCredentials,
} from '../../domain/source/oci.ts';
import { SourceNotReadyError, UnsupportedSourceError } from './errors.ts';
import { findChartDir, storeChartArchive } from './chart-archive.ts';
import type { HelmChartResult } from './helm-repo.ts';
import type { Egress } from '../egress/client.ts';
import { createOciClient, DOCKER_MANIFEST_LIST, OCI_INDEX, type OciClient } from './oci-registry.ts';
import { verifyCosignSignature } from './oci-cosign.ts';
import type { KeyObject } from 'node:crypto';
import { pathExists } from '../tools/path-exists.ts';
import semver from 'semver';

export const HELM_CHART_LAYER = 'application/vnd.cncf.helm.chart.content.v1.tar+gzip';
/** Old helm (3.0–3.7 experimental OCI) wrote this layer media type. */
const LEGACY_CHART_LAYER = 'application/tar+gzip';

export interface OciHelmInput {
  /** `oci://registry/path`. */
  repository: string;
  chart: string;
  /** Exact version or semver range; empty or undefined: the highest stable semver tag. */
  version?: string | undefined;
  /** `sha256:<hex>` of the chart's manifest; instead of a version. */
  digest?: string | undefined;
  credentials?: RegistryCredentials | undefined;
  plainHttp?: boolean;
  /** PEM CA bundle for the registry's TLS (spec certSecretRef, key ca.crt). */
  caPem?: string | undefined;
  /** Verify the chart manifest's cosign signature with this public key before anything is used (spec verify). */
  cosignKey?: KeyObject | undefined;
  field?: string;
}

export interface OciHelmOptions {
  /** Per-request timeout; default 30 s. */
  timeoutMs?: number;
  /** Largest chart layer accepted, in bytes (checked against the manifest before download); default 64 MiB. */
  maxChartBytes?: number;
  onRequest?: (method: string, path: string, status: number) => void;
  /** The egress client every request goes through (registry, token realm, redirects); default the strict policy. */
  egress?: Egress | undefined;
  /** Which `host[:port]` a redirect or token realm may reach over plain HTTP (CONVOY_INSECURE_REGISTRIES). */
  plainHttpAllowed?: ((host: string) => boolean) | undefined;
}

async function chartVersionIn(chartDir: string): Promise<string | undefined> {
  try {
    const parsed: unknown = parseYaml(await readFile(join(chartDir, 'Chart.yaml'), 'utf8'), {
      maxAliasCount: 16,
    });
    const version =
      typeof parsed === 'object' && parsed !== null ? (parsed as { version?: unknown }).version : undefined;
    return typeof version === 'string' ? version : undefined;
  } catch {
    return undefined;
  }
}

export async function fetchOciHelmChart(
  input: OciHelmInput,
  cacheDir: string,
  options: OciHelmOptions = {},
): Promise<HelmChartResult> {
  const field = input.field ?? 'spec.source.helm';
  const client = registryClient(input, options, field);
  const what = `chart ${input.chart} in ${client.location}`;
  const shownRepository = input.repository.replace(/\/$/, '');
  const { digest, version } = await resolveChartDigest(client, input, what, field);

  // Before the cache: a chart cached by another Release is served only once its signature verifies.
  if (input.cosignKey !== undefined) {
    await verifyCosignSignature(client, digest, input.cosignKey, { artifact: what, field });
  }

  const final = join(cacheDir, `oci-${digest.replace(':', '-')}`);
  const cachedTop = (await pathExists(final)) ? await findChartDir(final, input.chart) : undefined;
  if (cachedTop !== undefined) {
    const chartDir = join(final, cachedTop);
    return {
      chartDir,
      resolved: {
        repository: shownRepository,
        chart: input.chart,
        version: version ?? (await chartVersionIn(chartDir)) ?? '',
        digest,
      },
      cacheHit: true,
    };
  }

  const { archive, label, versionNow } = await downloadChartLayer(client, digest, {
    input,
    version,
    what,
    field,
    maxChartBytes: options.maxChartBytes,
  });
  await storeChartArchive(archive, final, cacheDir, {
    chart: input.chart,
    what: label,
    field,
    from: `${client.location}@${digest}`,
  });
  const top = (await findChartDir(final, input.chart))!;
  const chartDir = join(final, top);
  return {
    chartDir,
    resolved: {
      repository: shownRepository,
      chart: input.chart,
      version: versionNow ?? (await chartVersionIn(chartDir)) ?? '',
      digest,
    },
    cacheHit: false,
  };
}

/** The registry client of the chart's repository; a reference that is not an OCI chart location is UnsupportedSourceError. */
function registryClient(input: OciHelmInput, options: OciHelmOptions, field: string): OciClient {
  let ref;
  try {
    ref = parseOciChartReference(input.repository, input.chart, field);
  } catch (error) {
    if (error instanceof OciReferenceError)
      throw new UnsupportedSourceError(`${field}.repository`, error.message, { cause: error });
    throw error;
  }
  return createOciClient({
    registry: ref.registry,
    repository: ref.repository,
    plainHttp: input.plainHttp ?? false,
    credentials: input.credentials,
    field,
    ...(input.caPem !== undefined ? { caPem: input.caPem } : {}),
    ...(options.timeoutMs !== undefined ? { timeoutMs: options.timeoutMs } : {}),
    ...(options.onRequest ? { onRequest: options.onRequest } : {}),
    egress: options.egress,
    plainHttpAllowed: options.plainHttpAllowed,
  });
}

/**
 * The manifest digest to fetch and, unless a digest was given, the version it is: the digest
 * asked for, an exact version's tag, or the highest tag matching the range; one HEAD each.
 */
async function resolveChartDigest(
  client: OciClient,
  input: OciHelmInput,
  what: string,
  field: string,
): Promise<{ digest: string; version: string | undefined }> {
  if (input.digest !== undefined && input.digest !== '') {
    // One HEAD even for a digest: the registry decides, with the credentials this Release presents,
    // whether it may have that artifact. A chart another Release pulled with its credentials is in
    // the shared cache, and is served from it only after this check (docs/security.md).
    const named = await client.resolveDigest(input.digest);
    if (named === undefined) {
      throw new SourceNotReadyError(
        `${field}.digest`,
        `${client.location} has no manifest ${input.digest} (HTTP 404); push it or fix ${field}.digest (will retry)`,
      );
    }
    return { digest: input.digest, version: undefined };
  }
  const requested = (input.version ?? '').trim();
  let tag: string;
  let version: string | undefined;
  if (requested !== '' && semver.valid(requested) !== null) {
    // An exact version names its tag: no tag list.
    tag = tagOfVersion(requested);
    version = requested;
  } else {
    const pick = pickOciTag(await client.tags(), requested, what, field);
    if (!pick.ok) throw new SourceNotReadyError(`${field}.version`, pick.message);
    tag = pick.tag;
    version = pick.version;
  }
  const named = await client.resolveDigest(tag);
  if (named === undefined) {
    throw new SourceNotReadyError(
      `${field}.version`,
      `${what} has no tag ${tag} (HTTP 404); push version ${version} or change ${field}.version (will retry)`,
    );
  }
  return { digest: named, version };
}

/**
 * The chart layer of the manifest `digest`, downloaded once the manifest shows it is a Helm chart
 * within the size limit; with the version it is (asked for, or the manifest's annotation) and its label.
 */
async function downloadChartLayer(
  client: OciClient,
  digest: string,
  chart: {
    input: OciHelmInput;
    version: string | undefined;
    what: string;
    field: string;
    maxChartBytes: number | undefined;
  },
): Promise<{ archive: Buffer; label: string; versionNow: string | undefined }> {
  const { input, version, what, field } = chart;
  const { manifest, mediaType } = await client.manifest(digest);
  if (mediaType === OCI_INDEX || mediaType === DOCKER_MANIFEST_LIST) {
    throw new UnsupportedSourceError(
      `${field}.chart`,
      `${client.location}@${digest} is an image index (${mediaType}), not a Helm chart; push the chart with helm push and name its version or digest`,
    );
  }
  const layers = Array.isArray(manifest.layers) ? manifest.layers : [];
  const layer =
    layers.find((l) => l.mediaType === HELM_CHART_LAYER) ??
    layers.find((l) => l.mediaType === LEGACY_CHART_LAYER);
  if (
    layer === undefined ||
    typeof layer.digest !== 'string' ||
    !/^sha256:[0-9a-f]{64}$/.test(layer.digest)
  ) {
    const types = layers.map((l) => l.mediaType ?? '?').join(', ') || 'none';
    throw new UnsupportedSourceError(
      `${field}.chart`,
      `${client.location}@${digest} holds no Helm chart layer (${HELM_CHART_LAYER}); its layers are: ${types}. Is it a container image or another artifact?`,
    );
  }
  const limit = chart.maxChartBytes ?? 64 * 1024 * 1024;
  if (typeof layer.size === 'number' && layer.size > limit) {
    throw new UnsupportedSourceError(
      `${field}.chart`,
      `${what} is ${layer.size} bytes, over convoy's chart size limit of ${limit} bytes; nothing was downloaded`,
    );
  }
  const versionNow = version ?? manifest.annotations?.['org.opencontainers.image.version'];
  const label = `chart ${input.chart}${versionNow ? ` ${versionNow}` : ''}`;
  const archive = await client.blob(layer.digest, limit, `the layer of ${label}`);
  return { archive, label, versionNow };
}
