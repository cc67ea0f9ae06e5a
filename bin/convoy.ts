#!/usr/bin/env node
// The convoy command line. Node >= 22 runs this TypeScript file directly.
import { devCommand, devUsage } from '../dev/dev-command.ts';
import { installCommand } from '../cli/install.ts';
import { cliUsage, isCliVerb, runCli } from '../cli/main.ts';
import { processOutput } from '../cli/output.ts';

const usage = `usage: convoy <command>

commands:
  dev      run convoy on this machine (relay, functions, SQS/S3, HTTP API)
  install  print the install manifests: convoy install --print [--help]

${cliUsage}

${devUsage}`;

const [command, ...rest] = process.argv.slice(2);
switch (command) {
  case 'dev':
    await devCommand(rest);
    break;
  case 'install':
    process.exitCode = installCommand(rest);
    break;
  case undefined:
  case 'help':
  case '--help':
    console.log(usage);
    break;
  default:
    if (isCliVerb(command)) {
      process.exitCode = await runCli(command, rest, processOutput);
      break;
    }
    console.error(`convoy: unknown command "${command}" (see convoy help)`);
    process.exitCode = 2;
}
