// One Lambda execution environment: the Runtime Interface Emulator (aws-lambda-rie) running the
// Node runtime interface client (aws-lambda-ric) on this Node, which loads the function's bundle
// from its task root as Lambda does. The emulator takes ONE invoke at a time (a concurrent invoke
// crashes it), so a caller wanting N concurrent invocations starts N of these (esm-driver.ts).
//
// Each invoke reports what the bench needs: the init duration (cold start, from the emulator's
// INIT REPORT), the invoke's duration (INVOKE RTDONE) and the high-water mark of the runtime
// process's resident memory (VmHWM of the node process, read from /proc).
import { spawn, type ChildProcess } from 'node:child_process';
import { readFile, readdir } from 'node:fs/promises';
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import { freePorts } from '../control-plane/processes.ts';
import type { LambdaRuntimeBuild } from './runtime-build.ts';

export interface EmulatorOptions {
  readonly runtime: LambdaRuntimeBuild;
  /** LAMBDA_TASK_ROOT and the runtime's working directory (Lambda's /var/task). */
  readonly taskRoot: string;
  /** The template's Handler, e.g. index.handler. */
  readonly handler: string;
  readonly functionName: string;
  readonly memorySize: number;
  readonly timeoutSeconds: number;
  /** The function's environment (the template's, resolved) plus what Lambda itself sets. */
  readonly environment: Readonly<Record<string, string>>;
  /** The Node binary the runtime runs on; default this process's. */
  readonly node?: string;
  /** Each line the function (and the emulator) prints; default dropped. */
  readonly onLine?: (line: string) => void;
}

export interface InvokeResult {
  /** The answer's body as the emulator returned it. */
  readonly body: string;
  /** Set when the answer is an error: the function threw, failed at init or timed out. */
  readonly error?: { readonly type: string; readonly message: string };
  readonly timedOut: boolean;
  /** Init duration in ms when this invoke started a new runtime (a cold start), else undefined. */
  readonly initMs: number | undefined;
  /** The invoke's duration in ms, as the emulator measured it (init excluded). */
  readonly durationMs: number;
  /** Wall time of the HTTP invoke seen from here, init included. */
  readonly wallMs: number;
  /** VmHWM of the runtime process in KiB (its max RSS so far), undefined when it could not be read. */
  readonly maxRssKb: number | undefined;
}

export interface Emulator {
  readonly port: number;
  invoke(payload: string): Promise<InvokeResult>;
  stop(): Promise<void>;
}

export class EmulatorError extends Error {
  override name = 'EmulatorError';
}

export async function startEmulator(options: EmulatorOptions): Promise<Emulator> {
  const [port, apiPort] = (await freePorts(2)) as [number, number];
  const node = options.node ?? process.execPath;
  const env: NodeJS.ProcessEnv = {
    ...options.environment,
    LAMBDA_TASK_ROOT: options.taskRoot,
    AWS_LAMBDA_FUNCTION_NAME: options.functionName,
    AWS_LAMBDA_FUNCTION_MEMORY_SIZE: String(options.memorySize),
    AWS_LAMBDA_FUNCTION_TIMEOUT: String(options.timeoutSeconds),
  };
  const proc = spawn(
    options.runtime.rie,
    [
      '--runtime-interface-emulator-address',
      `127.0.0.1:${port}`,
      '--runtime-api-address',
      `127.0.0.1:${apiPort}`,
      node,
      options.runtime.ric,
      options.handler,
    ],
    { cwd: options.taskRoot, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true },
  );
  const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
  const lines: string[] = [];
  const onLine = (line: string): void => {
    lines.push(line);
    if (lines.length > 2000) lines.splice(0, 1000);
    options.onLine?.(line);
  };
  for (const stream of [proc.stdout, proc.stderr])
    if (stream) createInterface({ input: stream }).on('line', onLine);
  await untilListening(port, proc);

  let busy = false;
  let maxRssKb: number | undefined;
  return {
    port,
    async invoke(payload) {
      if (busy)
        throw new EmulatorError(
          'one invoke at a time per emulator (a concurrent invoke crashes aws-lambda-rie)',
        );
      if (proc.exitCode !== null || proc.signalCode !== null)
        throw new EmulatorError(
          `the emulator of ${options.functionName} has exited: ${lines.slice(-5).join(' | ')}`,
        );
      busy = true;
      const from = lines.length;
      const started = performance.now();
      try {
        const response = await fetch(`http://127.0.0.1:${port}/2015-03-31/functions/function/invocations`, {
          method: 'POST',
          body: payload,
        });
        const body = await response.text();
        const wallMs = performance.now() - started;
        // The REPORT line follows the answer by a moment.
        const deadline = Date.now() + 1000;
        while (!lines.slice(from).some((l) => l.startsWith('REPORT RequestId')) && Date.now() < deadline)
          await sleep(5);
        const report = lines.slice(from);
        const rss = await runtimeMaxRss(proc.pid);
        if (rss !== undefined) maxRssKb = Math.max(maxRssKb ?? 0, rss);
        const timedOut = /^Task timed out after/.test(body);
        return {
          body,
          ...errorOf(body, timedOut),
          timedOut,
          initMs: lastNumber(report, /INIT REPORT\(durationMs: ([\d.]+)\)/),
          durationMs: lastNumber(report, /INVOKE RTDONE\(.*duration: ([\d.]+)ms\)/) ?? wallMs,
          wallMs,
          maxRssKb,
        };
      } finally {
        busy = false;
      }
    },
    async stop() {
      if (proc.exitCode === null && proc.signalCode === null) {
        signalGroup(proc, 'SIGTERM');
        await Promise.race([exited, sleep(2000)]);
        signalGroup(proc, 'SIGKILL');
        await Promise.race([exited, sleep(2000)]);
      }
    },
  };
}

