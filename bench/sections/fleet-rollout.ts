// Watching one rollout of the fleet bench (fleet.ts) to its end and what it cost: the set's status
// polled (its size, where the rollout stands, a stall), the fleet loop's runs from the runtime's
// log, and the requests of the set's side counted by the fleet function's bearer token.
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { setTimeout as sleep } from 'node:timers/promises';
import type { ReleaseSet } from '../../domain/api/release-set.ts';
import { describeRequest } from '../lib/client-requests.ts';
import { log } from '../lib/stdout.ts';
import { percentile } from '../lib/stats.ts';

const ROLLOUT_TIMEOUT_MS = 1_200_000;
/** No change of the set's status for this long (longer than any recheck the set asks for: 30 s, the 10-s soak): the rollout stalled. */
const STALL_MS = 120_000;

const round = (n: number): number => Math.round(n * 100) / 100;

/** Counts the requests to `origin` that carry `token`, by lib/client-requests.ts' keys (node:http and undici). */
export function countRequestsWithToken(server: string, token: string) {
  const origin = new URL(server).origin;
  const counts = new Map<string, number>();
  const bearer = `Bearer ${token}`;
  const onNodeHttp = (message: unknown): void => {
    const request = (
      message as {
        request?: { protocol: string; method: string; path: string; getHeader(name: string): unknown };
      }
    ).request;
    if (request === undefined || `${request.protocol}//${String(request.getHeader('host'))}` !== origin)
      return;
    if (request.getHeader('authorization') !== bearer) return;
    const key = describeRequest(request.method, request.path);
    counts.set(key, (counts.get(key) ?? 0) + 1);
  };
  subscribe('http.client.request.start', onNodeHttp);
  return {
    /** The counts since the last take, and a fresh start. */
    take(): { total: number; byRequest: Record<string, number> } {
      const byRequest = Object.fromEntries([...counts].sort(([a], [b]) => a.localeCompare(b)));
      counts.clear();
      return { total: Object.values(byRequest).reduce((a, b) => a + b, 0), byRequest };
    },
    stop: () => unsubscribe('http.client.request.start', onNodeHttp),
  };
}

/** What the runtime's log says of the fleet loop: runs, the messages handled, each record's outcome and run time. */
export interface FleetTally {
  runs: number;
  readonly messages: Set<string>;
  /** Outcome (and reason class) → records; reset per rollout. */
  outcomes: Map<string, number>;
  /** Durations of the runs that did work; reset per rollout. */
  runMs: number[];
}

/** A tally fed with every log line of the runtime (`onLine`); lines of other loops that warn or fail go to stderr. */
export function fleetLogTally(): FleetTally & { onLine(line: string): void } {
  const tally: FleetTally & { onLine(line: string): void } = {
    runs: 0,
    messages: new Set<string>(),
    outcomes: new Map<string, number>(),
    runMs: [],
    onLine(line: string): void {
      if (!line.includes('"loop":"fleet"')) {
        if (line.includes('"level":"error"') || line.includes('"level":"warn"'))
          process.stderr.write(`${line}\n`);
        return;
      }
      const parsed = JSON.parse(line) as {
        msg?: string;
        messageId?: string;
        level?: string;
        outcome?: string;
        reason?: string;
        durationMs?: number;
      };
      if (parsed.msg === 'fleet decided') tally.runs++;
      if (parsed.outcome !== undefined && parsed.durationMs !== undefined) {
        const why = parsed.reason === undefined ? '' : `: ${parsed.reason.replace(/[(:,].*$/, '').trim()}`;
        const key = `${parsed.outcome}${why}`;
        tally.outcomes.set(key, (tally.outcomes.get(key) ?? 0) + 1);
        if (parsed.msg !== 'dropped' && !(parsed.reason ?? '').startsWith('lease held'))
          tally.runMs.push(parsed.durationMs);
      }
      if (parsed.messageId !== undefined) tally.messages.add(parsed.messageId);
      if (parsed.level === 'error' || parsed.level === 'warn') process.stderr.write(`${line}\n`);
    },
  };
  return tally;
}

