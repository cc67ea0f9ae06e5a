// bin/convoy.ts checks the Node version before importing anything; the compiled bin run by a real
// Node 20 is in test/package/package.test.ts.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { MINIMUM_NODE, nodeVersionProblem } from '../../../bin/node-version.ts';

describe('the Node version convoy needs', () => {
  it.each([['22.13.0'], ['22.20.1'], ['23.0.0'], ['24.22.3'], ['30.1.0']])('Node %s is enough', (version) => {
    expect(nodeVersionProblem(version)).toBeUndefined();
  });

  it.each([['20.20.2'], ['18.19.0'], ['22.12.0'], ['22.5.1']])(
    'Node %s gets one line naming both versions',
    (version) => {
      const line = nodeVersionProblem(version);
      expect(line).toBe(
        `convoy needs Node.js ${MINIMUM_NODE} or later (Node 22 LTS or 24); this is Node.js ${version}. Install a newer one (https://nodejs.org, nvm install 24) and run convoy again.`,
      );
    },
  );

  it("package.json's engines.node (what npm warns about) names the same minimum the CLI checks", () => {
    const pkg = JSON.parse(
      readFileSync(join(import.meta.dirname, '..', '..', '..', 'package.json'), 'utf8'),
    ) as { engines: { node: string } };
    expect(pkg.engines.node).toBe(`>=${MINIMUM_NODE}`);
  });
});
