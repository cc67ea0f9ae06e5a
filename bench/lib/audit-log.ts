// Requests per client identity from the kube-apiserver's audit log. apiserver_request_total has
// no label for the client, so the Flux section starts its control plane with an audit policy
// that logs one Metadata event per request (at ResponseComplete) of the listed users and
// nothing else, and counts those events per user, verb and resource.
import { createReadStream } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

export class AuditLogError extends Error {
  override name = 'AuditLogError';
}

/** Writes the policy file and returns the kube-apiserver flags that turn the audit log on. */
export async function auditLogArgs(
  dir: string,
  users: readonly string[],
): Promise<{ args: string[]; logPath: string }> {
  const policyPath = join(dir, 'bench-audit-policy.yaml');
  const logPath = join(dir, 'bench-audit.log');
  const policy = [
    'apiVersion: audit.k8s.io/v1',
    'kind: Policy',
    'omitStages: [RequestReceived, ResponseStarted]',
    'rules:',
    `  - level: Metadata`,
    `    users: [${users.map((u) => JSON.stringify(u)).join(', ')}]`,
    '  - level: None',
    '',
  ].join('\n');
  await writeFile(policyPath, policy);
  return {
    // Blocking mode: an event is in the file when its response has been sent.
    args: [
      `--audit-policy-file=${policyPath}`,
      `--audit-log-path=${logPath}`,
      '--audit-log-format=json',
      '--audit-log-mode=blocking',
      '--audit-log-maxsize=0',
    ],
    logPath,
  };
}

export interface AuditRequest {
  user: string;
  userAgent: string;
  /** Kubernetes verb: get, list, watch, create, update, patch, delete… */
  verb: string;
  /** resource[/subresource], or the non-resource path. */
  resource: string;
  namespace: string;
  /** objectRef.name ('' for a collection or a non-resource request). */
  name: string;
  dryRun: boolean;
  code: number;
  /** ms since the epoch, when the apiserver received the request. */
  at: number;
}

interface AuditEvent {
  stage?: string;
  verb?: string;
  requestURI?: string;
  userAgent?: string;
  user?: { username?: string };
  objectRef?: { resource?: string; subresource?: string; namespace?: string; name?: string };
  responseStatus?: { code?: number };
  requestReceivedTimestamp?: string;
}

/** Every logged request, oldest first. */
export async function readAuditLog(logPath: string): Promise<AuditRequest[]> {
  const out: AuditRequest[] = [];
  const lines = createInterface({ input: createReadStream(logPath, 'utf8'), crlfDelay: Infinity });
  for await (const line of lines) {
    if (line.trim() === '') continue;
    let event: AuditEvent;
    try {
      event = JSON.parse(line) as AuditEvent;
    } catch (error) {
      throw new AuditLogError(`${logPath}: a line is not JSON (${String(error)}): ${line.slice(0, 200)}`);
    }
    if (event.stage !== undefined && event.stage !== 'ResponseComplete' && event.stage !== 'Panic') continue;
    const ref = event.objectRef;
    const uri = event.requestURI ?? '';
    out.push({
      user: event.user?.username ?? '',
      userAgent: event.userAgent ?? '',
      verb: event.verb ?? '',
      resource: ref?.resource
        ? `${ref.resource}${ref.subresource ? `/${ref.subresource}` : ''}`
        : (uri.split('?')[0] ?? uri),
      namespace: ref?.namespace ?? '',
      name: ref?.name ?? '',
      dryRun: /[?&]dryRun=All/.test(uri),
      code: event.responseStatus?.code ?? 0,
      at: Date.parse(event.requestReceivedTimestamp ?? '') || 0,
    });
  }
  return out;
}

export interface AuditSummary {
  total: number;
  byVerb: Record<string, number>;
  /** `verb resource[ (dry run)]` → count. */
  byResource: Record<string, number>;
  /** By user agent (the program name before the first `/`). */
  byAgent: Record<string, number>;
}

/** Counts the requests of `user` received in [from, to] (ms since the epoch). */
export function summarizeAudit(
  requests: readonly AuditRequest[],
  user: string,
  from: number,
  to: number,
): AuditSummary {
  const byVerb: Record<string, number> = {};
  const byResource: Record<string, number> = {};
  const byAgent: Record<string, number> = {};
  let total = 0;
  for (const r of requests) {
    if (r.user !== user || r.at < from || r.at > to) continue;
    total++;
    const verb = r.dryRun ? `${r.verb} (dry run)` : r.verb;
    byVerb[verb] = (byVerb[verb] ?? 0) + 1;
    const what = `${verb.split(' ')[0]} ${r.resource}${r.dryRun ? ' (dry run)' : ''}`;
    byResource[what] = (byResource[what] ?? 0) + 1;
    const agent = r.userAgent.split('/')[0] || '(none)';
    byAgent[agent] = (byAgent[agent] ?? 0) + 1;
  }
  return { total, byVerb: sorted(byVerb), byResource: sorted(byResource), byAgent: sorted(byAgent) };
}

/**
 * Requests per Release of a first deploy, whatever N: each request that belongs to one Release
 * (`releaseOf` answers its key) counts when it came before that Release's own `doneAt`; the
 * others (discovery, lists, watches, shared sources) count when they came before the last
 * `doneAt`, shared by all. So a Release's later work (convoy's rollout recheck ≥ 10 s after its
 * apply) stays out, while at large N a window from the first create to the last Ready would
 * hold the follow-ups of the Releases done early.
 */
export function firstDeployPerRelease(
  requests: readonly AuditRequest[],
  user: string,
  from: number,
  doneAt: ReadonlyMap<string, number>,
  releaseOf: (request: AuditRequest) => string | undefined,
): AuditSummary {
  const last = Math.max(...doneAt.values());
  const mine = requests.filter((r) => {
    if (r.user !== user || r.at < from) return false;
    const key = releaseOf(r);
    const until = key === undefined ? last : doneAt.get(key);
    return until !== undefined && r.at <= until;
  });
  return perRelease(summarizeAudit(mine, user, from, last), doneAt.size);
}

/** The same counts divided by `n` (per Release), rounded to 0.01. */
export function perRelease(summary: AuditSummary, n: number): AuditSummary {
  const div = (r: Record<string, number>) =>
    Object.fromEntries(Object.entries(r).map(([k, v]) => [k, round(v / n)]));
  return {
    total: round(summary.total / n),
    byVerb: div(summary.byVerb),
    byResource: div(summary.byResource),
    byAgent: div(summary.byAgent),
  };
}

const round = (x: number): number => Math.round(x * 100) / 100;

function sorted(record: Record<string, number>): Record<string, number> {
  return Object.fromEntries(Object.entries(record).sort(([, a], [, b]) => b - a));
}
