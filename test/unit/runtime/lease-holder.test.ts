import { describe, expect, it } from 'vitest';
import { busyWaitMs, holderAlive } from '../../../domain/runtime/lease.ts';

const NOW = new Date('2026-01-01T12:00:00Z');
const busy = (renewedSecondsAgo: number) => ({
  kind: 'busy' as const,
  holder: 'reconcile@x',
  holderSentAt: '2026-01-01T11:59:00Z',
  renewedAt: new Date(NOW.getTime() - renewedSecondsAgo * 1000).toISOString(),
  durationSeconds: 60,
});

describe('a busy Lease whose holder crashed', () => {
  it('a holder that renewed within two heartbeats (30 s for a 60-s Lease) is alive; a silent one is not', () => {
    expect(holderAlive(busy(10), NOW)).toBe(true);
    expect(holderAlive(busy(31), NOW)).toBe(false);
    expect(holderAlive({ kind: 'busy', holder: '(raced)' }, NOW)).toBe(true);
  });

  it('a message that finds a crashed holder waits until the Lease expires (it is not covered by that run)', () => {
    expect(busyWaitMs(busy(45), NOW, () => 0)).toBe(16_000);
  });
});
