// The control plane's start error names what /readyz says is failing (a loaded start's
// error showed 500 characters of passing checks and cut the failing one off).
import { describe, expect, it } from 'vitest';
import { readyzSummary } from '../../../dev/control-plane/readiness.ts';

describe('readyzSummary', () => {
  it('keeps only the failing checks of a verbose /readyz body', () => {
    const passing = Array.from({ length: 40 }, (_, i) => `[+]poststarthook/hook-${i} ok`);
    const body = [
      ...passing,
      '[-]poststarthook/rbac/bootstrap-roles failed: reason withheld',
      '[+]shutdown ok',
      'readyz check failed',
    ].join('\n');
    expect(readyzSummary(body)).toBe('[-]poststarthook/rbac/bootstrap-roles failed: reason withheld');
  });

  it('joins several failing checks; a body without any is cut to 500 characters', () => {
    expect(readyzSummary('[+]ping ok\n[-]etcd failed\n[-]informer-sync failed\n')).toBe(
      '[-]etcd failed; [-]informer-sync failed',
    );
    expect(readyzSummary('x'.repeat(600))).toBe('x'.repeat(500));
  });
});
