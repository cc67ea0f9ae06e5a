// A ReleaseSet's template may carry spec.dependsOn; `${cluster.name}` names the dependency on the
// same Cluster, and each child is validated with the Release schema (the dependsOn rules included).
import { describe, expect, it } from 'vitest';
import { releaseSetSpecSchema } from '../../../domain/api/release-set.ts';
import { generateChild } from '../../../domain/fleet/generate-child.ts';
import { revisionOf } from '../../../domain/fleet/revision.ts';
import { cluster, COMMIT_A } from '../fleet/fleet-fixtures.ts';

const set = { name: 'app', namespace: 'fleet', uid: 'u1' };
const revision = revisionOf('sha256:t', { git: { url: 'https://git.example/apps.git', commit: COMMIT_A } });
const withDeps = (dependsOn: unknown) =>
  releaseSetSpecSchema.parse({
    clusters: { selector: {} },
    template: {
      spec: {
        source: { git: { url: 'https://git.example/apps.git', ref: { branch: 'main' } } },
        dependsOn,
        dependencyPolicy: { timeout: '30m' },
      },
    },
  });

describe('dependsOn in a ReleaseSet template', () => {
  it("each child waits for its own Cluster's operator child: ${cluster.name} in the name", () => {
    const generated = generateChild(
      set,
      withDeps([{ name: 'operator-${cluster.name}' }]),
      cluster('eu-1', {}, {}),
      revision,
      undefined,
    );
    expect(generated.ok && generated.child.spec['dependsOn']).toEqual([{ name: 'operator-eu-1' }]);
  });

  it('a child whose dependsOn breaks the rules is refused, naming the field', () => {
    const generated = generateChild(
      set,
      withDeps([{ kind: 'Release', name: 'operator', condition: 'Succeeded' }]),
      cluster('eu-1', {}, {}),
      revision,
      undefined,
    );
    expect(generated.ok).toBe(false);
  });
});