/** An answer is an error when it is the emulator's timeout text or a JSON object with errorType/errorMessage. */
function errorOf(body: string, timedOut: boolean): { error?: { type: string; message: string } } {
  if (timedOut) return { error: { type: 'Sandbox.Timedout', message: body.trim() } };
  try {
    const parsed = JSON.parse(body) as { errorType?: unknown; errorMessage?: unknown } | null;
    if (
      parsed !== null &&
      typeof parsed === 'object' &&
      typeof parsed.errorType === 'string' &&
      'errorMessage' in parsed
    ) {
      return { error: { type: parsed.errorType, message: String(parsed.errorMessage) } };
    }
  } catch {
    // not JSON: a plain answer
  }
  return {};
}

function lastNumber(lines: readonly string[], pattern: RegExp): number | undefined {
  for (let i = lines.length - 1; i >= 0; i--) {
    const match = pattern.exec(lines[i] ?? '');
    if (match?.[1] !== undefined) return Number(match[1]);
  }
  return undefined;
}

/** VmHWM (KiB) of the emulator's runtime child (the node process), undefined when there is none. */
export async function runtimeMaxRss(riePid: number | undefined): Promise<number | undefined> {
  if (riePid === undefined) return undefined;
  let best: number | undefined;
  for (const pid of await childrenOf(riePid)) {
    const status = await readFile(`/proc/${pid}/status`, 'utf8').catch(() => '');
    const match = /^VmHWM:\s+(\d+) kB/m.exec(status);
    if (match?.[1] !== undefined) best = Math.max(best ?? 0, Number(match[1]));
  }
  return best;
}

async function childrenOf(pid: number): Promise<number[]> {
  const tasks = await readdir(`/proc/${pid}/task`).catch(() => [] as string[]);
  const found: number[] = [];
  for (const tid of tasks) {
    const text = await readFile(`/proc/${pid}/task/${tid}/children`, 'utf8').catch(() => '');
    for (const child of text.split(/\s+/)) if (child !== '') found.push(Number(child));
  }
  return found;
}

async function untilListening(port: number, proc: ChildProcess): Promise<void> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    if (proc.exitCode !== null || proc.signalCode !== null)
      throw new EmulatorError(`aws-lambda-rie exited at start (code ${proc.exitCode ?? proc.signalCode})`);
    // Any HTTP answer means it listens (GET on the invoke route is refused with 404/405).
    const up = await fetch(`http://127.0.0.1:${port}/`, { signal: AbortSignal.timeout(500) }).then(
      () => true,
      () => false,
    );
    if (up) return;
    if (Date.now() > deadline)
      throw new EmulatorError(`aws-lambda-rie did not listen on 127.0.0.1:${port} within 10 s`);
    await sleep(20);
  }
}

function signalGroup(proc: ChildProcess, signal: NodeJS.Signals): void {
  try {
    if (proc.pid !== undefined) process.kill(-proc.pid, signal);
  } catch {
    // already gone
  }
}
