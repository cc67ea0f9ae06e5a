// The convoy command line's parser (cli/main.ts, commander): per-verb help, version, completion,
// and the one-line usage errors (exit 2). In process, no cluster: nothing here connects.
import { describe, expect, it } from 'vitest';
import { runCli } from '../../../cli/main.ts';
import { VERBS } from '../../../cli/verbs.ts';

async function cli(...argv: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runCli(argv, { out: (l) => out.push(l), err: (l) => err.push(l) }, {});
  return {
    code,
    stdout: out.join('\n'),
    stderr: err.join('\n'),
    errLines: err.flatMap((e) => e.split('\n')),
  };
}

describe('the convoy command line', () => {
  it('convoy --help and convoy with no command list every verb, exit 0', async () => {
    for (const argv of [['--help'], [], ['help']]) {
      const run = await cli(...argv);
      expect(run.code).toBe(0);
      expect(run.stdout).toMatch(/^Usage: convoy <command>/);
      for (const verb of [...VERBS.map((v) => v.name), 'dev', 'install', 'version', 'completion'])
        expect(run.stdout).toMatch(new RegExp(`^  ${verb}\\b`, 'm'));
    }
  });

  it.each(VERBS.map((v) => [v.name]))(
    "convoy %s --help, -h and convoy help <verb> print that verb's usage and flags, exit 0",
    async (verb) => {
      for (const argv of [
        [verb, '--help'],
        [verb, '-h'],
        ['help', verb],
      ]) {
        const run = await cli(...argv);
        expect(run.code).toBe(0);
        expect(run.stderr).toBe('');
        expect(run.stdout).toMatch(new RegExp(`^Usage: convoy ${verb} \\[options\\]`));
        expect(run.stdout).toContain('-n, --namespace <namespace>');
        expect(run.stdout).toContain('--kubeconfig <file>');
      }
    },
  );

  it('get --help names -o json|yaml|wide, -w, -l, -A', async () => {
    const { stdout } = await cli('get', '--help');
    for (const flag of [
      '-o, --output <format>',
      '-w, --watch',
      '-l, --selector <selector>',
      '-A, --all-namespaces',
    ])
      expect(stdout).toContain(flag);
    expect(stdout).toMatch(/"json",\s+"yaml",\s+"wide",\s+"name"/);
  });

  it('rollback --help says what the default is, --to and --last-healthy, and that unpin follows the source again', async () => {
    const { stdout } = await cli('rollback', '--help');
    expect(stdout).toContain('--to <renderRef>');
    expect(stdout).toContain('--last-healthy');
    expect(stdout).toMatch(/render applied before the current one/);
    expect(stdout).toMatch(/convoy unpin/);
  });

  it('an unknown flag: exit 2 and one line naming the verb, the flag and the help to read', async () => {
    const run = await cli('get', '--bogus');
    expect(run.code).toBe(2);
    expect(run.stdout).toBe('');
    expect(run.errLines).toEqual(["convoy: get: unknown option '--bogus' (see convoy get --help)"]);
    const status = await cli('status', 'app', '-x');
    expect([status.code, status.errLines]).toEqual([
      2,
      ["convoy: status: unknown option '-x' (see convoy status --help)"],
    ]);
  });

  it('a bad -o value, a flag without its value, too many operands, an unknown verb: exit 2, one line each', async () => {
    for (const argv of [
      ['get', '-o', 'xml'],
      ['wait', 'app', '--timeout'],
      ['sync', 'a', 'b'],
      ['completion', 'powershell'],
      ['completion'],
      ['frobnicate'],
    ]) {
      const run = await cli(...argv);
      expect(run.code, argv.join(' ')).toBe(2);
      expect(run.errLines, argv.join(' ')).toHaveLength(1);
      expect(run.errLines[0], argv.join(' ')).toMatch(/^convoy: /);
    }
    expect((await cli('frobnicate')).stderr).toBe('convoy: unknown command "frobnicate" (see convoy help)');
    expect((await cli('get', '-o', 'xml')).stderr).toMatch(
      /^convoy: get: option '-o, --output <format>' argument 'xml' is invalid\. Allowed choices are json, yaml, wide, name\./,
    );
  });

  it('a missing Release is a usage error of the verb (exit 2), before any cluster is asked', async () => {
    const run = await cli('sync');
    expect(run.code).toBe(2);
    expect(run.stderr).toBe(
      'convoy: sync: missing the Release: convoy sync <name> [-n <namespace>] or <namespace>/<name> (see convoy sync --help)',
    );
  });

  it("version and --version print convoy's and Node's versions; version -o json is one JSON object", async () => {
    const { version } = (await import('../../../package.json', { with: { type: 'json' } })).default as {
      version: string;
    };
    for (const argv of [['version'], ['--version']]) {
      const run = await cli(...argv);
      expect(run.code).toBe(0);
      expect(run.stdout).toBe(
        `convoy ${version} (Node.js ${process.versions.node}, ${process.platform}-${process.arch})`,
      );
    }
    const json = await cli('version', '-o', 'json');
    expect(JSON.parse(json.stdout)).toEqual({
      convoy: version,
      node: process.versions.node,
      platform: `${process.platform}-${process.arch}`,
    });
  });

  it.each([['bash'], ['zsh'], ['fish']])(
    'completion %s prints a script naming every verb and its flags',
    async (shell) => {
      const run = await cli('completion', shell);
      expect(run.code).toBe(0);
      expect(run.stdout.length).toBeGreaterThan(500);
      for (const verb of [...VERBS.map((v) => v.name), 'completion', 'version', 'help'])
        expect(run.stdout).toMatch(new RegExp(`\\b${verb}\\b`));
      for (const flag of ['all-namespaces', 'selector', 'watch', 'last-healthy', 'namespace'])
        expect(run.stdout).toContain(flag);
      expect(run.stdout).toContain('json yaml wide name');
      expect(run.stdout).toContain('convoy get -o name');
    },
  );

  it('completion bash is valid bash and completes verbs, -o values and flags', async ({ skip }) => {
    const { spawnSync } = await import('node:child_process');
    if (spawnSync('bash', ['--version']).status !== 0) skip('bash is not installed');
    const script = (await cli('completion', 'bash')).stdout;
    const complete = (words: string[]) => {
      const program = `${script}\nCOMP_WORDS=(${words.map((w) => `'${w}'`).join(' ')}); COMP_CWORD=${words.length - 1}; _convoy; printf '%s\\n' "\${COMPREPLY[@]}"`;
      const r = spawnSync('bash', ['-c', program], { encoding: 'utf8' });
      expect(r.stderr).toBe('');
      return r.stdout.trim().split('\n');
    };
    expect(complete(['convoy', 'ro'])).toEqual(['rollback']);
    expect(complete(['convoy', 'get', '-o', ''])).toEqual(['json', 'yaml', 'wide', 'name']);
    expect(complete(['convoy', 'rollback', 'app', '--l'])).toEqual(['--last-healthy']);
    expect(complete(['convoy', 'completion', 'z'])).toEqual(['zsh']);
  });
});
