// Helpers of the package test's aws-cdk-lib rows: the README's CDK app ("Install on AWS (CDK)", taken
// from README.md itself, placeholders filled) with cdk-nag's AwsSolutionsChecks added, installed with
// the packed tarball and a given aws-cdk-lib into a fresh folder (npm's own cache, ~/.npm, keeps the
// downloads between runs; the folder is the test's temporary one).
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import semver from 'semver';
import { repoVersion, root } from './cdk-app.ts';

const run = promisify(execFile);

/** The README's placeholders and what the test fills in (an imported cluster needs no real one). */
const PLACEHOLDERS: Record<string, string> = {
  '<id>': '0123456789ABCDEF',
  '<region>': 'eu-west-1',
  '<base64 CA>': 'LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCg==',
};

/** The README's CDK app: the first ```ts block after "## Install on AWS (CDK)". */
export function readmeCdkSnippet(readme = readFileSync(join(root, 'README.md'), 'utf8')): string {
  const section = readme.slice(readme.indexOf('## Install on AWS (CDK)'));
  const code = /```ts\n([\s\S]*?)```/.exec(section)?.[1];
  if (code === undefined) throw new Error('README.md: no ```ts block under "## Install on AWS (CDK)"');
  let filled = code;
  for (const [placeholder, value] of Object.entries(PLACEHOLDERS))
    filled = filled.replaceAll(placeholder, value);
  return filled;
}

/**
 * The README's app plus cdk-nag and a report: `node app.ts` synthesizes into cdk.out and prints
 * {errors, nag, runtimes, knownNodeRuntimes, templates, outdir} as JSON — errors are synth's, nag
 * cdk-nag's findings from synth's validation report (one per rule and construct), runtimes the
 * runtimes of the stack's functions and knownNodeRuntimes the nodejsN.x names the installed
 * aws-cdk-lib knows.
 */
export function readmeAppWithNag(): string {
  return `${readmeCdkSnippet()}
// Added by the package test: cdk-nag, and what the test reads back.
import { existsSync as reportExists, readFileSync as readReport } from 'node:fs';
import { join as joinPath } from 'node:path';
import { Validations as NagValidations } from 'aws-cdk-lib';
import { CfnFunction, Runtime as LambdaRuntime } from 'aws-cdk-lib/aws-lambda';
import { AwsSolutionsChecks } from 'cdk-nag';
NagValidations.of(app).addPlugins(new AwsSolutionsChecks(app, { writeSuppressionsToCloudFormation: true }));
let errors: string[] = [];
let templates: string[] = [];
try {
  templates = app.synth().stacksRecursively.map((s) => s.templateFullPath);
} catch (error) {
  errors = [error instanceof Error ? error.message : String(error)];
}
type Violation = { ruleName: string; severity: string; violatingConstructs: { constructPath: string }[] };
type Report = { pluginReports: { pluginName: string; violations: Violation[] }[] };
const reportFile = joinPath(app.outdir, 'validation-report.json');
const report: Report = reportExists(reportFile) ? JSON.parse(readReport(reportFile, 'utf8')) : { pluginReports: [] };
const nag = report.pluginReports
  .filter((p) => p.pluginName === 'AwsSolutions')
  .flatMap((p) => p.violations)
  .flatMap((v) => v.violatingConstructs.map((c) => ({ rule: v.ruleName.replace(/\\[.*$/, ''), severity: v.severity, path: c.constructPath })));
const runtimes = stack.node.findAll().filter((c) => c instanceof CfnFunction).map((f) => String((f as CfnFunction).runtime));
const knownNodeRuntimes = LambdaRuntime.ALL.map((r) => r.name).filter((n) => /^nodejs\\d+\\.x$/.test(n));
process.stdout.write(JSON.stringify({ errors, nag, runtimes, knownNodeRuntimes, templates, outdir: app.outdir }) + '\\n');
`;
}

/** The two ends of convoy's aws-cdk-lib peer range users get: its lowest, and the registry's newest. */
export async function cdkLibVersions(): Promise<{ lowest: string; newest: string }> {
  const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
    peerDependencies: Record<string, string>;
  };
  const range = manifest.peerDependencies['aws-cdk-lib'] ?? '';
  const lowest = semver.minVersion(range)?.version;
  if (lowest === undefined)
    throw new Error(`package.json: aws-cdk-lib peer range "${range}" has no lowest version`);
  const { stdout } = await run('npm', ['view', 'aws-cdk-lib', 'version', '--loglevel=error']);
  const newest = stdout.trim();
  if (!semver.satisfies(newest, range))
    throw new Error(`the registry's newest aws-cdk-lib ${newest} is outside convoy's peer range ${range}`);
  return { lowest, newest };
}

/**
 * A fresh folder with the README's app, the tarball, aws-cdk-lib@version and what the README installs
 * beside it: constructs (the peer range's lowest with the lowest aws-cdk-lib, else the newest), the
 * kubectl layer and cdk-nag at this repository's versions.
 */
export async function installReadmeApp(
  dir: string,
  tarball: string,
  cdkLib: string,
  lowest: boolean,
): Promise<void> {
  await mkdir(dir, { recursive: true });
  await writeFile(
    join(dir, 'package.json'),
    JSON.stringify({ name: 'readme-cdk-app', private: true, type: 'module' }),
  );
  await writeFile(join(dir, 'app.ts'), readmeAppWithNag());
  const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
    peerDependencies: Record<string, string>;
  };
  const constructs = lowest
    ? (semver.minVersion(manifest.peerDependencies['constructs'] ?? '')?.version ?? 'latest')
    : 'latest';
  await run(
    'npm',
    [
      'install',
      '--no-audit',
      '--no-fund',
      '--prefer-offline',
      '--loglevel=error',
      tarball,
      `aws-cdk-lib@${cdkLib}`,
      `constructs@${constructs}`,
      ...['cdk-nag', '@aws-cdk/lambda-layer-kubectl-v36'].map((p) => `${p}@${repoVersion(p)}`),
    ],
    { cwd: dir, maxBuffer: 16 << 20 },
  );
}

export interface ReadmeSynth {
  errors: string[];
  nag: { rule: string; severity: string; path: string }[];
  outdir: string;
  runtimes: string[];
  knownNodeRuntimes: string[];
  templates: string[];
}

/** `node app.ts` in the app's folder (the README's `npx cdk deploy --app 'node app.ts'` runs the same). */
export async function synthReadmeApp(dir: string): Promise<ReadmeSynth> {
  const { stdout } = await run(process.execPath, ['app.ts'], {
    cwd: dir,
    maxBuffer: 64 << 20,
    env: { ...process.env, NODE_OPTIONS: '', CDK_OUTDIR: join(dir, 'cdk.out') },
  });
  return JSON.parse(stdout.trim().split('\n').pop() ?? '{}') as ReadmeSynth;
}

/** The installed version of a package in the app's folder. */
export function installedVersion(dir: string, name: string): string {
  return (
    JSON.parse(readFileSync(join(dir, 'node_modules', name, 'package.json'), 'utf8')) as { version: string }
  ).version;
}
