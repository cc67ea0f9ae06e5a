// Where the functions' code comes from. From this repository (TypeScript sources), CDK bundles
// functions/<loop>/handler.ts with esbuild (NodejsFunction). From the installed package (compiled
// JavaScript), the bundles built by `npm run build` ship in dist/lambda/<loop>/ and are used as
// they are: a user's CDK app needs neither esbuild nor a lock file.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as nodejs from 'aws-cdk-lib/aws-lambda-nodejs';
import type { Construct } from 'constructs';
import type { QueueLoop } from '../domain/runtime/queue-message.ts';
import { ESM_BANNER } from './esm-banner.ts';
import { MIN_NODE_MAJOR } from './node-major.ts';

const compiled = import.meta.url.endsWith('.js');

/** The package root: the repository (sources) or node_modules/convoy (this file is dist/infra/function-code.js). */
export const PACKAGE_ROOT = fileURLToPath(new URL(compiled ? '../..' : '..', import.meta.url));

/** functions/<loop>/handler.ts of the repository (absent from an installed package). */
export function defaultEntry(loop: QueueLoop): string {
  return join(PACKAGE_ROOT, 'functions', loop, 'handler.ts');
}

/** dist/lambda/<loop>/ of an installed package, when this code runs compiled. */
export function prebuiltBundleDir(loop: QueueLoop): string | undefined {
  const dir = join(PACKAGE_ROOT, 'dist', 'lambda', loop);
  return compiled && existsSync(join(dir, 'index.mjs')) ? dir : undefined;
}

export class FunctionCodeError extends Error {
  override name = 'FunctionCodeError';
}

export type LoopFunctionProps = Omit<lambda.FunctionProps, 'code' | 'handler'>;

/** A function running `loop`: the prebuilt bundle when there is one and no custom entry, else NodejsFunction. */
export function loopFunction(
  scope: Construct,
  id: string,
  loop: QueueLoop,
  entry: string | undefined,
  props: LoopFunctionProps,
): lambda.Function {
  const prebuilt = entry === undefined ? prebuiltBundleDir(loop) : undefined;
  if (prebuilt !== undefined) {
    return new lambda.Function(scope, id, {
      ...props,
      code: lambda.Code.fromAsset(prebuilt),
      handler: 'index.handler',
    });
  }
  const source = entry ?? defaultEntry(loop);
  if (!existsSync(source)) {
    throw new FunctionCodeError(
      compiled
        ? `the ${loop} function's bundle ${join(PACKAGE_ROOT, 'dist', 'lambda', loop, 'index.mjs')} is missing from the package; reinstall it, or pass entries.${loop}`
        : `the ${loop} function's entry ${source} does not exist; create it or pass entries.${loop}`,
    );
  }
  const lockFile = join(PACKAGE_ROOT, 'package-lock.json');
  return new nodejs.NodejsFunction(scope, id, {
    ...props,
    entry: source,
    handler: 'handler',
    ...(entry === undefined && existsSync(lockFile)
      ? { projectRoot: PACKAGE_ROOT, depsLockFilePath: lockFile }
      : {}),
    bundling: {
      format: nodejs.OutputFormat.ESM,
      // The oldest Node the functions may run on; infra/node-runtime.ts picks the newest runtime at or above it.
      target: `node${MIN_NODE_MAJOR}`,
      minify: true,
      sourceMap: true,
      sourcesContent: false,
      mainFields: ['module', 'main'],
      // The Node 24 runtime ships AWS SDK v3.
      externalModules: ['@aws-sdk/*'],
      banner: ESM_BANNER,
    },
  });
}
