/**
 * Fetches a chart from a Helm chart repository (an `index.yaml` repository over http(s)) — the
 * spec.source.helm source.
 *
 * GET <repository>/index.yaml, pick the highest version that satisfies `version` (an exact version or
 * a semver range; pre-releases only when the range names one, like helm), download its .tgz (URL
 * relative to the repository or absolute), verify the index digest when it has one, and extract the
 * chart into `<cacheDir>/sha256-<hex>/<chart>/`. When the index gives the digest and that directory
 * exists, nothing is downloaded.
 *
 * Credentials (basic or bearer) are sent to the repository's origin only, never to a chart URL on
 * another host (helm's default without --pass-credentials), nor across a redirect to another origin.
 * Every request goes through the egress client (adapters/egress/client.ts): the egress policy, and
 * redirects to the same scheme or HTTPS only. A failure names the URL and the class of failure,
 * never the server's own text.
 *
 * `oci://` repositories are read by oci-helm.ts (the source port dispatches on the scheme); given here
 * they are UnsupportedSourceError. Everything that a retry or a new publication can fix → SourceNotReadyError.
 */
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import type { ReadableStream } from 'node:stream/web';
import { parse as parseYaml } from 'yaml';
import { STRICT_EGRESS } from '../../domain/egress/policy.ts';
import { createEgress, type Egress } from '../egress/client.ts';
import { describeFailure } from '../egress/errors.ts';
import { findChartDir, storeChartArchive } from './chart-archive.ts';
import { redactUrl, SourceNotReadyError, UnsupportedSourceError } from './errors.ts';
import { pickVersion, type IndexEntry } from './helm-versions.ts';
import { pathExists } from '../tools/path-exists.ts';

export type HelmAuth = { username: string; password: string } | { bearerToken: string };

export interface HelmChartInput {
  /** `https://charts.example.com` (index.yaml repository); `oci://…` goes to oci-helm.ts. */
  repository: string;
  chart: string;
  /** Exact version or semver range; empty means the newest stable version. */
  version?: string;
  auth?: HelmAuth;
  /** Spec prefix for messages; default `spec.source.helm`. */
  field?: string;
}

export interface HelmChartResult {
  /** Absolute path of the extracted chart (the directory holding Chart.yaml). */
  chartDir: string;
  resolved: {
    /** The repository URL without credentials. */
    repository: string;
    chart: string;
    version: string;
    /** `sha256:<hex>` of the chart archive. */
    digest: string;
  };
  /** True when the chart came from the cache (index.yaml was still read). */
  cacheHit: boolean;
}

export interface HelmChartOptions {
  /** Per-request timeout; default 60 s. */
  timeoutMs?: number;
  /** Largest index.yaml / chart archive accepted, in bytes; default 128 MiB / 64 MiB. */
  maxIndexBytes?: number;
  maxChartBytes?: number;
  /** The egress client every request goes through; default one with the strict policy (public addresses only). */
  egress?: Egress | undefined;
}

const SHA256_HEX = /^[0-9a-f]{64}$/;

function parseRepository(
  repository: string,
  field: string,
): { base: string; embedded: HelmAuth | undefined } {
  if (/^oci:\/\//i.test(repository)) {
    throw new UnsupportedSourceError(
      `${field}.repository`,
      `${field}.repository ${JSON.stringify(redactUrl(repository))} is an OCI registry, not an index.yaml chart repository: ` +
        'oci:// charts are fetched by fetchOciHelmChart (adapters/source/oci-helm.ts)',
    );
  }
  let url: URL;
  try {
    url = new URL(repository);
  } catch {
    throw new UnsupportedSourceError(
      `${field}.repository`,
      `${field}.repository ${JSON.stringify(redactUrl(repository))} is not a URL; use the https:// URL of a chart repository`,
    );
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw new UnsupportedSourceError(
      `${field}.repository`,
      `${field}.repository uses the ${url.protocol.replace(/:$/, '')} scheme; use an http(s) chart repository URL`,
    );
  }
  let embedded: HelmAuth | undefined;
  if (url.username || url.password) {
    embedded = { username: decodeURIComponent(url.username), password: decodeURIComponent(url.password) };
    url.username = '';
    url.password = '';
  }
  return { base: url.toString().replace(/\/+$/, ''), embedded };
}

