/**
 * The relay's serving certificate (docs/decisions.md "Dashboard: TLS"): CONVOY_TLS_CERT_FILE and
 * CONVOY_TLS_KEY_FILE name PEM files, in a cluster the Secret convoy-relay-tls mounted by the
 * Deployment (optional, so an install without it still starts). Both files present: the API and
 * the dashboard are served over HTTPS only. Named but absent: plain HTTP, and the relay says why.
 */
import { readFile } from 'node:fs/promises';

export type TlsFiles =
  | { readonly kind: 'off' }
  | { readonly kind: 'missing'; readonly message: string }
  | { readonly kind: 'on'; readonly cert: Buffer; readonly key: Buffer };

export class TlsConfigError extends Error {
  override name = 'TlsConfigError';
}

export async function loadTlsFiles(
  certFile: string | undefined,
  keyFile: string | undefined,
): Promise<TlsFiles> {
  if (!certFile && !keyFile) return { kind: 'off' };
  if (!certFile || !keyFile) {
    throw new TlsConfigError(
      `set both CONVOY_TLS_CERT_FILE and CONVOY_TLS_KEY_FILE, or neither (only ${certFile ? 'CONVOY_TLS_CERT_FILE' : 'CONVOY_TLS_KEY_FILE'} is set)`,
    );
  }
  const read = async (path: string) => {
    try {
      return await readFile(path);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw new TlsConfigError(
        `cannot read ${path}: ${(error as NodeJS.ErrnoException).code ?? String(error)}`,
      );
    }
  };
  const [cert, key] = await Promise.all([read(certFile), read(keyFile)]);
  if (cert === undefined || key === undefined) {
    return {
      kind: 'missing',
      message: `no TLS certificate at ${cert === undefined ? certFile : keyFile}: the HTTP API and dashboard are served over plain HTTP; create the Secret convoy-relay-tls (kubernetes.io/tls) and restart the relay`,
    };
  }
  return { kind: 'on', cert, key };
}
