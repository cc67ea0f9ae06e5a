// spec.dependsOn and spec.dependencyPolicy as admission sees them (the zod schema the CRD is generated from).
import { describe, expect, it } from 'vitest';
import { releaseSpecSchema } from '../../../domain/api/release-spec.ts';
import { crdOf } from '../../../domain/api/crd.ts';
import { kinds } from '../../../domain/api/kinds.ts';

const base = {
  cluster: { name: 'local' },
  source: { git: { url: 'https://example.com/r.git', ref: { branch: 'main' } } },
};
const parse = (extra: Record<string, unknown>) => releaseSpecSchema.safeParse({ ...base, ...extra });

describe('spec.dependsOn', () => {
  it('defaults kind Release and condition Ready', () => {
    const parsed = parse({ dependsOn: [{ name: 'cert-manager', namespace: 'platform' }] });
    expect(parsed.success).toBe(true);
    expect(parsed.data?.dependsOn).toEqual([
      { kind: 'Release', name: 'cert-manager', namespace: 'platform', condition: 'Ready' },
    ]);
    expect(parsed.data?.dependencyPolicy).toBeUndefined();
  });

  it('refuses an empty name, a name that is not a DNS name and an unknown kind', () => {
    expect(parse({ dependsOn: [{ name: '' }] }).success).toBe(false);
    expect(parse({ dependsOn: [{ name: 'Not_DNS' }] }).success).toBe(false);
    expect(parse({ dependsOn: [{ kind: 'Deployment', name: 'x' }] }).success).toBe(false);
  });

  it('condition Succeeded only for a ReleaseSet, which takes Ready or Succeeded (zod as the CRD)', () => {
    expect(parse({ dependsOn: [{ name: 'x', condition: 'Succeeded' }] }).success).toBe(false);
    expect(parse({ dependsOn: [{ kind: 'ReleaseSet', name: 'x', condition: 'Healthy' }] }).success).toBe(
      false,
    );
    expect(parse({ dependsOn: [{ kind: 'ReleaseSet', name: 'x', condition: 'Succeeded' }] }).success).toBe(
      true,
    );
  });

  it('takes at most 64 entries (1,000 are refused)', () => {
    const many = (n: number) => Array.from({ length: n }, (_, i) => ({ name: `dep-${i}` }));
    expect(parse({ dependsOn: many(64) }).success).toBe(true);
    expect(parse({ dependsOn: many(1000) }).success).toBe(false);
  });

  it('dependencyPolicy: upgradeOrdering defaults to true; timeout is a duration', () => {
    expect(parse({ dependencyPolicy: {} }).data?.dependencyPolicy).toEqual({ upgradeOrdering: true });
    expect(parse({ dependencyPolicy: { timeout: 'soon' } }).success).toBe(false);
  });

  it('the CRD carries the per-entry rules and the self-reference rule over the whole object', () => {
    const release = kinds.find((k) => k.kind === 'Release')!;
    const text = JSON.stringify(crdOf(release));
    expect(text).toContain("self.kind == 'ReleaseSet' || self.condition != 'Succeeded'");
    expect(text).toContain('spec.dependsOn names this Release itself');
  });
});
