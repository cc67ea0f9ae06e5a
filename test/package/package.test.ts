// The installable product, as a user gets it (`npm run test:package`; slow: npm pack builds dist/):
// - `npm pack`, then a TypeScript CDK app in a fresh folder installs the tarball, imports the
//   construct, applies cdk-nag's AwsSolutionsChecks and synthesizes with 0 errors; `npx convoy --help`
//   runs from that install with no TypeScript loader; `npx convoy dev --embedded --runtime lambda` in
//   the app's folder runs the installed construct's template and dist/lambda bundles under the Lambda
//   runtime emulator (dev/lambda of the install) until the shipped hello Release is Applied;
// - the README's own CDK app (its ```ts block) with cdk-nag, installed fresh with the lowest aws-cdk-lib
//   of the peer range and with the newest the registry serves (`npm view aws-cdk-lib version`): 0 nag
//   errors, the functions on the newest Node.js runtime that aws-cdk-lib knows, cfn-lint's findings
//   printed and only the known ones left (test/package/cfn-lint.ts);
// - `npm i -g` of the tarball, run from a folder outside the repo: convoy, kubectl-convoy and
//   `convoy dev --help`; what `convoy dev` reads at run time is in the package; without the cluster
//   binaries one line names KUBEBUILDER_ASSETS and the shipped build script; the system's older
//   Node gets one line; `convoy dev --embedded` brings the shipped hello example to Ready, watched
//   with the installed `convoy wait`;
// - the Docker-free relay image: an OCI layout that crane validates after a push to a registry, and
//   whose rootfs, exported and unpacked, runs the image's entrypoint with its config (user 1000, env,
//   working dir) against the test kube-apiserver and fauxqs until /readyz answers — under the
//   ServiceAccount and RBAC of `convoy install --print`, not as admin.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { chmod, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { freePorts } from '../../dev/control-plane/processes.ts';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { CreateQueueCommand, SQSClient } from '@aws-sdk/client-sqs';
import { startFauxqs, type FauxqsServer } from 'fauxqs';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { stringify } from 'yaml';
import { createToolLocator } from '../../adapters/tools/binaries.ts';
import { installCommand } from '../../cli/install.ts';
import { buildOciImage, type OciBuildResult } from '../../image/build-oci.ts';
import { RELAY_NODE_FLAGS } from '../../image/relay-node-flags.ts';
import { stageApp } from '../../image/stage-app.ts';
import { freshNamespace, kubeConfigFor, type FreshNamespace } from '../harness/kube.ts';
import { convoyApi } from '../harness/releases.ts';
import { appliedOf, until } from '../harness/runtime-env.ts';
import { createCdkApp, root } from './cdk-app.ts';
import { cdkLibVersions, installedVersion, installReadmeApp, synthReadmeApp } from './cdk-versions.ts';
import { cfnLint, unexpectedFindings } from './cfn-lint.ts';
import {
  applyShippedHello,
  devKubeconfig,
  devRunning,
  installGlobally,
  startDev,
  stopDev,
  type GlobalInstall,
} from './installed-dev.ts';
import { ensureCrane, startRegistry, type Registry } from './crane.ts';
import { checkTemplate } from './template-checks.ts';

const run = promisify(execFile);
const nodeDir = dirname(process.execPath);

let work: string;
let tarball: string;
const timings: Record<string, number> = {};
const timed = async <T>(name: string, step: () => Promise<T>): Promise<T> => {
  const t = performance.now();
  try {
    return await step();
  } finally {
    timings[name] = Math.round(performance.now() - t);
  }
};

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'convoy-package-'));
  const { stdout } = await timed('npmPack', () =>
    run('npm', ['pack', '--pack-destination', work, '--loglevel=error'], { cwd: root, maxBuffer: 64 << 20 }),
  );
  tarball = join(work, stdout.trim().split('\n').pop() ?? '');
});

afterAll(async () => {
  process.stderr.write(`package test timings (ms): ${JSON.stringify(timings)}\n`);
  if (work) await rm(work, { recursive: true, force: true });
});