function authHeader(auth: HelmAuth | undefined): Record<string, string> {
  if (!auth) return {};
  if ('bearerToken' in auth) return { authorization: `Bearer ${auth.bearerToken}` };
  return { authorization: `Basic ${Buffer.from(`${auth.username}:${auth.password}`).toString('base64')}` };
}

async function download(
  egress: Egress,
  url: string,
  headers: Record<string, string>,
  limit: number,
  timeoutMs: number,
  what: string,
  field: string,
): Promise<Buffer> {
  const shown = redactUrl(url);
  let response: Response;
  try {
    response = await egress.fetch(url, { headers, signal: AbortSignal.timeout(timeoutMs) });
  } catch (err) {
    throw new SourceNotReadyError(
      `${field}.repository`,
      `cannot download ${what} from ${shown}: ${describeFailure(err)}; will retry`,
      { cause: err },
    );
  }
  if (!response.ok) {
    await response.body?.cancel();
    if (response.status === 401 || response.status === 403) {
      throw new SourceNotReadyError(
        `${field}.secretRef`,
        `chart repository refused ${what} at ${shown} (HTTP ${response.status}): credentials are missing or wrong; ` +
          `check the username+password or bearerToken of ${field}.secretRef`,
      );
    }
    throw new SourceNotReadyError(
      `${field}.repository`,
      `${what} at ${shown} answered HTTP ${response.status}; check ${field}.repository (will retry)`,
    );
  }
  const declared = Number(response.headers.get('content-length') ?? '0');
  if (declared > limit) {
    await response.body?.cancel();
    throw new SourceNotReadyError(`${field}.repository`, `${what} at ${shown} is larger than ${limit} bytes`);
  }
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    const reader = (response.body as ReadableStream<Uint8Array> | null)?.getReader();
    for (;;) {
      if (!reader) break;
      const { done, value } = await reader.read();
      if (done) break;
      size += value.byteLength;
      if (size > limit) {
        await reader.cancel();
        throw new SourceNotReadyError(
          `${field}.repository`,
          `${what} at ${shown} is larger than ${limit} bytes`,
        );
      }
      chunks.push(Buffer.from(value));
    }
  } catch (err) {
    if (err instanceof SourceNotReadyError) throw err;
    throw new SourceNotReadyError(
      `${field}.repository`,
      `downloading ${what} from ${shown} failed (${describeFailure(err)}); will retry`,
      { cause: err },
    );
  }
  return Buffer.concat(chunks);
}

