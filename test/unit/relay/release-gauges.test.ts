import { describe, expect, it } from 'vitest';
import type { Release } from '../../../domain/api/index.ts';
import { escapeLabelValue, renderReleaseGauges } from '../../../relay/release-gauges.ts';

describe('per-Release gauges as exposition text', () => {
  it('escapes backslash, double quote and newline in label values', () => {
    expect(escapeLabelValue('a\\b"c\nd')).toBe('a\\\\b\\"c\\nd');
  });

  it('writes HELP and TYPE for each family even with no Releases', () => {
    const text = renderReleaseGauges([], 0);
    for (const name of [
      'convoy_release_condition',
      'convoy_release_rollout_state',
      'convoy_release_seconds_since_last_success',
    ]) {
      expect(text).toContain(`# TYPE ${name} gauge\n`);
    }
    expect(text.split('\n').filter((l) => l !== '' && !l.startsWith('#'))).toEqual([]);
  });

  it('leaves out what a Release does not have, and never goes below 0 seconds', () => {
    const release = {
      metadata: { namespace: 'ns', name: 'r' },
      status: { conditions: [], lastSuccessful: { attemptedAt: '2026-12-01T10:00:10Z' } },
    } as unknown as Release;
    const text = renderReleaseGauges([release], Date.parse('2026-12-01T10:00:00Z'));
    expect(text).toContain('convoy_release_seconds_since_last_success{namespace="ns",name="r"} 0\n');
    expect(text).not.toContain('convoy_release_rollout_state{');
  });
});
