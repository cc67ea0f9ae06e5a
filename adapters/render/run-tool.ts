/**
 * Runs a rendering binary (helm, kubectl) without a shell, inside its private tool folder
 * (tool-sandbox.ts: the folder is its HOME and working directory, and its environment is only
 * that folder's paths), and turns every failure into a `RenderError` carrying the tool's own
 * (trimmed) message.
 */
import { execFile } from 'node:child_process';
import { RenderError } from '../../domain/render/errors.ts';
import {
  DEFAULT_MAX_RENDER_BYTES,
  describeBytes,
  MAX_RENDER_BYTES_SETTING,
} from '../../domain/reconcile/render-limits.ts';
import type { ToolHome } from './tool-sandbox.ts';

/**
 * Render output larger than this is refused by default (the same bound applies when parsing it):
 * the installation's render byte limit (domain/reconcile/render-limits.ts). stdout is buffered
 * whole, so the bound is also what the buffer may take.
 */
export const MAX_TOOL_OUTPUT_BYTES = DEFAULT_MAX_RENDER_BYTES;
export const DEFAULT_TOOL_TIMEOUT_MS = 120_000;
const MAX_MESSAGE_CHARS = 4000;

export interface RunToolOptions {
  /** Names the command in messages, e.g. `helm template podinfo`. */
  what: string;
  /** The run's private folder and environment (`withToolHome`); nothing else is passed on. */
  home: ToolHome;
  timeoutMs?: number | undefined;
  /** Bytes of stdout taken; more ends the run with a RenderError naming the limit. Default MAX_TOOL_OUTPUT_BYTES. */
  maxOutputBytes?: number | undefined;
}

function trimmed(text: string): string {
  const clean = text.trim();
  return clean.length > MAX_MESSAGE_CHARS ? `${clean.slice(0, MAX_MESSAGE_CHARS)} …(truncated)` : clean;
}

export function runTool(binary: string, args: readonly string[], options: RunToolOptions): Promise<string> {
  const timeout = options.timeoutMs ?? DEFAULT_TOOL_TIMEOUT_MS;
  const maxBuffer = options.maxOutputBytes ?? MAX_TOOL_OUTPUT_BYTES;
  return new Promise((resolve, reject) => {
    execFile(
      binary,
      args,
      {
        env: options.home.env,
        cwd: options.home.dir,
        timeout,
        maxBuffer,
        encoding: 'utf8',
        windowsHide: true,
      },
      (error, stdout, stderr) => {
        if (!error) {
          resolve(stdout);
          return;
        }
        const code = (error as NodeJS.ErrnoException).code;
        let message: string;
        if (code === 'ENOENT' || code === 'EACCES') {
          message = `${options.what}: cannot run ${binary} (${code}); check the helm/kubectl installation`;
        } else if (code === 'ERR_CHILD_PROCESS_STDIO_MAXBUFFER') {
          message = `${options.what}: the output is larger than this installation's render limit of ${describeBytes(maxBuffer)} (${MAX_RENDER_BYTES_SETTING}); nothing was stored or applied. Split the content into smaller Releases, or raise the limit together with the reconcile function's memory`;
        } else if (error.killed && error.signal === 'SIGTERM') {
          message = `${options.what}: timed out after ${Math.round(timeout / 1000)} s`;
        } else {
          const detail = trimmed(stderr) || trimmed(error.message);
          message = `${options.what} failed: ${detail}`;
        }
        reject(new RenderError(message, { cause: error }));
      },
    );
  });
}
