// Where scripts/build-lambda-runtime.sh put the emulator and the runtime interface client, and the
// one line a user reads when they are missing.
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

export const RIE_VERSION = 'v0.0.0-20261030222936-bef5c4ba774d';
export const RIC_VERSION = '4.0.2';

export interface LambdaRuntimeBuild {
  /** The aws-lambda-rie binary. */
  readonly rie: string;
  /** aws-lambda-ric's index.mjs (the runtime's entry point: `node <ric> <handler>`). */
  readonly ric: string;
}

export class LambdaRuntimeMissingError extends Error {
  override name = 'LambdaRuntimeMissingError';
}

/** The build script next to this code: scripts/ of the repository, dist/scripts/ of an installed package. */
export function buildScriptPath(): string {
  // dev/lambda/ → scripts/ in the repository; dist/dev/lambda/ → dist/scripts/ in an installed package.
  return join(import.meta.dirname, '..', '..', 'scripts', 'build-lambda-runtime.sh');
}

export function lambdaRuntimeDir(env: NodeJS.ProcessEnv = process.env): string {
  const cacheRoot = env['XDG_CACHE_HOME'] || join(env['HOME'] || homedir(), '.cache');
  return join(
    cacheRoot,
    'convoy',
    'lambda-runtime',
    `rie-${env['CONVOY_RIE_VERSION'] || RIE_VERSION}-ric-${env['CONVOY_RIC_VERSION'] || RIC_VERSION}`,
  );
}

/** The built runtime, or a LambdaRuntimeMissingError whose message is the one line to act on. */
export function findLambdaRuntime(env: NodeJS.ProcessEnv = process.env): LambdaRuntimeBuild {
  const dir = env['CONVOY_LAMBDA_RUNTIME'] || lambdaRuntimeDir(env);
  const rie = join(dir, 'bin', 'aws-lambda-rie');
  const ric = join(dir, 'node_modules', 'aws-lambda-ric', 'index.mjs');
  const native = join(dir, 'node_modules', 'aws-lambda-ric', 'rapid-client.node');
  if (!existsSync(rie) || !existsSync(ric) || !existsSync(native)) {
    throw new LambdaRuntimeMissingError(
      `the Lambda runtime (aws-lambda-rie + aws-lambda-ric ${RIC_VERSION}) is not built in ${dir}; build it once with: bash ${buildScriptPath()}`,
    );
  }
  return { rie, ric };
}
