import { describe, expect, it } from 'vitest';
import {
  canonicalIp,
  cidrContains,
  embeddedIpv4,
  formatIp,
  parseCidr,
  parseIp,
} from '../../../domain/egress/ip.ts';

const show = (text: string) => {
  const ip = parseIp(text);
  return ip === undefined ? undefined : formatIp(canonicalIp(ip));
};

describe('IP literals in every spelling that reaches the same address', () => {
  it.each([
    ['127.0.0.1', '127.0.0.1'],
    ['2130706433', '127.0.0.1'],
    ['0177.0.0.1', '127.0.0.1'],
    ['0x7f.0.0.1', '127.0.0.1'],
    ['0x7f.1', '127.0.0.1'],
    ['127.1', '127.0.0.1'],
    ['0x7F000001', '127.0.0.1'],
    ['017700000001', '127.0.0.1'],
    ['169.254.169.254', '169.254.169.254'],
    ['0xa9fea9fe', '169.254.169.254'],
    ['0', '0.0.0.0'],
    ['[::1]', '::1'],
    ['::1', '::1'],
    ['[::ffff:127.0.0.1]', '127.0.0.1'],
    ['::ffff:7f00:1', '127.0.0.1'],
    ['[0:0:0:0:0:ffff:7f00:0001]', '127.0.0.1'],
    ['fe80::1%eth0', 'fe80::1'],
    ['[::]', '::'],
    ['2001:db8::8:800:200c:417a', '2001:db8::8:800:200c:417a'],
  ])('%s is %s', (text, expected) => {
    expect(show(text)).toBe(expected);
  });

  it.each([
    'example.com',
    '1.2.3.4.5',
    '256.0.0.1',
    '4294967296',
    '08.0.0.1',
    '0x.1g',
    'localhost',
    '1.2.3.example',
    '::1::2',
    '[::1',
    '1:2:3:4:5:6:7:8:9',
    '',
    'fe80::1::',
  ])('%s is not an IP literal', (text) => {
    expect(parseIp(text)).toBeUndefined();
  });

  it('an IPv6 address carrying an IPv4 one gives it up: mapped, compatible, NAT64, 6to4', () => {
    for (const text of ['::ffff:10.0.0.1', '::10.0.0.1', '64:ff9b::a00:1', '2002:a00:1::']) {
      expect(formatIp(embeddedIpv4(parseIp(text)!)!), text).toBe('10.0.0.1');
    }
    expect(embeddedIpv4(parseIp('::1')!)).toBeUndefined();
    expect(embeddedIpv4(parseIp('2001:db8::1')!)).toBeUndefined();
  });

  it('CIDRs: contain what they should, across the mapped form; malformed ones do not parse', () => {
    const ten = parseCidr('10.0.0.0/8')!;
    expect(cidrContains(ten, parseIp('10.200.3.4')!)).toBe(true);
    expect(cidrContains(ten, parseIp('::ffff:10.1.1.1')!)).toBe(true);
    expect(cidrContains(ten, parseIp('11.0.0.1')!)).toBe(false);
    expect(cidrContains(parseCidr('fd00::/8')!, parseIp('fd12::1')!)).toBe(true);
    expect(cidrContains(parseCidr('0.0.0.0/0')!, parseIp('8.8.8.8')!)).toBe(true);
    for (const bad of ['10.0.0.0/33', '10.0.0/8', '2130706433/8', 'fd00::/129', '10.0.0.0', '10.0.0.0/x'])
      expect(parseCidr(bad), bad).toBeUndefined();
  });
});
