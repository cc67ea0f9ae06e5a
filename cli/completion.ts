/**
 * `convoy completion bash|zsh|fish`: the shell completion scripts, generated from the commander
 * program (cli/main.ts), so every verb and flag the parser knows is completed and nothing else:
 * verbs, their flags, the values of -o and of `completion`, and Release names (from
 * `convoy get -o name`, in the namespace given with -n, with the user's kubeconfig) and ReleaseSets
 * as rset/<name> (from `convoy get rset -o name`).
 */
import type { Command } from 'commander';

interface Flag {
  short?: string | undefined;
  long?: string | undefined;
  takesValue: boolean;
  choices: readonly string[];
  description: string;
}

interface CommandInfo {
  name: string;
  summary: string;
  flags: Flag[];
  /** Whether its first operand is a Release or a ReleaseSet (rset/<name>). */
  release: boolean;
}

function describe(program: Command): CommandInfo[] {
  return program.commands.map((c) => ({
    name: c.name(),
    summary: c.description(),
    flags: c.options.map((o) => ({
      short: o.short,
      long: o.long,
      takesValue: o.required || o.optional,
      choices: o.argChoices ?? [],
      description: o.description,
    })),
    release: ['release', 'releaseset'].includes(c.registeredArguments[0]?.name() ?? ''),
  }));
}

const HELP: CommandInfo = { name: 'help', summary: 'show help for a command', flags: [], release: false };

const names = (flags: readonly Flag[]): string[] =>
  flags.flatMap((f) => [f.short, f.long].filter((n): n is string => n !== undefined));
const words = (list: readonly string[]): string => list.join(' ');
const single = (text: string): string => `'${text.replace(/'/g, `'\\''`)}'`;

function bash(commands: readonly CommandInfo[]): string {
  const flagCases = commands
    .filter((c) => c.flags.length > 0)
    .map((c) => `    ${c.name}) flags=${single(words(names(c.flags)))} ;;`)
    .join('\n');
  const valueCases = commands
    .flatMap((c) =>
      c.flags
        .filter((f) => f.choices.length > 0)
        .map(
          (f) =>
            `    ${names([f])
              .map((n) => `${c.name}:${n}`)
              .join('|')}) COMPREPLY=($(compgen -W ${single(words(f.choices))} -- "$cur")); return ;;`,
        ),
    )
    .join('\n');
  const releaseVerbs = commands.filter((c) => c.release).map((c) => c.name);
  const completionShells = commands.find((c) => c.name === 'completion') === undefined ? '' : 'bash zsh fish';
  return `# convoy completion for bash: source <(convoy completion bash)
_convoy() {
  local cur prev verb ns i flags
  cur="\${COMP_WORDS[COMP_CWORD]}"
  prev="\${COMP_WORDS[COMP_CWORD-1]}"
  verb="" ns=""
  for ((i = 1; i < COMP_CWORD; i++)); do
    case "\${COMP_WORDS[i]}" in
      -n|--namespace) ns="\${COMP_WORDS[i+1]}"; i=$((i + 1)) ;;
      -*) ;;
      *) [[ -z "$verb" ]] && verb="\${COMP_WORDS[i]}" ;;
    esac
  done
  if [[ -z "$verb" ]]; then
    COMPREPLY=($(compgen -W ${single(words(commands.map((c) => c.name)))} -- "$cur"))
    return
  fi
  case "$verb:$prev" in
${valueCases}
    *:-n|*:--namespace|*:--context|*:--kubeconfig|*:--timeout|*:--interval|*:--api|*:--ref|*:--to|*:-l|*:--selector) return ;;
  esac
  flags=""
  case "$verb" in
