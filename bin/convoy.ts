#!/usr/bin/env node
// The convoy command line. Node >= 22 runs this TypeScript file directly.
import { devCommand, devUsage } from '../dev/dev-command.ts';
import { statusCommand, statusUsage, waitCommand } from '../dev/status-command.ts';

const usage = `usage: convoy <command>

commands:
  dev      run convoy on this machine (relay, functions, SQS/S3, HTTP API)
  status   the combined verdict of a Release
  wait     wait until a Release is Ready

${devUsage}

${statusUsage}`;

const [command, ...rest] = process.argv.slice(2);
switch (command) {
  case 'dev':
    await devCommand(rest);
    break;
  case 'status':
    await statusCommand(rest);
    break;
  case 'wait':
    await waitCommand(rest);
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
