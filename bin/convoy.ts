#!/usr/bin/env node
// The convoy command line. Node >= 22 runs this TypeScript file directly.
import { devCommand, devUsage } from '../dev/dev-command.ts';

const usage = `usage: convoy <command>

commands:
  dev      run convoy on this machine (relay, functions, SQS/S3, HTTP API)

${devUsage}`;

const [command, ...rest] = process.argv.slice(2);
switch (command) {
  case 'dev':
    await devCommand(rest);
    break;
  case undefined:
  case 'help':
  case '--help':
    console.log(usage);
    break;
  default:
    console.error(`convoy: unknown command "${command}"\n\n${usage}`);
    process.exitCode = 2;
}
