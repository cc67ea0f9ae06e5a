import { describe, expect, it } from 'vitest';
import type { Revision } from '../../../domain/api/release-set.ts';
import { renderMatchesRevision, renderOfRevision } from '../../../domain/fleet/render-of-revision.ts';

const gitRevision: Revision = {
  id: 'a1b2c3d4e5f60718',
  templateHash: 'h',
  source: { git: { url: 'https://git.example/apps.git', commit: 'c0ffee' } },
};
const helmRevision: Revision = {
  id: '0718a1b2c3d4e5f6',
  templateHash: 'h',
  source: {
    helm: { repository: 'https://charts.example', chart: 'web', version: '1.2.3', digest: 'sha256:aa' },
  },
};
const ref = (n: number) => `sha256:${String(n).repeat(64).slice(0, 64)}`;

describe('renderOfRevision (a fleet rollback without a recorded render)', () => {
  it('picks the first (newest) render made from the revision’s commit', () => {
    const renders = [
      { renderRef: ref(1), resolvedSource: { git: { url: 'u', ref: 'refs/heads/main', commit: 'beef' } } },
      { renderRef: ref(2), resolvedSource: { git: { url: 'u', ref: 'refs/heads/main', commit: 'c0ffee' } } },
      { renderRef: ref(3), resolvedSource: { git: { url: 'u', ref: 'refs/heads/main', commit: 'c0ffee' } } },
    ];
    expect(renderOfRevision(renders, gitRevision)).toBe(ref(2));
  });

  it('a Helm revision matches chart, version and digest', () => {
    expect(
      renderMatchesRevision(
        { helm: { repository: 'r', chart: 'web', version: '1.2.3', digest: 'sha256:aa' } },
        helmRevision,
      ),
    ).toBe(true);
    expect(
      renderMatchesRevision(
        { helm: { repository: 'r', chart: 'web', version: '1.2.3', digest: 'sha256:bb' } },
        helmRevision,
      ),
    ).toBe(false);
    expect(
      renderMatchesRevision(
        { helm: { repository: 'r', chart: 'web', version: '1.2.4', digest: 'sha256:aa' } },
        helmRevision,
      ),
    ).toBe(false);
  });

  it('no match, a render without resolvedSource, or another kind of source: undefined', () => {
    expect(
      renderOfRevision(
        [
          { renderRef: ref(1) },
          { renderRef: ref(2), resolvedSource: { helm: { chart: 'web', version: '1.2.3' } } },
        ],
        gitRevision,
      ),
    ).toBeUndefined();
    expect(renderOfRevision([], helmRevision)).toBeUndefined();
  });
});
