// A convoy-release status slice with every field present and unset, for tests to fill in.
import type { ReleaseSlice } from '../../domain/status/slices.ts';

export function releaseSliceWith(over: Partial<ReleaseSlice> = {}): ReleaseSlice {
  return {
    observedGeneration: 1,
    reconciledAt: undefined,
    lastAttempted: undefined,
    lastSuccessful: undefined,
    lastHealthy: undefined,
    rollout: undefined,
    pin: undefined,
    waves: undefined,
    lifecycle: undefined,
    resolvedRetentionPolicy: undefined,
    lastHandledSyncAt: undefined,
    lastHandledForceSyncAt: undefined,
    conditions: [],
    ...over,
  };
}
