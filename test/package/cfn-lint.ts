// cfn-lint on synthesized Convoy templates, shared by the unit test (the construct from source,
// test/unit/infra/convoy-cfn-lint.test.ts) and usable by the package test (the installed tarball's).
// The warnings left on purpose are listed here with why, as in docs/decisions.md ("cfn-lint on the
// synthesized template").
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** The version on the CI image; .ci/run pip-installs it when missing. */
export const CFN_LINT_VERSION = '1.51.0';

/** A warning left on purpose: which rule, what it matches, and why it stays (docs/decisions.md says the same). */
export interface KnownWarning {
  rule: string;
  message: RegExp;
  why: string;
}
export const KNOWN_WARNINGS: readonly KnownWarning[] = [
  {
    rule: 'W3005',
    message:
      /^'[A-Za-z0-9]+' dependency already enforced by a 'GetAtt' at 'Resources\/[A-Za-z0-9]+\/Properties\/Role'$/,
    why: "aws-cdk-lib's lambda.Function adds its role (and the role's default policy) to DependsOn so the function waits for its permissions; the role is also its Role GetAtt. Redundant, harmless; overriding DependsOn would drop the policy dependency too",
  },
];

/**
 * An error left on purpose: cfn-lint's list of Lambda runtimes (its schema patch from the Lambda API
 * model of its release) lags aws-cdk-lib's `Runtime.NODEJS_*`, and the functions take the newest
 * runtime the installed aws-cdk-lib knows (cdk-nag's AwsSolutions-L1 asks for it). Only a nodejsN.x
 * newer than every nodejs runtime cfn-lint lists is forgiven; a misspelt or older one stays an error.
 */
export const KNOWN_ERRORS: readonly KnownWarning[] = [
  {
    rule: 'E3030',
    message: /^'nodejs(\d+)\.x' is not one of \[/,
    why: "cfn-lint's Lambda runtime list predates the newest Node.js runtime aws-cdk-lib knows, which convoy's functions use (cdk-nag's AwsSolutions-L1 requires it); a newer cfn-lint knows it",
  },
];

/** E3030 on a nodejsN.x newer than every nodejs runtime in the list cfn-lint printed. */
export function isRuntimeNewerThanCfnLint(f: Finding): boolean {
  const major = /^'nodejs(\d+)\.x' is not one of \[(.*)\]$/s.exec(f.Message);
  if (f.Rule.Id !== 'E3030' || major === null) return false;
  const listed = [...(major[2] ?? '').matchAll(/'nodejs(\d+)(?:\.x|\.\d+)'/g)].map((m) => Number(m[1]));
  return listed.length > 0 && Number(major[1]) > Math.max(...listed);
}

export interface Finding {
  Rule: { Id: string };
  Level: string;
  Message: string;
  Filename: string;
  Location: { Path?: unknown[] };
}

/** cfn-lint's findings on these templates, for us-east-1 and eu-west-1. */
export async function cfnLint(files: string[]): Promise<Finding[]> {
  // Exit code: a bit per level found (2 error, 4 warning, 8 informational); the JSON on stdout is the answer.
  const answer = await run(
    'cfn-lint',
    ['--format', 'json', '--regions', 'us-east-1', 'eu-west-1', '--', ...files],
    { maxBuffer: 16 << 20 },
  ).catch((error: { stdout?: string; code?: unknown; stderr?: string }) => {
    if (typeof error.code === 'number' && error.stdout !== undefined && error.stdout.trim().startsWith('['))
      return { stdout: error.stdout };
    throw new Error(`cfn-lint failed to run (exit ${String(error.code)}): ${error.stderr ?? ''}`);
  });
  return JSON.parse(answer.stdout) as Finding[];
}

/** Findings that fail a template: every error but KNOWN_ERRORS', and every warning not in KNOWN_WARNINGS. */
export function unexpectedFindings(findings: readonly Finding[]): Finding[] {
  return findings.filter(
    (f) =>
      (f.Level === 'Error' && !isRuntimeNewerThanCfnLint(f)) ||
      (f.Level === 'Warning' &&
        !KNOWN_WARNINGS.some((k) => k.rule === f.Rule.Id && k.message.test(f.Message))),
  );
}

/** Throws, saying how to install it, unless cfn-lint CFN_LINT_VERSION is on PATH. */
export async function checkCfnLintVersion(): Promise<void> {
  const version = await run('cfn-lint', ['--version']).catch(() => ({ stdout: '' }));
  if (!version.stdout.includes(CFN_LINT_VERSION)) {
    throw new Error(
      `cfn-lint ${CFN_LINT_VERSION} is needed on PATH (found: ${version.stdout.trim() || 'none'}): pip install cfn-lint==${CFN_LINT_VERSION} (.ci/run does)`,
    );
  }
}
