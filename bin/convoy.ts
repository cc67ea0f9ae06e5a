#!/usr/bin/env node
// The convoy command line. Node >= 22 runs this TypeScript file directly (the package ships it
// compiled). The Node version is checked first; everything else is imported after the check, so an
// older Node prints one line instead of a stack trace from a module it cannot load.
import { nodeVersionProblem } from './node-version.ts';

const problem = nodeVersionProblem(process.versions.node);
if (problem !== undefined) {
  process.stderr.write(`${problem}\n`);
  process.exitCode = 1;
} else {
  await main(process.argv.slice(2));
}

async function main(argv: string[]): Promise<void> {
  const { cliUsage, isCliVerb, runCli } = await import('../cli/main.ts');
  const [command, ...rest] = argv;
  switch (command) {
    case 'dev': {
      const { devCommand } = await import('../dev/dev-command.ts');
      await devCommand(rest);
      break;
    }
    case 'install': {
      const { installCommand } = await import('../cli/install.ts');
      process.exitCode = installCommand(rest);
      break;
    }
    case undefined:
    case 'help':
    case '--help': {
      const { devUsage } = await import('../dev/dev-command.ts');
      console.log(usage(cliUsage, devUsage));
      break;
    }
    default:
      if (isCliVerb(command)) {
        const { processOutput } = await import('../cli/output.ts');
        process.exitCode = await runCli(command, rest, processOutput);
        break;
      }
      console.error(`convoy: unknown command "${command}" (see convoy help)`);
      process.exitCode = 2;
  }
}

function usage(cliUsage: string, devUsage: string): string {
  return `usage: convoy <command>

commands:
  dev      run convoy on this machine (relay, functions, SQS/S3, HTTP API)
  install  print the install manifests: convoy install --print [--help]

${cliUsage}

${devUsage}`;
}