describe('the npm package in a user CDK app', () => {
  const app = () => join(work, 'cdk-app');

  it('installs the tarball, imports convoy/infra, applies AwsSolutionsChecks and synthesizes with 0 errors', async () => {
    await timed('cdkAppInstall', () => createCdkApp(app(), tarball));
    const { stdout } = await timed('cdkSynth', () =>
      run(process.execPath, ['app.ts'], {
        cwd: app(),
        maxBuffer: 64 << 20,
        env: { ...process.env, CDK_OUTDIR: join(app(), 'cdk.out') },
      }),
    );
    const result = JSON.parse(stdout.trim().split('\n').pop() ?? '{}') as {
      errors: string[];
      functions: number;
      template: string;
    };
    expect(result.errors).toEqual([]);
    expect(result.functions).toBe(4);
    const template = JSON.parse(await readFile(result.template, 'utf8')) as Parameters<
      typeof checkTemplate
    >[0];
    expect(checkTemplate(template)).toEqual([]);
  });

  it("the app typechecks against the package's declarations", async () => {
    await timed('cdkTsc', () =>
      run(process.execPath, [join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.json'], {
        cwd: app(),
      }),
    );
  });

  it('npx convoy --help runs from the install with Node 24 and no TypeScript loader', async () => {
    const { stdout } = await run('npx', ['--no-install', 'convoy', '--help'], {
      cwd: app(),
      env: { ...process.env, PATH: `${nodeDir}:${process.env['PATH'] ?? ''}`, NODE_OPTIONS: '' },
    });
    expect(stdout).toMatch(/^Usage: convoy <command>/m);
    const { stdout: printed } = await run(
      'npx',
      ['--no-install', 'convoy', 'install', '--print', '--no-crds', '--image', 'reg.example/convoy-relay:1'],
      {
        cwd: app(),
        env: { ...process.env, PATH: `${nodeDir}:${process.env['PATH'] ?? ''}` },
      },
    );
    expect(printed).toContain('kind: Deployment');
  });

  it("npx convoy dev --embedded --runtime lambda from the app: the installed construct's template, the installed bundles under the Lambda runtime emulator, the hello Release Applied", async () => {
    const [apiPort, gitPort] = (await freePorts(2)) as [number, number];
    const packageDir = join(app(), 'node_modules', 'convoy');
    // The app's own install (node_modules/.bin/convoy → node_modules/convoy/dist/bin/convoy.js), run in
    // the app's folder: its construct synthesizes the template with the app's aws-cdk-lib, and its
    // dist/lambda bundles are the code assets the emulator runs. The state folder is the test's own.
    const env = {
      ...process.env,
      PATH: `${nodeDir}:${process.env['PATH'] ?? ''}`,
      NODE_OPTIONS: '',
      XDG_STATE_HOME: join(work, 'lambda-dev-state'),
    };
    const args = [
      '--embedded',
      '--runtime',
      'lambda',
      '--lambda-slots',
      '1',
      '--api-port',
      String(apiPort),
      '--git-port',
      String(gitPort),
    ];
    const dev = startDev(join(app(), 'node_modules', '.bin'), args, app(), env);
    try {
      await timed('lambdaDevRunning', () => devRunning(dev, 360_000));
      // The functions' settings are the installed construct's defaults, read from its template.
      expect(dev.stderr).toMatch(
        /Lambda runtime: template synthesized in \d+ ms; reconcile 1024 MB, \d+ s, batch 10, concurrency 1; drift 256 MB, \d+ s, batch 10, concurrency 1; health 256 MB, \d+ s, batch 10, concurrency 1; fleet 256 MB, \d+ s, batch 1, concurrency 1/,
      );
      const kubeconfig = devKubeconfig(dev);
      await applyShippedHello(packageDir, kubeconfig);
      const api = convoyApi(kubeConfigFor(kubeconfig));
      await timed('lambdaHelloApplied', () =>
        until(
          'the hello Release is Applied True',
          async () => appliedOf(await api.getRelease('convoy-examples', 'hello'))?.status === 'True',
          { timeoutMs: 300_000, intervalMs: 500 },
        ),
      ).catch((error: unknown) => {
        throw new Error(`${String(error)}\nconvoy dev's stderr (end):\n${dev.stderr.slice(-6000)}`);
      });
      // The reconcile that applied it is the bundle under the emulator: its own JSON lines, prefixed with loop and
      // slot. They travel function → emulator → convoy dev's stderr → this pipe, a path independent of the status
      // write the wait above saw, so they may arrive after it (CI at 208a507 checked too early): wait for them.
      await until(
        "the reconcile bundle's own JSON log lines",
        () => Promise.resolve(/^reconcile\[0\] \{/m.test(dev.stderr)),
        { timeoutMs: 60_000, intervalMs: 200 },
      ).catch((error: unknown) => {
        throw new Error(`${String(error)}\nconvoy dev's stderr (end):\n${dev.stderr.slice(-6000)}`);
      });
      expect(
        dev.stderr.split('\n').filter((line) => /HTTP 403\b|forbidden|cannot impersonate/i.test(line)),
      ).toEqual([]);
    } finally {
      await stopDev(dev);
    }
    expect(dev.proc.exitCode).toBe(0);
  });
});

describe("the README's CDK app with the lowest and the newest aws-cdk-lib (installed fresh, not from the lock)", () => {
  let versions: { lowest: string; newest: string };
  beforeAll(async () => {
    versions = await cdkLibVersions();
  });

  it.each(['lowest', 'newest'] as const)(
    '%s aws-cdk-lib of the peer range: cdk-nag AwsSolutionsChecks 0 errors, the functions on its newest Node.js runtime, cfn-lint no error but a runtime newer than it knows',
    async (end) => {
      const dir = join(work, `readme-cdk-${end}`);
      await timed(`readmeCdkInstall_${end}`, () =>
        installReadmeApp(dir, tarball, versions[end], end === 'lowest'),
      );
      expect(installedVersion(dir, 'aws-cdk-lib')).toBe(versions[end]);
      const synth = await timed(`readmeCdkSynth_${end}`, () => synthReadmeApp(dir));
      expect(synth.errors).toEqual([]);
      const nagErrors = synth.nag.filter((n) => n.severity === 'error');
      expect(nagErrors).toEqual([]);
      const newestNode = `nodejs${Math.max(...synth.knownNodeRuntimes.map((n) => Number(/\d+/.exec(n)?.[0])))}.x`;
      const [main] = synth.templates;
      const template = JSON.parse(await readFile(main ?? '', 'utf8')) as Parameters<typeof checkTemplate>[0];
      expect(checkTemplate(template, newestNode)).toEqual([]);
      const files = (await readdir(synth.outdir))
        .filter((f) => f.endsWith('.template.json'))
        .map((f) => join(synth.outdir, f));
      const findings = await timed(`readmeCdkCfnLint_${end}`, () => cfnLint(files));
      expect(
        unexpectedFindings(findings).map((f) => `${f.Rule.Id} ${f.Message.slice(0, 200)} (${f.Filename})`),
      ).toEqual([]);
      const count = (level: string) => findings.filter((f) => f.Level === level).length;
      const byRule = [...new Set(findings.map((f) => f.Rule.Id))].map(
        (id) => `${findings.filter((f) => f.Rule.Id === id).length} × ${id}`,
      );
      process.stderr.write(
        `README CDK app, aws-cdk-lib ${versions[end]} (${end}): functions on ${newestNode}; cdk-nag ${nagErrors.length} errors, ${synth.nag.length - nagErrors.length} warnings; cfn-lint ${count('Error')} errors, ${count('Warning')} warnings (${byRule.join(', ') || 'none'}) in ${files.length} templates\n`,
      );
    },
  );
});

describe('the package installed with npm i -g, run outside the repository', () => {
  let installed: GlobalInstall;
  let outside: string;
  const env = () => ({
    ...process.env,
    PATH: `${installed.binDir}:${nodeDir}:${process.env['PATH'] ?? ''}`,
    NODE_OPTIONS: '',
  });

  beforeAll(async () => {
    installed = await timed('npmInstallGlobal', () => installGlobally(tarball, join(work, 'global')));
    outside = await mkdtemp(join(tmpdir(), 'convoy-user-'));
  });
  afterAll(async () => {
    if (outside) await rm(outside, { recursive: true, force: true });
  });

  it('convoy --help, kubectl convoy --help and convoy dev --help run from a folder outside the repo', async () => {
    for (const bin of ['convoy', 'kubectl-convoy']) {
      const { stdout } = await run(join(installed.binDir, bin), ['--help'], { cwd: outside, env: env() });
      expect(stdout).toMatch(/^Usage: convoy <command>/);
    }
    const { stdout } = await run(join(installed.binDir, 'convoy'), ['dev', '--help'], {
      cwd: outside,
      env: env(),
    });
    expect(stdout).toMatch(/^convoy dev \[--embedded \| --kubeconfig <file>\]/);
  });

  it('what convoy dev reads at run time is in the package: the KWOK stages, the examples and the control-plane build script', async () => {
    const dist = join(installed.packageDir, 'dist');
    for (const file of [
      'dev/control-plane/kwok-stages.yaml',
      'dev/control-plane/kwok-fail-stages.yaml',
      'examples/10-hello-release.yaml',
      'examples/repos/hello/app',
      'scripts/build-control-plane.sh',
      'config/crds',
    ]) {
      await expect(run('test', ['-e', join(dist, file)]), file).resolves.toBeDefined();
    }
    // With no binaries anywhere, one line names KUBEBUILDER_ASSETS and the shipped build script.
    const noBinaries = await run(
      join(installed.binDir, 'convoy'),
      ['dev', '--embedded', '--api-port', '0', '--git-port', '0'],
      {
        cwd: outside,
        env: { ...env(), XDG_CACHE_HOME: join(outside, 'empty-cache'), KUBEBUILDER_ASSETS: '' },
      },
    ).then(
      () => expect.fail('convoy dev started without control-plane binaries'),
      (error: { code: number; stderr: string }) => error,
    );
    expect(noBinaries.code).toBe(1);
    const lines = noBinaries.stderr
      .trim()
      .split('\n')
      .filter(
        (l) =>
          !l.includes('left behind by a convoy dev') &&
          !l.startsWith('convoy dev: starting the embedded cluster'),
      );
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain(`Run \`bash ${join(dist, 'scripts', 'build-control-plane.sh')}\``);
    expect(lines[0]).toContain('or set KUBEBUILDER_ASSETS to a folder holding them');
  });

  it('an older Node (the system Node 20) runs the installed bin to one line saying which Node it needs', async () => {
    const oldNode = '/usr/bin/node';
    const { stdout: version } = await run(oldNode, ['--version']);
    expect(Number(/^v(\d+)/.exec(version)?.[1]), `${oldNode} is the older Node this test needs`).toBeLessThan(
      22,
    );
    const failed = await run(oldNode, [join(installed.packageDir, 'dist', 'bin', 'convoy.js'), 'get', '-A'], {
      cwd: outside,
    }).then(
      () => expect.fail('the bin ran on an old Node'),
      (error: { code: number; stderr: string }) => error,
    );
    expect(failed.code).toBe(1);
    expect(failed.stderr).toBe(
      `convoy needs Node.js 22.13.0 or later (Node 22 LTS or 24); this is Node.js ${version.trim().slice(1)}. Install a newer one (https://nodejs.org, nvm install 24) and run convoy again.\n`,
    );
  });

  it('convoy dev --embedded from the install: the shipped examples reach Ready, watched with the installed convoy wait', async () => {
    const [apiPort, gitPort] = (await freePorts(2)) as [number, number];
    const dev = startDev(
      installed.binDir,
      ['--embedded', '--api-port', String(apiPort), '--git-port', String(gitPort)],
      outside,
      env(),
    );
    try {
      await timed('devRunning', () => devRunning(dev, 240_000));
      const kubeconfig = devKubeconfig(dev);
      await applyShippedHello(installed.packageDir, kubeconfig);
      const { stdout } = await timed('helloReady', () =>
        run(
          join(installed.binDir, 'convoy'),
          ['wait', 'convoy-examples/hello', '--kubeconfig', kubeconfig, '--timeout', '5m'],
          { cwd: outside, env: env() },
        ),
      );
      expect(stdout).toMatch(/Ready/);
    } finally {
      dev.proc.kill('SIGINT');
      await dev.exited;
    }
    expect(dev.stderr).not.toMatch(/could not start/);
  });
});

describe('the relay image without Docker', () => {
  let image: OciBuildResult;
  let crane: string;
  let registry: Registry | undefined;
  let fauxqs: FauxqsServer | undefined;
  let ns: FreshNamespace | undefined;
  let relay: ChildProcess | undefined;
  const ref = () => `${registry?.host ?? ''}/convoy/relay:test`;

  beforeAll(async () => {
    crane = await timed('crane', () => ensureCrane());
    const staged = await timed('stageApp', () => stageApp({ workDir: join(work, 'stage'), tarball }));
    image = await timed('buildOci', () =>
      buildOciImage({
        appDir: staged.appDir,
        outDir: join(work, 'oci'),
        archive: join(work, 'relay-oci.tar'),
      }),
    );
    registry = await startRegistry(crane);
  });

  afterAll(async () => {
    if (relay && relay.exitCode === null) {
      const exited = new Promise((r) => relay?.once('exit', r));
      relay.kill('SIGTERM');
      await exited;
    }
    await registry?.stop();
    await fauxqs?.stop();
    await ns?.delete();
  });

  it('crane pushes the OCI layout and validates it (digests, diff_ids, config)', async () => {
    await timed('cranePush', () => run(crane, ['push', image.layoutDir, ref(), '--insecure']));
    const { stdout } = await timed('craneValidate', () =>
      run(crane, ['validate', '--remote', ref(), '--insecure']),
    );
    expect(stdout).toContain(`PASS: ${ref()}`);
    const config = JSON.parse((await run(crane, ['config', ref(), '--insecure'])).stdout) as {
      os: string;
      architecture: string;
      config: { User: string; Entrypoint: string[] };
    };
    expect(config).toMatchObject({
      os: 'linux',
      architecture: 'amd64',
      config: {
        User: '1000:1000',
        Entrypoint: ['/usr/local/bin/node', ...RELAY_NODE_FLAGS, '/app/dist/relay/main.js'],
      },
    });
    expect(image.layers.map((l) => l.name)).toEqual(['base', 'node', 'app']);
  });

  it("the unpacked rootfs runs the entrypoint as the image's user until /readyz answers, with the install manifests' RBAC", async () => {
    const kubeconfigPath = inject('kubeconfigPath');
    const kc = kubeConfigFor(kubeconfigPath);
    const { kubectl } = await createToolLocator().locate();
    ns = await freshNamespace(kc, 'relay-image');
    // The relay's objects from `convoy install --print`, applied for real in a fresh namespace.
    let manifests = '';
    expect(
      installCommand(['--print', '--no-crds', '-n', ns.name, '--image', ref()], {
        out: (t) => (manifests += t),
        err: (l) => expect.fail(l),
      }),
    ).toBe(0);
    const manifestFile = join(work, 'install.yaml');
    await writeFile(manifestFile, manifests);
    await run(kubectl, [
      '--kubeconfig',
      kubeconfigPath,
      'apply',
      '--server-side',
      '--force-conflicts',
      '-f',
      manifestFile,
    ]);
    const { stdout: token } = await run(kubectl, [
      '--kubeconfig',
      kubeconfigPath,
      '-n',
      ns.name,
      'create',
      'token',
      'convoy-relay',
      '--duration',
      '1h',
    ]);

    fauxqs = await startFauxqs({ port: 0, logger: false });
    const endpoint = `http://127.0.0.1:${fauxqs.port}`;
    const sqs = new SQSClient({
      endpoint,
      region: 'us-east-1',
      credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
    });
    const queueUrl = async (name: string) =>
      (await sqs.send(new CreateQueueCommand({ QueueName: `${ns?.name ?? ''}-${name}` }))).QueueUrl ?? '';

    const rootfs = join(work, 'rootfs');
    await mkdir(rootfs);
    await timed('craneExport', () =>
      run('sh', ['-c', `"${crane}" export --insecure "${ref()}" - | tar -x -C "${rootfs}"`]),
    );
    const cluster = kc.getCurrentCluster();
    await writeFile(
      join(rootfs, 'tmp', 'kubeconfig'),
      stringify({
        apiVersion: 'v1',
        kind: 'Config',
        clusters: [
          { name: 'c', cluster: { server: cluster?.server, 'certificate-authority-data': cluster?.caData } },
        ],
        users: [{ name: 'relay', user: { token: token.trim() } }],
        contexts: [{ name: 'relay', context: { cluster: 'c', user: 'relay' } }],
        'current-context': 'relay',
      }),
    );
    await chmod(join(rootfs, 'tmp', 'kubeconfig'), 0o644);

    const config = JSON.parse((await run(crane, ['config', ref(), '--insecure'])).stdout) as {
      config: { User: string; Env: string[]; Entrypoint: string[]; WorkingDir: string };
    };
    const port = 18_000 + Math.floor(Math.random() * 2000);
    const env: Record<string, string> = Object.fromEntries(
      config.config.Env.map((e) => [e.slice(0, e.indexOf('=')), e.slice(e.indexOf('=') + 1)]),
    );
    Object.assign(env, {
      KUBECONFIG: '/tmp/kubeconfig',
      CONVOY_NAMESPACE: ns.name,
      CONVOY_RECONCILE_QUEUE_URL: await queueUrl('reconcile'),
      CONVOY_DRIFT_QUEUE_URL: await queueUrl('drift'),
      CONVOY_HEALTH_QUEUE_URL: await queueUrl('health'),
      CONVOY_HTTP_HOST: '127.0.0.1',
      CONVOY_HTTP_PORT: String(port),
      AWS_REGION: 'us-east-1',
      AWS_ENDPOINT_URL: endpoint,
      AWS_ACCESS_KEY_ID: 'test',
      AWS_SECRET_ACCESS_KEY: 'test',
    });
    // chroot into the rootfs as the image's user and run its entrypoint (chroot(1) starts in /;
    // the relay reads no relative paths, so the WorkingDir /app is not needed to prove it runs).
    const chroot = (await run('sh', ['-c', 'command -v chroot'])).stdout.trim();
    let logs = '';
    relay = spawn(chroot, [`--userspec=${config.config.User}`, rootfs, ...config.config.Entrypoint], {
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    relay.stdout?.on('data', (b: Buffer) => (logs += b.toString()));
    relay.stderr?.on('data', (b: Buffer) => (logs += b.toString()));

    const readyAt = await timed('relayReady', async () => {
      const deadline = Date.now() + 60_000;
      for (;;) {
        if (relay?.exitCode !== null)
          throw new Error(`the relay exited (${String(relay?.exitCode)}): ${logs.slice(-2000)}`);
        const answer = await fetch(`http://127.0.0.1:${port}/readyz`).then(
          (r) => r.status,
          () => 0,
        );
        if (answer === 200) return Date.now();
        if (Date.now() > deadline)
          throw new Error(`/readyz did not answer 200 within 60 s: ${logs.slice(-2000)}`);
        await new Promise((r) => setTimeout(r, 250));
      }
    });
    expect(readyAt).toBeGreaterThan(0);
    expect(logs).not.toMatch(/forbidden/i);
  });
});
