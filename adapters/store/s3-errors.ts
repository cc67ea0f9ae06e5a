// How S3 errors read to the render store: absent, or unavailable with a hint.
import { RenderStoreUnavailableError } from '../../domain/store/render-store.ts';

/** NoSuchKey / NotFound, or a bare 404 (HEAD has no error body). */
export function isNotFound(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  if (error.name === 'NoSuchKey' || error.name === 'NotFound') return true;
  // HEAD has no error body, so some S3-compatible servers give only the status.
  const status = (error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
  return status === 404 && error.name !== 'NoSuchBucket';
}

function errorNameOf(error: unknown): string {
  if (!(error instanceof Error)) return typeof error;
  // Network errors carry the system code (ECONNREFUSED, ETIMEDOUT) and a generic name.
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string' && code !== '') return code;
  return error.name;
}

export function unavailableError(
  operation: string,
  bucket: string,
  key: string,
  error: unknown,
): RenderStoreUnavailableError {
  const errorName = errorNameOf(error);
  const status = (error as { $metadata?: { httpStatusCode?: number } } | undefined)?.$metadata
    ?.httpStatusCode;
  const hint =
    errorName === 'AccessDenied' || errorName === 'Forbidden' || status === 403
      ? 'check that the role may s3:GetObject, s3:PutObject, s3:DeleteObject and s3:ListBucket on the bucket, and use its KMS key'
      : errorName === 'NoSuchBucket'
        ? 'create the bucket or fix the configured render store bucket name'
        : status === undefined
          ? 'check that the S3 endpoint is reachable; convoy retries'
          : 'convoy retries';
  return new RenderStoreUnavailableError(
    operation,
    key,
    errorName,
    `render store: ${operation} s3://${bucket}/${key} failed: ${errorName}${status === undefined ? '' : ` (HTTP ${status})`}; ${hint}`,
    error,
  );
}
