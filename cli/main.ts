/**
 * The `convoy` command line (also `kubectl convoy`, through the `kubectl-convoy` bin), parsed by
 * commander from the verb table in cli/verbs.ts: `convoy <verb> --help` for each verb, `version`
 * / `--version`, `completion bash|zsh|fish`. `dev` and `install` keep their own parsers: their argv
 * is passed through unchanged. `runCli` never throws: every error is one line on stderr and an
 * exit code (0 done, 1 a failure, 2 a usage error, 3 `status` waiting).
 *
 * Only commander and the verb table load before a verb runs; the verb's module (and with it the
 * Kubernetes transport, zod, YAML) is imported when it runs, so `convoy --help` stays cheap.
 */
import { Argument, Command, CommanderError, Option } from 'commander';
import { ExitCode, type Output } from './output.ts';
import type { VerbInput } from './args.ts';
import { GLOBAL_FLAGS, VERBS, type FlagSpec, type VerbSpec } from './verbs.ts';
import { convoyVersion } from './version.ts';

/** The commands that are not Release verbs, for help and completion. */
export const OTHER_COMMANDS = [
  {
    name: 'dev',
    summary: 'run convoy on this machine (relay, functions, SQS/S3, HTTP API): convoy dev --help',
  },
  {
    name: 'install',
    summary: 'print the install manifests: convoy install --print --image <image> (--help)',
  },
  { name: 'version', summary: 'print the version of convoy and of Node.js' },
  { name: 'completion', summary: 'print the completion script for bash, zsh or fish' },
] as const;

export const COMPLETION_SHELLS = ['bash', 'zsh', 'fish'] as const;

function addFlag(command: Command, flag: FlagSpec): void {
  const option = new Option(flag.flags, flag.description);
  if (flag.choices !== undefined) option.choices(flag.choices);
  if (flag.default !== undefined) option.default(flag.default);
  command.addOption(option);
}

/** The verb's flags by their long name (`all-namespaces`), as the verbs read them. */
function inputOf(command: Command): VerbInput {
  const opts = command.opts<Record<string, string | boolean | undefined>>();
  const values: Record<string, string | boolean | undefined> = {};
  for (const option of command.options) {
    const long = option.long?.replace(/^--/, '');
    if (long !== undefined) values[long] = opts[option.attributeName()];
  }
  return { values, positionals: command.args.filter((a): a is string => typeof a === 'string') };
}

/** The program; `run` is called with the verb and its parsed input, and `exit` records the exit code. */
export function buildProgram(
  io: Output,
  handlers: {
    verb(spec: VerbSpec, input: VerbInput): Promise<number>;
    version(json: boolean): number;
    completion(shell: (typeof COMPLETION_SHELLS)[number], program: Command): Promise<number>;
  },
  exit: (code: number) => void,
): Command {
  const program = new Command('convoy')
    .description(
      'convoy: Kubernetes delivery by serverless loops. Release verbs use your kubeconfig and its RBAC.',
    )
    .usage('<command> [flags]')
    .version(convoyVersion().line, '--version', 'print the version')
    .helpOption('-h, --help', 'show help (convoy <command> --help for a command)')
    .helpCommand('help [command]', 'show help for a command')
    .exitOverride()
    .configureOutput({
      writeOut: (text) => io.out(text.replace(/\n$/, '')),
      writeErr: (text) => io.err(text.replace(/\n$/, '')),
      outputError: () => undefined,
    })
    .addHelpText(
      'after',
      '\n<release> is <name> (with -n <namespace>) or <namespace>/<name>.\nExit codes: 0 done, 1 a failure, 2 a usage error, 3 status: not Ready yet.',
    );
  program.commandsGroup('Release commands:');
  for (const spec of VERBS) {
    const command = program
      .command(spec.name)
      .description(spec.summary)
      .helpOption('-h, --help', 'show help');
    for (const arg of spec.args) command.argument(arg);
    for (const flag of spec.flags) addFlag(command, flag);
    for (const flag of GLOBAL_FLAGS) addFlag(command, flag);
    if (spec.help !== undefined) command.addHelpText('after', `\n${spec.help}`);
    command.action(async (...params: unknown[]) => {
      exit(await handlers.verb(spec, inputOf(params.at(-1) as Command)));
    });
  }
  program.commandsGroup('Commands:');
  for (const other of OTHER_COMMANDS) {
    const command = program.command(other.name).description(other.summary);
    if (other.name === 'version') {
      command.addOption(new Option('-o, --output <format>', 'json: a JSON object').choices(['json']));
      command.action((opts: { output?: string }) => exit(handlers.version(opts.output === 'json')));
    } else if (other.name === 'completion') {
      command
        .addArgument(new Argument('<shell>', 'bash, zsh or fish').choices(COMPLETION_SHELLS))
        .addHelpText(
          'after',
          '\nbash: source <(convoy completion bash)\nzsh:  source <(convoy completion zsh)   (after compinit)\nfish: convoy completion fish | source',
        )
        .action(async (shell: (typeof COMPLETION_SHELLS)[number]) =>
          exit(await handlers.completion(shell, program)),
        );
    } else {
      // Listed for help; run by runCli before commander sees them (their own parsers).
      command.helpOption(false).allowUnknownOption().allowExcessArguments().argument('[args...]');
    }
  }
  return program;
}

