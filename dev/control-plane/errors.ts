// Errors thrown while starting the control plane or installing CRDs, and a short
// description of any thrown value for use inside their messages.
import { ApiException } from '@kubernetes/client-node';

export class ControlPlaneBinariesNotFoundError extends Error {
  override name = 'ControlPlaneBinariesNotFoundError';
}

export class ControlPlaneStartError extends Error {
  override name = 'ControlPlaneStartError';
}

export class CrdInstallError extends Error {
  override name = 'CrdInstallError';
}

export function isErrnoException(err: unknown): err is NodeJS.ErrnoException {
  return err instanceof Error && 'code' in err;
}

export function errorText(err: unknown): string {
  if (err instanceof ApiException) {
    // client-node's message repeats the whole body and response headers; the Status message says it all.
    const body: unknown = err.body;
    let parsed: unknown = body;
    if (typeof body === 'string') {
      try {
        parsed = JSON.parse(body);
      } catch {
        parsed = undefined; // not JSON: fall back to the raw text below
      }
    }
    const message = (parsed as { message?: unknown } | undefined)?.message;
    return `HTTP ${err.code}: ${typeof message === 'string' ? message : String(body)}`;
  }
  return err instanceof Error ? err.message : String(err);
}
