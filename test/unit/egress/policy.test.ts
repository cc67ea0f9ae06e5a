import { describe, expect, it } from 'vitest';
import { parseIp } from '../../../domain/egress/ip.ts';
import {
  classifyAddress,
  decideEgress,
  EgressSettingError,
  formatAllowEntry,
  parseClusterNetworks,
  parseEgressAllow,
  STRICT_EGRESS,
  USER_MACHINE_EGRESS,
  type EgressPolicy,
} from '../../../domain/egress/policy.ts';

const at = (address: string, host = address, port = 443) => ({ host, port, address: parseIp(address)! });

describe('egress policy: what an address is', () => {
  it.each([
    ['127.0.0.1', 'loopback'],
    ['127.255.0.9', 'loopback'],
    ['::1', 'loopback'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['169.254.169.254', 'link-local'],
    ['fe80::1', 'link-local'],
    ['0.0.0.0', 'unspecified'],
    ['::', 'unspecified'],
    ['10.1.2.3', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.1.1', 'private'],
    ['100.100.100.200', 'private'],
    ['fd00::1', 'private'],
    ['64:ff9b::7f00:1', 'loopback'],
    ['2002:7f00:1::', 'loopback'],
    ['::127.0.0.1', 'loopback'],
    ['224.0.0.1', 'multicast'],
    ['255.255.255.255', 'reserved'],
    ['192.0.0.192', 'reserved'],
  ])('%s is %s', (address, rule) => {
    expect(classifyAddress(parseIp(address)!)).toBe(rule);
  });

  it.each(['8.8.8.8', '172.32.0.1', '192.0.2.1', '2606:4700::1111', '100.128.0.1'])(
    '%s is public',
    (address) => {
      expect(classifyAddress(parseIp(address)!)).toBeUndefined();
    },
  );
});

describe('egress policy: the decision', () => {
  it('the strict policy (nothing set) allows public addresses only', () => {
    expect(decideEgress(STRICT_EGRESS, at('140.82.112.3', 'github.com'))).toEqual({ allowed: true });
    expect(decideEgress(STRICT_EGRESS, at('127.0.0.1', 'localhost'))).toEqual({
      allowed: false,
      rule: 'loopback',
    });
    expect(decideEgress(STRICT_EGRESS, at('10.0.0.5', 'registry.internal'))).toEqual({
      allowed: false,
      rule: 'private',
    });
  });

  it('host[:port] entries allow that name (and port) whatever it resolves to; not another port', () => {
    const policy: EgressPolicy = {
      allow: parseEgressAllow('registry.internal:5000, git.internal', 'allow'),
      clusterNetworks: [],
    };
    expect(decideEgress(policy, at('10.0.0.5', 'registry.internal', 5000)).allowed).toBe(true);
    expect(decideEgress(policy, at('10.0.0.5', 'registry.internal', 5001))).toEqual({
      allowed: false,
      rule: 'private',
    });
    expect(decideEgress(policy, at('10.0.0.6', 'GIT.internal', 443)).allowed).toBe(true);
    expect(decideEgress(policy, at('10.0.0.6', 'other.internal', 443)).allowed).toBe(false);
  });

  it('IP[:port] entries match the address, in any spelling; *.domain entries match names below it', () => {
    const policy: EgressPolicy = {
      allow: parseEgressAllow('127.0.0.1:6000, [::1]:6001, *.dkr.ecr.eu-west-1.amazonaws.com', 'allow'),
      clusterNetworks: [],
    };
    expect(decideEgress(policy, at('127.0.0.1', 'localhost', 6000)).allowed).toBe(true);
    expect(decideEgress(policy, at('::ffff:127.0.0.1', '::ffff:127.0.0.1', 6000)).allowed).toBe(true);
    expect(decideEgress(policy, at('127.0.0.1', '127.0.0.1', 6443))).toEqual({
      allowed: false,
      rule: 'loopback',
    });
    expect(decideEgress(policy, at('::1', '::1', 6001)).allowed).toBe(true);
    expect(decideEgress(policy, at('10.0.8.1', '1234.dkr.ecr.eu-west-1.amazonaws.com')).allowed).toBe(true);
    expect(decideEgress(policy, at('10.0.8.1', 'dkr.ecr.eu-west-1.amazonaws.com.evil.test')).allowed).toBe(
      false,
    );
  });

  it("a CIDR entry allows its range, except the cluster's networks, which only an exact entry opens", () => {
    const policy: EgressPolicy = {
      allow: parseEgressAllow('10.0.0.0/8, 10.96.0.10:5000', 'allow'),
      clusterNetworks: parseClusterNetworks('10.96.0.0/12, 10.244.0.0/16', 'networks'),
    };
    expect(decideEgress(policy, at('10.1.2.3')).allowed).toBe(true);
    expect(decideEgress(policy, at('10.96.0.1'))).toEqual({ allowed: false, rule: 'cluster-network' });
    expect(decideEgress(policy, at('10.244.3.7'))).toEqual({ allowed: false, rule: 'cluster-network' });
    expect(decideEgress(policy, at('::ffff:10.96.0.1'))).toEqual({ allowed: false, rule: 'cluster-network' });
    expect(decideEgress(policy, at('10.96.0.10', '10.96.0.10', 5000)).allowed).toBe(true);
    // A public cluster range (some Pod networks are) is refused as the cluster's.
    expect(
      decideEgress(
        { allow: [], clusterNetworks: parseClusterNetworks('198.19.0.0/16', 'n') },
        at('198.19.4.4'),
      ).allowed,
    ).toBe(false);
  });

  it('the unspecified address and multicast are refused whatever the allow list says', () => {
    const policy: EgressPolicy = {
      allow: parseEgressAllow('0.0.0.0/0, 0.0.0.0:5000, ::/0', 'allow'),
      clusterNetworks: [],
    };
    expect(decideEgress(policy, at('0.0.0.0', '0.0.0.0', 5000))).toEqual({
      allowed: false,
      rule: 'unspecified',
    });
    expect(decideEgress(policy, at('::', '::', 5000))).toEqual({ allowed: false, rule: 'unspecified' });
    expect(decideEgress(policy, at('224.0.0.251'))).toEqual({ allowed: false, rule: 'multicast' });
    expect(decideEgress(policy, at('127.0.0.1')).allowed).toBe(true);
  });
});

describe('egress policy: the settings', () => {
  it('entries read back as written', () => {
    const text =
      '10.0.0.0/8, fd00::/8, 10.1.2.3, 10.1.2.3:5000, [fd00::1]:443, fd00::2, registry.internal, registry.internal:5000, *.example.com, *.example.com:8443';
    expect(parseEgressAllow(text, 'allow').map(formatAllowEntry)).toEqual([
      '10.0.0.0/8',
      'fd00::/8',
      '10.1.2.3',
      '10.1.2.3:5000',
      '[fd00::1]:443',
      'fd00::2',
      'registry.internal',
      'registry.internal:5000',
      '*.example.com',
      '*.example.com:8443',
    ]);
    expect(parseEgressAllow('', 'allow')).toEqual([]);
    expect(parseEgressAllow(undefined, 'allow')).toEqual([]);
  });

  it.each([
    ['10.0.0.0/33', /is not a CIDR/],
    ['host:99999', /no valid port/],
    ['host:', /no valid port/],
    ['registry.local.', /trailing dot/],
    ['http://registry', /none of CIDR/],
    ['user@host', /none of CIDR/],
    ['2130706433', /none of CIDR/],
    ['[::1', /none of CIDR|IPv6/],
    ['300.1.1.1', /not an IPv4 address/],
  ])('bad entry %s names the setting and the entry', (entry, message) => {
    const attempt = () => parseEgressAllow(entry, 'CONVOY_EGRESS_ALLOW');
    expect(attempt).toThrow(EgressSettingError);
    expect(attempt).toThrow(/^CONVOY_EGRESS_ALLOW: /);
    expect(attempt).toThrow(message);
  });

  it('cluster networks are CIDRs only', () => {
    expect(() => parseClusterNetworks('10.96.0.0/12, kube', 'CONVOY_CLUSTER_NETWORKS')).toThrow(
      'CONVOY_CLUSTER_NETWORKS: "kube" is not a CIDR',
    );
  });
});

describe('egress policy: the user machine policy (the CLI render)', () => {
  it('allows loopback and private addresses, never the unspecified address', () => {
    expect(decideEgress(USER_MACHINE_EGRESS, at('127.0.0.1', 'localhost', 9418)).allowed).toBe(true);
    expect(decideEgress(USER_MACHINE_EGRESS, at('::1', '::1', 9418)).allowed).toBe(true);
    expect(decideEgress(USER_MACHINE_EGRESS, at('10.1.1.1')).allowed).toBe(true);
    expect(decideEgress(USER_MACHINE_EGRESS, at('0.0.0.0'))).toEqual({ allowed: false, rule: 'unspecified' });
  });
});
