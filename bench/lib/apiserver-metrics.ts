// The API server's own request counter (`apiserver_request_total`) and time per
// request kind (`apiserver_request_duration_seconds_sum`), read from its /metrics
// with the admin kubeconfig: an independent count of what the code under test
// asked, next to the client-side and adapter request counters.
import { request } from 'node:https';
import type { RequestOptions } from 'node:https';
import type { KubeConfig } from '@kubernetes/client-node';
import type { ClientRequestCount, ClientRequestCounter } from './client-requests.ts';

export interface RequestSample {
  verb: string;
  group: string;
  resource: string;
  subresource: string;
  /** 'All' for a dry run, '' otherwise. */
  dryRun: string;
  code: string;
  count: number;
}

export class MetricsReadError extends Error {
  override name = 'MetricsReadError';
}

/** A snapshot of one metric family; the series are keyed by their label set. */
export type RequestSnapshot = ReadonlyMap<string, RequestSample>;

const LABEL = /(\w+)="((?:[^"\\]|\\.)*)"/g;

/** The API server's /metrics text. */
export async function fetchMetrics(kc: KubeConfig): Promise<string> {
  const cluster = kc.getCurrentCluster();
  if (cluster === null)
    throw new MetricsReadError('the kubeconfig has no current cluster; cannot read /metrics');
  const url = new URL('/metrics', cluster.server);
  const options: RequestOptions = { method: 'GET', agent: false, timeout: 10_000 };
  await kc.applyToHTTPSOptions(options);
  return new Promise<string>((resolve, reject) => {
    const req = request(url, options, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        if (res.statusCode !== 200)
          reject(
            new MetricsReadError(
              `GET ${url.href} answered HTTP ${res.statusCode ?? '?'}: ${text.slice(0, 300)}`,
            ),
          );
        else resolve(text);
      });
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new MetricsReadError(`GET ${url.href} timed out`)));
    req.on('error', reject);
    req.end();
  });
}

/**
 * The series of a per-request metric family: `apiserver_request_total` (count = requests) or
 * `apiserver_request_duration_seconds_sum` (count = seconds spent).
 */
export function parseSeries(
  text: string,
  metric: 'apiserver_request_total' | 'apiserver_request_duration_seconds_sum',
): RequestSnapshot {
  const prefix = `${metric}{`;
  const snapshot = new Map<string, RequestSample>();
  for (const line of text.split('\n')) {
    if (!line.startsWith(prefix)) continue;
    const close = line.lastIndexOf('}');
    const labelText = line.slice(prefix.length, close);
    const labels: Record<string, string> = {};
    for (const [, name = '', value = ''] of labelText.matchAll(LABEL)) labels[name] = value;
    snapshot.set(labelText, {
      verb: labels['verb'] ?? '',
      group: labels['group'] ?? '',
      resource: labels['resource'] ?? '',
      subresource: labels['subresource'] ?? '',
      dryRun: labels['dry_run'] ?? '',
      code: labels['code'] ?? '',
      count: Number(
        line
          .slice(close + 1)
          .trim()
          .split(/\s+/)[0],
      ),
    });
  }
  return snapshot;
}

export async function readRequestTotals(kc: KubeConfig): Promise<RequestSnapshot> {
  return parseSeries(await fetchMetrics(kc), 'apiserver_request_total');
}

/** Series that grew between two snapshots, with the growth as count. */
export function diffRequests(before: RequestSnapshot, after: RequestSnapshot): RequestSample[] {
  const grown: RequestSample[] = [];
  for (const [key, sample] of after) {
    const delta = sample.count - (before.get(key)?.count ?? 0);
    if (delta > 0) grown.push({ ...sample, count: delta });
  }
  return grown;
}

/** The metric's verbs that write; a server-side apply (PATCH with application/apply-patch+yaml) is counted as APPLY. */
const WRITE_VERBS: ReadonlySet<string> = new Set([
  'POST',
  'PUT',
  'PATCH',
  'APPLY',
  'DELETE',
  'DELETECOLLECTION',
]);

