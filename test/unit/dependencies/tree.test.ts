// `convoy deps`: the graph as lines, each dependency with what its dependent judges of it and its own verdict.
import { describe, expect, it } from 'vitest';
import { printTree } from '../../../cli/deps.ts';
import { verdictLine } from '../../../cli/verdict-line.ts';
import { dependencyTree } from '../../../domain/dependencies/tree.ts';
import { combinedVerdict } from '../../../domain/status/verdict.ts';
import { readsOf, rel } from './fixtures.ts';

describe('convoy deps', () => {
  it('prints the chain with each node judged and its verdict; a cycle is marked, not followed', async () => {
    const c = rel('c', 'new', [{ name: 'b' }, { name: 'ghost' }]);
    const b = rel('b', 'new', [{ name: 'a' }]);
    const a = rel('a', 'ready', [{ name: 'c' }]);
    const lines = printTree(await dependencyTree(c, readsOf([a, b, c]), verdictLine), '  ');
    expect(lines).toEqual([
      expect.stringMatching(/^ {2}├─ Release team-a\/b \(Ready\): not ready yet — Waiting \(Applied\)/),
      expect.stringMatching(/^ {2}│ {2}└─ Release team-a\/a \(Ready\): ready — Ready/),
      expect.stringMatching(/^ {2}│ {5}└─ Release team-a\/c \(Ready\): not ready yet \[cycle\]/),
      '  └─ Release team-a/ghost (Ready): not found — Release does not exist',
    ]);
  });

  it("a waiting dependent's own verdict (convoy status, convoy wait) names what it waits for", () => {
    const waiting = rel('c', 'ready', [{ name: 'b' }], {
      applied: {
        type: 'Applied',
        status: 'False',
        reason: 'DependencyNotReady',
        message: 'waits for Release team-a/b (Ready): not ready yet',
        lastTransitionTime: '2026-12-07T10:00:00Z',
        observedGeneration: 3,
      },
    });
    expect(verdictLine(combinedVerdict(waiting))).toBe(
      'Waiting (Applied): Applied is False (DependencyNotReady): waits for Release team-a/b (Ready): not ready yet',
    );
  });
});
