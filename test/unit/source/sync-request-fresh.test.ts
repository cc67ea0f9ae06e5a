import { describe, expect, it } from 'vitest';
import type { Release } from '../../../domain/api/index.ts';
import { Annotation, hasUnansweredSyncRequest } from '../../../domain/reconcile/annotations.ts';

const release = (annotations: Record<string, string>, attemptedAt?: string) =>
  ({
    metadata: { name: 'r', namespace: 'n', annotations },
    spec: {},
    ...(attemptedAt ? { status: { lastAttempted: { attemptedAt } } } : {}),
  }) as unknown as Release;

describe('a sync request not followed by an attempt resolves the source fresh', () => {
  it('counts /sync and /sync?force=true requests at or after the last attempt, never older ones', () => {
    expect(hasUnansweredSyncRequest(release({}))).toBe(false);
    expect(hasUnansweredSyncRequest(release({ [Annotation.syncRequestedAt]: '2026-12-01T10:00:05Z' }))).toBe(
      true,
    );
    expect(
      hasUnansweredSyncRequest(
        release({ [Annotation.syncRequestedAt]: '2026-12-01T10:00:05Z' }, '2026-12-01T10:00:04Z'),
      ),
    ).toBe(true);
    // The same second: both are whole seconds, so it may not have been seen yet.
    expect(
      hasUnansweredSyncRequest(
        release({ [Annotation.forceSyncRequestedAt]: '2026-12-01T10:00:05Z' }, '2026-12-01T10:00:05Z'),
      ),
    ).toBe(true);
    expect(
      hasUnansweredSyncRequest(
        release({ [Annotation.syncRequestedAt]: '2026-12-01T10:00:05Z' }, '2026-12-01T10:00:06Z'),
      ),
    ).toBe(false);
    expect(hasUnansweredSyncRequest(release({ [Annotation.syncRequestedAt]: '' }))).toBe(false);
  });
});
