import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  DEFAULT_EPHEMERAL_RANGE,
  freePorts,
  LOWEST_PICKED_PORT,
  parsePortRange,
  pickableSpans,
  portAt,
} from '../../../dev/control-plane/free-ports.ts';

describe('free ports outside the ephemeral range (a probed port taken by an outgoing connection)', () => {
  it('reads ip_local_port_range; anything else is undefined', () => {
    expect(parsePortRange('32768\t60999\n')).toEqual([32768, 60999]);
    expect(parsePortRange('1024 65000')).toEqual([1024, 65000]);
    for (const bad of ['', '32768', '60999 32768', 'a b', '0 100', '1 70000', '1 2 3'])
      expect(parsePortRange(bad), bad).toBeUndefined();
  });

  it('picks below and above the ephemeral range, from 10000 up', () => {
    expect(pickableSpans(DEFAULT_EPHEMERAL_RANGE)).toEqual([
      [LOWEST_PICKED_PORT, 32767],
      [61000, 65535],
    ]);
    expect(pickableSpans([1024, 65535])).toEqual([]); // no room: the caller asks the OS
    expect(pickableSpans([40000, 65535])).toEqual([[10000, 39999]]);
    expect(pickableSpans([5000, 20000])).toEqual([[20001, 65535]]);
  });

  it('maps an index onto the spans, every port once', () => {
    const spans: [number, number][] = [
      [10, 12],
      [20, 21],
    ];
    expect([0, 1, 2, 3, 4].map((i) => portAt(spans, i))).toEqual([10, 11, 12, 20, 21]);
    expect(() => portAt(spans, 5)).toThrow(RangeError);
  });

  it("gives n distinct ports that can be listened on, none in this machine's ephemeral range when it leaves room", async () => {
    const ports = await freePorts(8);
    expect(new Set(ports).size).toBe(8);
    const range =
      parsePortRange(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8')) ??
      DEFAULT_EPHEMERAL_RANGE;
    const [low, high] = range;
    // None of them is one an outgoing connection could take (this machine's range leaves room).
    expect(pickableSpans(range).length).toBeGreaterThan(0);
    for (const port of ports) expect(port < low || port > high, String(port)).toBe(true);
  });
});
