// The construct's egress allow list: the top-level `egressAllow` prop (a list) and the older
// `tenancy.egressAllow` (one comma-separated string) become every function's CONVOY_EGRESS_ALLOW
// and the relay ConfigMap's entry; the top-level list, when given, replaces the tenancy string; a
// malformed entry fails synth naming it.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { afterAll, describe, expect, it } from 'vitest';
import { Convoy, type ConvoyProps } from '../../../infra/convoy-construct.ts';

const outdir = mkdtempSync(join(tmpdir(), 'convoy-egress-construct-'));
afterAll(() => rmSync(outdir, { recursive: true, force: true }));

type Resources = Record<string, { Properties: Record<string, unknown> }>;

/** CONVOY_EGRESS_ALLOW of every convoy function, and of the relay's ConfigMap. */
function egressAllowOf(props: Partial<ConvoyProps>): { functions: unknown[]; relay: unknown } {
  const app = new App({
    outdir,
    context: { 'aws:cdk:disable-asset-staging': true, 'aws:cdk:bundling-stacks': [] },
  });
  const stack = new Stack(app, 'User', { env: { account: '111111111111', region: 'eu-west-1' } });
  const convoy = new Convoy(stack, 'Convoy', { kubeconfigPath: '/opt/kubeconfig', ...props });
  const functions = Object.values(
    Template.fromStack(stack).findResources('AWS::Lambda::Function') as Resources,
  )
    .filter((f) => String(f.Properties['Description']).startsWith('convoy '))
    .map(
      (f) =>
        (f.Properties['Environment'] as { Variables: Record<string, unknown> }).Variables[
          'CONVOY_EGRESS_ALLOW'
        ],
    );
  const configMap = convoy.relayManifests.find((m) => m.kind === 'ConfigMap') as
    { data?: Record<string, unknown> } | undefined;
  return { functions, relay: configMap?.data?.['CONVOY_EGRESS_ALLOW'] };
}

describe('the egress allow list from the construct', { timeout: 120_000 }, () => {
  it('egressAllow is every function’s CONVOY_EGRESS_ALLOW and the relay’s; default none (public addresses only)', () => {
    const set = egressAllowOf({
      egressAllow: ['registry.internal:5000', '10.0.0.0/8', '*.dkr.ecr.eu-west-1.amazonaws.com'],
    });
    expect(set.functions.length).toBeGreaterThanOrEqual(4);
    expect(new Set(set.functions)).toEqual(
      new Set(['registry.internal:5000,10.0.0.0/8,*.dkr.ecr.eu-west-1.amazonaws.com']),
    );
    expect(set.relay).toBe('registry.internal:5000,10.0.0.0/8,*.dkr.ecr.eu-west-1.amazonaws.com');
    const none = egressAllowOf({});
    expect(new Set(none.functions)).toEqual(new Set([undefined]));
    expect(none.relay).toBeUndefined();
  });

  it('tenancy.egressAllow still works alone; egressAllow, when given, replaces it (even empty: the strict policy)', () => {
    const tenancy = { egressAllow: 'git.internal:443' };
    expect(new Set(egressAllowOf({ tenancy }).functions)).toEqual(new Set(['git.internal:443']));
    expect(new Set(egressAllowOf({ tenancy, egressAllow: ['10.1.0.0/16'] }).functions)).toEqual(
      new Set(['10.1.0.0/16']),
    );
    expect(new Set(egressAllowOf({ tenancy, egressAllow: [] }).functions)).toEqual(new Set([undefined]));
  });

  it('a malformed entry fails synth, naming it', () => {
    expect(() => egressAllowOf({ egressAllow: ['10.0.0.0/8', 'http://registry.internal'] })).toThrow(
      /^egressAllow: "http:\/\/registry.internal" is none of CIDR/,
    );
  });
});