export async function fetchHelmChart(
  input: HelmChartInput,
  cacheDir: string,
  options: HelmChartOptions = {},
): Promise<HelmChartResult> {
  const field = input.field ?? 'spec.source.helm';
  const timeoutMs = options.timeoutMs ?? 60_000;
  const egress = options.egress ?? createEgress(STRICT_EGRESS);
  const { base, embedded } = parseRepository(input.repository, field);
  const auth = input.auth ?? embedded;
  const repoOrigin = new URL(base).origin;
  const requested = (input.version ?? '').trim();
  const indexUrl = `${base}/index.yaml`;

  const entries = await chartEntries(egress, indexUrl, input.chart, {
    headers: authHeader(auth),
    limit: options.maxIndexBytes ?? 128 * 1024 * 1024,
    timeoutMs,
    field,
  });
  const { entry, version } = pickVersion(entries, requested, input.chart, indexUrl, field);
  const what = `chart ${input.chart} ${version}`;

  const indexDigest =
    typeof entry.digest === 'string' && SHA256_HEX.test(entry.digest.replace(/^sha256:/, '').toLowerCase())
      ? entry.digest.replace(/^sha256:/, '').toLowerCase()
      : undefined;
  const resolvedBase = { repository: redactUrl(base), chart: input.chart, version };

  // Cache hit: the index names the digest and the chart is already extracted.
  if (indexDigest) {
    const cached = join(cacheDir, `sha256-${indexDigest}`);
    const top = (await pathExists(cached)) ? await findChartDir(cached, input.chart) : undefined;
    if (top !== undefined) {
      return {
        chartDir: join(cached, top),
        resolved: { ...resolvedBase, digest: `sha256:${indexDigest}` },
        cacheHit: true,
      };
    }
  }

  const chartUrl = chartUrlOf(entry, base, { what, field, indexUrl });
  const archive = await download(
    egress,
    chartUrl.toString(),
    chartUrl.origin === repoOrigin ? authHeader(auth) : {},
    options.maxChartBytes ?? 64 * 1024 * 1024,
    timeoutMs,
    what,
    field,
  );
  const digest = createHash('sha256').update(archive).digest('hex');
  if (indexDigest && indexDigest !== digest) {
    throw new SourceNotReadyError(
      `${field}.chart`,
      `${what} downloaded from ${redactUrl(chartUrl.toString())} has digest sha256:${digest}, but the index says ` +
        `sha256:${indexDigest}; the repository may be mid-update (will retry)`,
    );
  }

  const final = await storeChartArchive(archive, join(cacheDir, `sha256-${digest}`), cacheDir, {
    chart: input.chart,
    what,
    field,
    from: redactUrl(chartUrl.toString()),
  });
  const top = (await findChartDir(final, input.chart))!;
  return {
    chartDir: join(final, top),
    resolved: { ...resolvedBase, digest: `sha256:${digest}` },
    cacheHit: false,
  };
}

/** The repository's index.yaml downloaded and parsed, and its entries of `chart` (one at least). */
async function chartEntries(
  egress: Egress,
  indexUrl: string,
  chart: string,
  request: { headers: Record<string, string>; limit: number; timeoutMs: number; field: string },
): Promise<IndexEntry[]> {
  const { field } = request;
  const indexBytes = await download(
    egress,
    indexUrl,
    request.headers,
    request.limit,
    request.timeoutMs,
    'index.yaml',
    field,
  );
  let index: unknown;
  try {
    index = parseYaml(indexBytes.toString('utf8'), { maxAliasCount: 16, prettyErrors: false });
  } catch (err) {
    throw new SourceNotReadyError(
      `${field}.repository`,
      `${redactUrl(indexUrl)} is not a valid helm repository index (YAML parse error); check ${field}.repository`,
      { cause: err },
    );
  }
  const entriesByChart =
    typeof index === 'object' && index !== null && 'entries' in index ? index.entries : undefined;
  const entries =
    typeof entriesByChart === 'object' && entriesByChart !== null
      ? (entriesByChart as Record<string, unknown>)[chart]
      : undefined;
  if (!Array.isArray(entries) || entries.length === 0) {
    throw new SourceNotReadyError(
      `${field}.chart`,
      `chart "${chart}" is not in ${redactUrl(indexUrl)}; publish it or fix ${field}.chart`,
    );
  }
  return entries as IndexEntry[];
}

/** The entry's first download URL (relative to the repository or absolute); http(s) only. */
function chartUrlOf(
  entry: IndexEntry,
  base: string,
  where: { what: string; field: string; indexUrl: string },
): URL {
  const { what, field, indexUrl } = where;
  const urls = Array.isArray(entry.urls) ? entry.urls.filter((u): u is string => typeof u === 'string') : [];
  if (urls.length === 0) {
    throw new SourceNotReadyError(`${field}.chart`, `${what} has no download URL in ${redactUrl(indexUrl)}`);
  }
  let chartUrl: URL;
  try {
    chartUrl = new URL(urls[0], `${base}/`);
  } catch {
    throw new SourceNotReadyError(
      `${field}.chart`,
      `${what} has an invalid download URL in ${redactUrl(indexUrl)}`,
    );
  }
  if (chartUrl.protocol !== 'https:' && chartUrl.protocol !== 'http:') {
    throw new UnsupportedSourceError(
      `${field}.chart`,
      `${what} is published at a ${chartUrl.protocol.replace(/:$/, '')} URL; only http(s) chart downloads are supported`,
    );
  }
  return chartUrl;
}