${flagCases}
  esac
  if [[ "$cur" == -* ]]; then
    COMPREPLY=($(compgen -W "$flags" -- "$cur"))
    return
  fi
  case "$verb" in
    completion) COMPREPLY=($(compgen -W ${single(completionShells)} -- "$cur")) ;;
    help) COMPREPLY=($(compgen -W ${single(words(commands.map((c) => c.name)))} -- "$cur")) ;;
    ${releaseVerbs.join('|')})
      COMPREPLY=($(compgen -W "$(convoy get -o name \${ns:+-n "$ns"} 2>/dev/null | sed 's|^.*/||') $(convoy get rset -o name \${ns:+-n "$ns"} 2>/dev/null | sed 's|^.*/|rset/|')" -- "$cur")) ;;
  esac
}
complete -F _convoy convoy
complete -F _convoy kubectl-convoy
`;
}

function zsh(commands: readonly CommandInfo[]): string {
  const described = commands
    .map((c) => `    ${single(`${c.name.replace(/:/g, '\\:')}:${c.summary}`)}`)
    .join('\n');
  const flagCases = commands
    .filter((c) => c.flags.length > 0)
    .map((c) => `    ${c.name}) compadd -- ${words(names(c.flags))} ;;`)
    .join('\n');
  const valueCases = commands
    .flatMap((c) =>
      c.flags
        .filter((f) => f.choices.length > 0)
        .map(
          (f) =>
            `    ${names([f])
              .map((n) => `${c.name}:${n}`)
              .join('|')}) compadd -- ${words(f.choices)}; return ;;`,
        ),
    )
    .join('\n');
  const releaseVerbs = commands.filter((c) => c.release).map((c) => c.name);
  return `#compdef convoy kubectl-convoy
# convoy completion for zsh: source <(convoy completion zsh)   (after compinit)
_convoy() {
  local -a verbs
  verbs=(
${described}
  )
  if (( CURRENT == 2 )); then
    _describe 'convoy command' verbs
    return
  fi
  local verb=\${words[2]} prev=\${words[CURRENT-1]} ns="" i
  for (( i = 3; i < CURRENT; i++ )); do
    [[ \${words[i]} == (-n|--namespace) ]] && ns=\${words[i+1]}
  done
  case "$verb:$prev" in
${valueCases}
    *:(-n|--namespace|--context|--kubeconfig|--timeout|--interval|--api|--ref|--to|-l|--selector)) return ;;
  esac
  if [[ \${words[CURRENT]} == -* ]]; then
    case $verb in
${flagCases}
    esac
    return
  fi
  case $verb in
    completion) compadd -- bash zsh fish ;;
    help) _describe 'convoy command' verbs ;;
    ${releaseVerbs.join('|')}) compadd -- \${\${(f)"$(convoy get -o name \${ns:+-n $ns} 2>/dev/null)"}##*/} \${\${(f)"$(convoy get rset -o name \${ns:+-n $ns} 2>/dev/null)"}/#*\\//rset/} ;;
  esac
}
compdef _convoy convoy kubectl-convoy
`;
}

function fish(commands: readonly CommandInfo[]): string {
  const lines = [
    '# convoy completion for fish: convoy completion fish | source',
    'for cmd in convoy kubectl-convoy',
    '  complete -c $cmd -f',
  ];
  for (const c of commands) {
    lines.push(`  complete -c $cmd -n __fish_use_subcommand -a ${c.name} -d ${single(c.summary)}`);
    for (const f of c.flags) {
      const parts = [`  complete -c $cmd -n ${single(`__fish_seen_subcommand_from ${c.name}`)}`];
      if (f.short !== undefined) parts.push(`-s ${f.short.replace(/^-/, '')}`);
      if (f.long !== undefined) parts.push(`-l ${f.long.replace(/^--/, '')}`);
      if (f.takesValue) parts.push(f.choices.length > 0 ? `-x -a ${single(words(f.choices))}` : '-r');
      parts.push(`-d ${single(f.description)}`);
      lines.push(parts.join(' '));
    }
  }
  const releaseVerbs = commands.filter((c) => c.release).map((c) => c.name);
  lines.push(
    `  complete -c $cmd -n ${single(`__fish_seen_subcommand_from ${words(releaseVerbs)}`)} -a '(convoy get -o name 2>/dev/null | string replace -r ".*/" ""; convoy get rset -o name 2>/dev/null | string replace -r ".*/" "rset/")'`,
    `  complete -c $cmd -n '__fish_seen_subcommand_from completion' -a 'bash zsh fish'`,
    `  complete -c $cmd -n '__fish_seen_subcommand_from help' -a ${single(words(commands.map((c) => c.name)))}`,
    'end',
    '',
  );
  return lines.join('\n');
}

export function completionScript(shell: 'bash' | 'zsh' | 'fish', program: Command): string {
  const commands = [...describe(program), HELP];
  const script = shell === 'bash' ? bash(commands) : shell === 'zsh' ? zsh(commands) : fish(commands);
  return script.replace(/\n$/, '');
}