/** The one line a parse error becomes (exit 2). */
function parseErrorLine(error: CommanderError, verb: string | undefined): string {
  if (error.code === 'commander.unknownCommand') {
    const name = /'([^']*)'/.exec(error.message)?.[1] ?? '';
    return `convoy: unknown command "${name}" (see convoy help)`;
  }
  const message = error.message
    .replace(/^error: /, '')
    .replace(/\s+/g, ' ')
    .trim();
  return verb === undefined
    ? `convoy: ${message} (see convoy help)`
    : `convoy: ${verb}: ${message} (see convoy ${verb} --help)`;
}

/**
 * -n, else the kubeconfig context's namespace, else default (cli/context-namespace.ts): the
 * context's is handed to the verb as values.defaultNamespace; a "not found" in it says where the
 * namespace came from.
 */
async function contextDefault(
  input: VerbInput,
  env: NodeJS.ProcessEnv,
): Promise<{ input: VerbInput; explain: (line: string) => string }> {
  const { values } = input;
  const flag = (name: string) => {
    const value = values[name];
    return typeof value === 'string' ? value : undefined;
  };
  if (flag('namespace') !== undefined) return { input, explain: (line) => line };
  const { contextNamespace } = await import('./context-namespace.ts');
  const found = contextNamespace({ kubeconfig: flag('kubeconfig'), context: flag('context') }, env);
  if (found === undefined) return { input, explain: (line) => line };
  return {
    input: { ...input, values: { ...values, defaultNamespace: found.namespace } },
    explain: (line) =>
      line.includes(` ${found.namespace}/`) && /not found/.test(line)
        ? `${line} (namespace ${found.namespace} is the kubeconfig context ${found.context}'s; -n <namespace> for another)`
        : line,
  };
}

export async function runCli(
  argv: readonly string[],
  io: Output,
  env: NodeJS.ProcessEnv = process.env,
  signal?: AbortSignal,
): Promise<number> {
  let [first, ...rest] = argv;
  if (first === 'help' && (rest[0] === 'dev' || rest[0] === 'install')) [first, rest] = [rest[0], ['--help']];
  if (first === 'dev') {
    const { devCommand } = await import('../dev/dev-command.ts');
    return devCommand(rest);
  }
  if (first === 'install') {
    const { installCommand } = await import('./install.ts');
    return installCommand(
      rest,
      { out: (text) => io.out(text.replace(/\n$/, '')), err: (line) => io.err(line) },
      env,
    );
  }
  let code: number = ExitCode.ok;
  const program = buildProgram(
    io,
    {
      async verb(spec, input) {
        const { createSession } = await import('./session.ts');
        const session = createSession(io, env, signal);
        const context = await contextDefault(input, env);
        try {
          return await (
            await spec.load()
          )(context.input, session);
        } catch (error) {
          const { describeError } = await import('./error-line.ts');
          const { line, code: failed } = describeError(error, spec.name);
          io.err(context.explain(line));
          return failed;
        } finally {
          session.close();
        }
      },
      version(json) {
        const v = convoyVersion();
        io.out(json ? JSON.stringify({ convoy: v.convoy, node: v.node, platform: v.platform }) : v.line);
        return ExitCode.ok;
      },
      async completion(shell, prog) {
        const { completionScript } = await import('./completion.ts');
        io.out(completionScript(shell, prog));
        return ExitCode.ok;
      },
    },
    (c) => (code = c),
  );
  if (first === undefined) {
    program.outputHelp();
    return ExitCode.ok;
  }
  try {
    await program.parseAsync([...argv], { from: 'user' });
    return code;
  } catch (error) {
    if (!(error instanceof CommanderError)) throw error;
    if (error.exitCode === 0) return ExitCode.ok; // --help, --version
    const verb =
      VERBS.some((v) => v.name === first) || OTHER_COMMANDS.some((o) => o.name === first) ? first : undefined;
    io.err(parseErrorLine(error, verb));
    return ExitCode.usage;
  }
}
