// The one line (and exit code) a verb's error becomes: never a stack trace, never a credential.
import { KubeconfigError } from '../adapters/kube/kubeconfig.ts';
import { KubeApiError, KubeTransportError } from '../adapters/kube/http.ts';
import { ViewFailure } from '../views/failure.ts';
import { CliFailure, ExitCode, UsageError } from './output.ts';

/** What to tell the user about an error, in one line, and the exit code; `verb` names the help to see. */
export function describeError(error: unknown, verb?: string): { line: string; code: ExitCode } {
  if (error instanceof UsageError)
    return {
      line: `convoy: ${error.message} (see convoy ${verb === undefined ? 'help' : `${verb} --help`})`,
      code: ExitCode.usage,
    };
  if (error instanceof CliFailure || error instanceof ViewFailure)
    return { line: `convoy: ${error.message}`, code: ExitCode.failure };
  if (error instanceof KubeconfigError)
    return { line: `convoy: no cluster: ${error.message}`, code: ExitCode.failure };
  if (error instanceof KubeTransportError) {
    return {
      line: `convoy: cannot reach the Kubernetes API server: ${oneLine(error.message)}`,
      code: ExitCode.failure,
    };
  }
  if (error instanceof KubeApiError)
    return { line: `convoy: ${apiErrorLine(error)}`, code: ExitCode.failure };
  const message = error instanceof Error ? error.message : String(error);
  return { line: `convoy: ${oneLine(message)}`, code: ExitCode.failure };
}

function apiErrorLine(error: KubeApiError): string {
  const body = error.body as { message?: unknown } | undefined;
  const server = typeof body?.message === 'string' ? oneLine(body.message) : oneLine(error.message);
  if (error.status === 401)
    return `the API server did not accept your credentials (HTTP 401): check your kubeconfig's user`;
  if (error.status === 403) return `forbidden (HTTP 403): ${server}`;
  return `${server} (HTTP ${error.status})`;
}

const oneLine = (text: string): string => text.replace(/\s+/g, ' ').trim();
