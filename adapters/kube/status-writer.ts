import { API_GROUP, API_VERSION } from '../../domain/api/common.ts';
import { releaseStatusSchema } from '../../domain/api/release-status.ts';
import { FieldManager } from '../../domain/status/field-managers.ts';
import { statusPatchBody, type AnySlice } from '../../domain/status/slices.ts';
import { applyPatchText } from './apply-patch-text.ts';
import { releasePath } from './convoy-paths.ts';
import { createKubeClient, isKubeApiError, KubeApiError, PATCH_CONTENT_TYPES } from './http.ts';
import type { KubeClientConfig } from './kubeconfig.ts';

export interface ReleaseKey {
  namespace: string;
  name: string;
}

export interface StatusWriter {
  /**
   * Server-side-applies one writer's slice to the Release's /status; returns the new resourceVersion.
   * @throws StatusRefusedError when the slice breaks the CRD's schema (checked before sending) or the server refuses it (422).
   */
  apply(key: ReleaseKey, write: AnySlice): Promise<{ resourceVersion: string | undefined }>;
}

/**
 * A status convoy computed that its own CRD refuses: a bug or a value convoy
 * copied from bad input. Retrying cannot fix it; the caller ends the run
 * with a named reason instead (the run's fallback: functions/runtime/run-commit.ts).
 */
export class StatusRefusedError extends Error {
  override name = 'StatusRefusedError';
  readonly retryable = false;
}

const MAX_DETAIL = 500;

/** The problems the CRD schema (generated from the same zod schema) would report, or undefined. */
export function statusProblems(status: Record<string, unknown>): string | undefined {
  const parsed = releaseStatusSchema.safeParse(status);
  if (parsed.success) return undefined;
  return parsed.error.issues
    .slice(0, 5)
    .map((issue) => `status.${issue.path.map(String).join('.')}: ${issue.message}`)
    .join('; ');
}

/** The one module that writes Release status: SSA on /status with the writer's own field manager. */
export function createStatusWriter(config: KubeClientConfig): StatusWriter {
  const client = createKubeClient(config);
  return {
    async apply(key, write) {
      const status = statusPatchBody(write.manager, write.slice);
      const problems = statusProblems(status);
      if (problems !== undefined) {
        throw new StatusRefusedError(
          `the ${write.manager} status is not valid for the Release CRD, so it was not sent: ${problems}`,
        );
      }
      const body = {
        apiVersion: `${API_GROUP}/${API_VERSION}`,
        kind: 'Release',
        metadata: { name: key.name, namespace: key.namespace },
        status,
      };
      const path = releasePath(key.namespace, key.name, 'status');
      try {
        const response = await client.http({
          method: 'PATCH',
          path,
          body: applyPatchText(body),
          contentType: PATCH_CONTENT_TYPES.apply,
          query: { fieldManager: write.manager, force: 'true' },
        });
        if (response.status < 200 || response.status > 299)
          throw new KubeApiError(
            `PATCH ${path}: HTTP ${response.status}${serverMessage(response.body)}`,
            response,
          );
        return {
          resourceVersion: (response.body as { metadata?: { resourceVersion?: string } } | undefined)
            ?.metadata?.resourceVersion,
        };
      } catch (error) {
        if (isKubeApiError(error, 422) || isKubeApiError(error, 400)) {
          const detail =
            error.message.length > MAX_DETAIL ? `${error.message.slice(0, MAX_DETAIL)}…` : error.message;
          throw new StatusRefusedError(`the API server refused the ${write.manager} status: ${detail}`, {
            cause: error,
          });
        }
        throw error;
      }
    },
  };
}

function serverMessage(body: unknown): string {
  const message =
    typeof body === 'object' && body !== null && typeof (body as { message?: unknown }).message === 'string'
      ? (body as { message: string }).message
      : '';
  return message === '' ? '' : `: ${message}`;
}

export { FieldManager };