export interface RequestSummary {
  total: number;
  byVerb: Record<string, number>;
  /** `VERB resource[/subresource][ (dry run)]` → count. */
  byResource: Record<string, number>;
  /** Writes to objects: POST/PUT/PATCH/APPLY/DELETE, not dry runs, not a status subresource. */
  objectWrites: number;
  /** Writes to a status subresource (not dry runs). */
  statusWrites: number;
  dryRuns: number;
}

export function summarize(samples: readonly RequestSample[]): RequestSummary {
  const byVerb: Record<string, number> = {};
  const byResource: Record<string, number> = {};
  let total = 0;
  let objectWrites = 0;
  let statusWrites = 0;
  let dryRuns = 0;
  for (const s of samples) {
    total += s.count;
    byVerb[s.verb] = (byVerb[s.verb] ?? 0) + s.count;
    const what = `${s.verb} ${s.resource || '(non-resource)'}${s.subresource ? `/${s.subresource}` : ''}${s.dryRun ? ' (dry run)' : ''}`;
    byResource[what] = (byResource[what] ?? 0) + s.count;
    if (s.dryRun !== '') dryRuns += s.count;
    else if (WRITE_VERBS.has(s.verb)) {
      if (s.subresource === 'status') statusWrites += s.count;
      else objectWrites += s.count;
    }
  }
  return {
    total,
    byVerb: sortKeys(byVerb),
    byResource: sortKeys(byResource),
    objectWrites,
    statusWrites,
    dryRuns,
  };
}

function sortKeys(record: Record<string, number>): Record<string, number> {
  return Object.fromEntries(Object.entries(record).sort(([a], [b]) => a.localeCompare(b)));
}

/**
 * What the API server does on its own, whoever else is working: its identity
 * Lease renewal and the `kubernetes` endpoints reconciler (every 10 s), the
 * ClusterIP allocator's IPAddress objects (one POST per new Service) and the
 * Events it records. The measured code touches none of these resources (the
 * Leases of the runtime are not measured: queueLatency counts no requests).
 */
const APISERVER_OWN: ReadonlySet<string> = new Set([
  'leases',
  'endpoints',
  'endpointslices',
  'ipaddresses',
  'servicecidrs',
  'events',
]);

export function isApiserverOwn(s: RequestSample): boolean {
  return APISERVER_OWN.has(s.resource);
}

export interface Measured<T> {
  value: T;
  wallMs: number;
  /** apiserver_request_total growth without the API server's own work. Non-resource requests (discovery, /version) are not in it. */
  apiserver: RequestSummary;
  /** The API server's own requests in the same time (see isApiserverOwn). */
  apiserverOwn: Record<string, number>;
  /** Every request the process sent to the API server (client side, discovery included). */
  client: ClientRequestCount;
}

/** Counts the requests `work` causes, on both sides. */
export async function measureRequests<T>(
  kc: KubeConfig,
  client: ClientRequestCounter,
  work: () => Promise<T>,
): Promise<Measured<T>> {
  const before = await readRequestTotals(kc);
  const started = performance.now();
  const { value, count } = await client.during(work);
  const wallMs = Math.round((performance.now() - started) * 10) / 10;
  const after = await readRequestTotals(kc);
  const grown = diffRequests(before, after);
  return {
    value,
    wallMs,
    apiserver: summarize(grown.filter((s) => !isApiserverOwn(s))),
    apiserverOwn: summarize(grown.filter(isApiserverOwn)).byResource,
    client: count,
  };
}

/**
 * Where the API server spent its time: seconds per `VERB resource[/subresource]`, largest first.
 * Requests in flight at the same time each count in full. WATCH is left out: a watch is
 * counted when it ends, with all the time it was open.
 */
export function timeByResource(grown: readonly RequestSample[], top = 10): Record<string, number> {
  const seconds = new Map<string, number>();
  for (const s of grown) {
    if (s.verb === 'WATCH') continue;
    const what = `${s.verb} ${s.resource || '(non-resource)'}${s.subresource ? `/${s.subresource}` : ''}${s.dryRun ? ' (dry run)' : ''}`;
    seconds.set(what, (seconds.get(what) ?? 0) + s.count);
  }
  return Object.fromEntries(
    [...seconds]
      .sort(([, a], [, b]) => b - a)
      .slice(0, top)
      .map(([what, s]) => [what, Math.round(s * 10) / 10]),
  );
}
