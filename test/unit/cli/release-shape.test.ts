import { describe, expect, it } from 'vitest';
import { printableRelease, releaseShapeProblem } from '../../../cli/release-shape.ts';

const release = (status?: unknown) => ({
  apiVersion: 'convoy.dev/v1alpha1',
  kind: 'Release',
  metadata: { name: 'app', namespace: 'ns' },
  spec: { source: { git: { url: 'https://git.example/app.git' } } },
  ...(status === undefined ? {} : { status }),
});

describe('the light check convoy get prints Releases with (instead of the full schema)', () => {
  it('passes a Release with or without a status', () => {
    expect(releaseShapeProblem(release())).toBeUndefined();
    expect(
      releaseShapeProblem(
        release({
          conditions: [{ type: 'Applied', status: 'True' }],
          rollout: { renderRef: 'sha256:x', state: 'Succeeded' },
        }),
      ),
    ).toBeUndefined();
  });

  it('names the field whose type is wrong, in one line naming the Release', () => {
    expect(releaseShapeProblem({ metadata: { name: 'app' } })).toBe('spec is not an object');
    expect(releaseShapeProblem(release({ conditions: {} }))).toBe('status.conditions is not a list');
    expect(releaseShapeProblem(release({ conditions: [{ type: 'Applied' }] }))).toBe(
      'status.conditions[0] has no string type and status',
    );
    expect(releaseShapeProblem(release({ rollout: 'Succeeded' }))).toBe('status.rollout is not an object');
    expect(() => printableRelease(release({ lastSuccessful: [] }), { namespace: 'ns', name: 'app' })).toThrow(
      'Release ns/app does not parse: status.lastSuccessful is not an object',
    );
  });
});
