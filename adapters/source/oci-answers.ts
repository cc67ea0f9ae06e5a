/**
 * How the OCI registry client (oci-registry.ts) words what went wrong: one line naming the
 * registry, the repository and the HTTP status or the class of failure (egress refusal,
 * connection refused, TLS failure, timed out) — never a credential, the server's own text or the
 * TLS library's — and how it reads a body within a size limit.
 */
import type { ReadableStream } from 'node:stream/web';
import { isTlsFailure } from '../../domain/egress/failure.ts';
import { egressRefusalOf, failureOf } from '../egress/errors.ts';
import { SourceNotReadyError } from './errors.ts';
import type { OciClientOptions } from './oci-client-options.ts';

/** What the messages of one client name. */
export interface Answers {
  readonly options: Pick<
    OciClientOptions,
    'registry' | 'repository' | 'field' | 'caPem' | 'credentials' | 'retries'
  >;
  /** `host[:port]/repository`. */
  readonly location: string;
  readonly timeoutMs: number;
}

/** A request that failed before an answer: one line naming the registry and the class of failure. */
export function unanswered(a: Answers, err: unknown, method: string, url: string): SourceNotReadyError {
  const { options, timeoutMs } = a;
  const field = options.field;
  const refusal = egressRefusalOf(err);
  if (refusal !== undefined) {
    return new SourceNotReadyError(
      `${field}.repository`,
      `registry ${options.registry}: ${refusal.message} (will retry)`,
      { cause: err },
    );
  }
  const failure = failureOf(err);
  if (isTlsFailure(failure)) {
    return new SourceNotReadyError(
      `${field}.certSecretRef`,
      `registry ${options.registry}: ${failure}; ` +
        (options.caPem !== undefined
          ? `the CA in ${field}.certSecretRef (ca.crt) did not sign its certificate, or the certificate does not name ${options.registry.replace(/:\d+$/, '')} (will retry)`
          : `if it uses a private CA, put the CA in a Secret (key ca.crt) and name it in ${field}.certSecretRef (will retry)`),
      { cause: err },
    );
  }
  const path = new URL(url).pathname;
  const detail =
    failure === 'timed out'
      ? `timed out after at most ${Math.round(timeoutMs / 1000)} s per request`
      : failure;
  return new SourceNotReadyError(
    `${field}.repository`,
    `registry ${options.registry} did not answer ${method} ${path} (${detail}); will retry`,
    { cause: err },
  );
}

/** An answer that is not what was asked for: the status, and what to do about it. */
export function refusedAnswer(a: Answers, status: number, what: string): SourceNotReadyError {
  const { options, location } = a;
  const field = options.field;
  if (status === 401 || status === 403) {
    return new SourceNotReadyError(
      `${field}.secretRef`,
      `registry ${options.registry} refused ${what} of ${location} (HTTP ${status}${status === 401 ? ' Unauthorized' : ' Forbidden'}): ` +
        (options.credentials
          ? `the credentials of ${field}.secretRef are wrong or may not pull ${options.repository}; fix them (will retry)`
          : `the registry needs credentials; set ${field}.secretRef (will retry)`),
    );
  }
  if (status === 429) {
    return new SourceNotReadyError(
      `${field}.repository`,
      `registry ${options.registry} is rate limiting ${what} of ${location} (HTTP 429, ${(options.retries ?? 2) + 1} attempts); will retry with backoff`,
    );
  }
  if (status >= 500) {
    return new SourceNotReadyError(
      `${field}.repository`,
      `registry ${options.registry} failed ${what} of ${location} (HTTP ${status}, ${(options.retries ?? 2) + 1} attempts); will retry with backoff`,
    );
  }
  return new SourceNotReadyError(
    `${field}.repository`,
    `registry ${options.registry} answered HTTP ${status} to ${what} of ${location}; check ${field}.repository and ${field}.chart (will retry)`,
  );
}

/** The body, bounded before (Content-Length) and while it is read. */
export async function readLimited(
  a: Answers,
  response: Response,
  limit: number,
  what: string,
): Promise<Buffer> {
  const { options, location } = a;
  const field = options.field;
  const declared = Number(response.headers.get('content-length') ?? '0');
  if (declared > limit) {
    await response.body?.cancel();
    throw new SourceNotReadyError(
      `${field}.repository`,
      `${what} of ${location} is ${declared} bytes, over the limit of ${limit} bytes`,
    );
  }
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    const reader = (response.body as ReadableStream<Uint8Array> | null)?.getReader();
    while (reader) {
      const { done, value } = await reader.read();
      if (done) break;
      size += value.byteLength;
      if (size > limit) {
        await reader.cancel();
        throw new SourceNotReadyError(
          `${field}.repository`,
          `${what} of ${location} is over the limit of ${limit} bytes`,
        );
      }
      chunks.push(Buffer.from(value));
    }
  } catch (err) {
    if (err instanceof SourceNotReadyError) throw err;
    throw new SourceNotReadyError(
      `${field}.repository`,
      `reading ${what} of ${location} from registry ${options.registry} failed (${failureOf(err)}); will retry`,
      { cause: err },
    );
  }
  return Buffer.concat(chunks);
}
