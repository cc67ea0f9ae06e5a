#!/usr/bin/env node
// The convoy command line. Node >= 22 runs this TypeScript file directly (the package ships it
// compiled). The Node version is checked first; everything else is imported after the check, so an
// older Node prints one line instead of a stack trace from a module it cannot load (node:sqlite).
import { nodeVersionProblem } from './node-version.ts';

const problem = nodeVersionProblem(process.versions.node);
if (problem !== undefined) {
  process.stderr.write(`${problem}\n`);
  process.exitCode = 1;
} else {
  const { runCli } = await import('../cli/main.ts');
  const { processOutput } = await import('../cli/output.ts');
  process.exitCode = await runCli(process.argv.slice(2), processOutput);
}
