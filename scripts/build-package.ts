// `npm run build` (and `prepack`): the installable package in dist/.
//
//   1. tsc -p tsconfig.build.json: JavaScript + declarations of domain, adapters, functions,
//      relay, infra, cli, dev and bin (Node refuses to run .ts files under node_modules);
//   2. config/crds → dist/config/crds (infra/relay-manifests.ts reads ../config/crds from its folder);
//      the KWOK stage files, examples/, scripts/build-control-plane.sh and scripts/build-lambda-runtime.sh,
//      which `convoy dev` needs;
//   3. the Lambda bundles dist/lambda/<fn>/index.mjs (scripts/bundle-functions.ts), which the
//      Convoy construct ships as they are, so a user's CDK app needs neither esbuild nor a lock file.
//
// Prints one JSON line on stdout: {ms, bundles: [{fn, bytes}]}.
import { spawnSync } from 'node:child_process';
import { chmod, cp, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';
import { bundleFunctions } from './bundle-functions.ts';

const root = resolve(import.meta.dirname, '..');

export class BuildError extends Error {
  override name = 'BuildError';
}

export async function buildPackage(): Promise<{ ms: number; bundles: { fn: string; bytes: number }[] }> {
  const started = performance.now();
  await rm(join(root, 'dist'), { recursive: true, force: true });
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  const result = spawnSync(process.execPath, [tsc, '-p', join(root, 'tsconfig.build.json')], {
    cwd: root,
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  if (result.status !== 0)
    throw new BuildError(`tsc -p tsconfig.build.json failed (exit ${result.status ?? result.signal})`);
  await cp(join(root, 'config', 'crds'), join(root, 'dist', 'config', 'crds'), { recursive: true });
  // What `convoy dev` reads at run time next to its compiled code: the KWOK stages, the examples
  // (its --examples default) and the control-plane build script its error messages name.
  for (const stages of ['kwok-stages.yaml', 'kwok-fail-stages.yaml']) {
    await cp(join(root, 'dev', 'control-plane', stages), join(root, 'dist', 'dev', 'control-plane', stages));
  }
  await cp(join(root, 'examples'), join(root, 'dist', 'examples'), { recursive: true });
  // The build scripts `convoy dev` names when a binary is missing: the cluster's, the Lambda runtime's (--runtime lambda) and the OCI registry's.
  for (const script of ['build-control-plane.sh', 'build-lambda-runtime.sh', 'build-oci-registry.sh']) {
    await cp(join(root, 'scripts', script), join(root, 'dist', 'scripts', script));
    await chmod(join(root, 'dist', 'scripts', script), 0o755);
  }
  // The three source the shared Go-tool builder, which builds etcd, KWOK, the emulator and the
  // registry from the pinned module graph in lib/go-tools.
  await cp(join(root, 'scripts', 'lib', 'go-tool.sh'), join(root, 'dist', 'scripts', 'lib', 'go-tool.sh'));
  await cp(join(root, 'scripts', 'lib', 'go-tools'), join(root, 'dist', 'scripts', 'lib', 'go-tools'), {
    recursive: true,
  });
  await chmod(join(root, 'dist', 'bin', 'convoy.js'), 0o755);
  const bundles = await bundleFunctions({ root, outDir: join('dist', 'lambda') });
  return {
    ms: Math.round(performance.now() - started),
    bundles: bundles.map(({ fn, bytes }) => ({ fn, bytes })),
  };
}

if (import.meta.main) {
  buildPackage().then(
    (r) => process.stdout.write(`${JSON.stringify(r)}\n`),
    (error: unknown) => {
      process.stderr.write(`build: ${error instanceof Error ? error.message : String(error)}\n`);
      process.exitCode = 1;
    },
  );
}
