import { describe, expect, it } from 'vitest';
import { leaseDecision, observeLease, type LeaseRecord } from '../../../domain/relay/leader-lease.ts';

const record = (holder: string | undefined, resourceVersion = '1'): LeaseRecord => ({
  holder,
  renewTime: '2026-01-01T00:00:00.000000Z',
  leaseDurationSeconds: 10,
  resourceVersion,
});

describe('leader Lease decision', () => {
  it('our own Lease is renewed', () => {
    const r = record('me');
    expect(leaseDecision(r, 'me', observeLease(undefined, r, 0), 0, 10_000)).toBe('renew');
  });

  it('a Lease nobody holds (given up on stop) is acquired at once', () => {
    const r = record('');
    expect(leaseDecision(r, 'me', observeLease(undefined, r, 0), 0, 10_000)).toBe('acquire');
  });

  it('another holder is waited for while its record keeps changing', () => {
    let seen = observeLease(undefined, record('other', '1'), 0);
    seen = observeLease(seen, record('other', '2'), 8_000);
    expect(leaseDecision(record('other', '2'), 'me', seen, 15_000, 10_000)).toBe('wait');
  });

  it('another holder is taken over once its record has not changed for leaseDurationSeconds (by our clock)', () => {
    const r = record('other');
    const first = observeLease(undefined, r, 1_000);
    const again = observeLease(first, r, 9_000);
    expect(again.observedAt).toBe(1_000);
    expect(leaseDecision(r, 'me', again, 10_999, 10_000)).toBe('wait');
    expect(leaseDecision(r, 'me', again, 11_000, 10_000)).toBe('acquire');
  });
});