/** What watching a rollout reads and counts with. */
export interface RolloutWatch {
  readSet: () => Promise<ReleaseSet>;
  counter: ReturnType<typeof countRequestsWithToken>;
  tally: FleetTally;
  /** Clusters of the set (the per-Cluster figures). */
  clusters: number;
  /** minHealthyTime of each of the 4 steps (wall minus soak). */
  soakSeconds: number;
}

/** Runs `start`, then waits until the set's rollout of the new generation succeeded; polls the status size meanwhile. */
export async function watchRollout(w: RolloutWatch, label: string, start: () => Promise<void>) {
  const { counter, tally, clusters: n } = w;
  counter.take();
  const runsBefore = tally.runs;
  const messagesBefore = tally.messages.size;
  tally.outcomes = new Map();
  tally.runMs = [];
  let peakStatusBytes = 0;
  let lastState = '';
  let lastStatus = '';
  let lastChange = performance.now();
  let stalled:
    { state: string; message: string | undefined; noChangeForMs: number; atMs: number } | undefined;
  const started = performance.now();
  await start();
  const deadline = Date.now() + ROLLOUT_TIMEOUT_MS;
  let set: ReleaseSet;
  for (;;) {
    set = await w.readSet();
    const status = set.status;
    const statusText = JSON.stringify(status ?? {});
    peakStatusBytes = Math.max(peakStatusBytes, Buffer.byteLength(statusText));
    if (statusText !== lastStatus) lastChange = performance.now();
    lastStatus = statusText;
    const state = `${status?.rollout?.state ?? '-'} ${status?.rollout?.stepName ?? '-'} ready ${status?.clusters?.ready ?? 0}/${status?.clusters?.selected ?? 0}`;
    if (state !== lastState)
      log(`fleet ${label}: ${state} after ${Math.round(performance.now() - started)} ms`);
    lastState = state;
    const succeeded = status?.conditions?.find((c) => c.type === 'RolloutSucceeded');
    if (
      succeeded?.status === 'True' &&
      succeeded.observedGeneration === set.metadata.generation &&
      status?.rollout?.state === 'Succeeded'
    )
      break;
    if (status?.rollout?.state === 'Halted' || status?.rollout?.state === 'RolledBack')
      throw new Error(`rollout ${label} stopped: ${JSON.stringify(succeeded)}`);
    if (Date.now() > deadline)
      throw new Error(`rollout ${label} did not succeed within ${ROLLOUT_TIMEOUT_MS} ms; last: ${state}`);
    // A rollout whose status stopped changing waits for a run nothing will send: report it, do not hang.
    if (performance.now() - lastChange > STALL_MS) {
      stalled = {
        state,
        message: succeeded?.message,
        noChangeForMs: Math.round(performance.now() - lastChange),
        atMs: Math.round(lastChange - started),
      };
      log(`fleet ${label}: stalled at ${state} (${succeeded?.message ?? ''})`);
      break;
    }
    await sleep(500);
  }
  const wallMs = stalled === undefined ? Math.round(performance.now() - started) : undefined;
  const requests = counter.take();
  const runs = tally.runs - runsBefore;
  return {
    complete: stalled === undefined,
    ...(stalled === undefined ? {} : { stalled }),
    wallMs,
    wallMinusSoakMs: wallMs === undefined ? undefined : wallMs - 4 * w.soakSeconds * 1000,
    fleetRuns: runs,
    fleetMessages: tally.messages.size - messagesBefore,
    fleetRunsPerCluster: round(runs / n),
    fleetRecordOutcomes: Object.fromEntries([...tally.outcomes].sort((a, b) => b[1] - a[1])),
    fleetRunMs: { p50: percentile(tally.runMs, 50), max: Math.max(0, ...tally.runMs) },
    setSideRequests: requests.total,
    setSideRequestsPerCluster: round(requests.total / n),
    setSideRequestsByKind: requests.byRequest,
    peakStatusBytes,
    revision: set.status?.revision?.id,
  };
}
