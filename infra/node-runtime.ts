/**
 * The Node.js Lambda runtime the functions run on: the newest `nodejsN.x` the installed aws-cdk-lib
 * knows, at or above the oldest Node the bundles are built for. aws-cdk-lib is a peer dependency, so
 * the user's version decides which runtimes exist; cdk-nag's AwsSolutions-L1 flags any function not on
 * the newest one that version knows, so pinning one runtime breaks `cdk synth` under cdk-nag as soon
 * as aws-cdk-lib learns the next. `determineLatestNodeRuntime()` is not used: it reads a regional
 * fact that lags the `Runtime.NODEJS_*` constants (2.276.0 answers nodejs24.x whatever it knows) and,
 * in an environment-agnostic stack, becomes a template lookup rather than a name.
 */
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { ConvoyConfigError } from './convoy-config-checks.ts';
import { MIN_NODE_MAJOR } from './node-major.ts';

export { MIN_NODE_MAJOR };

const CONSTANT = /^NODEJS_(\d+)_X$/;

/** The `NODEJS_<n>_X` constants of a `Runtime` class, checked to name `nodejs<n>.x`, by major. */
export function nodeRuntimesOf(runtimeClass: object): Map<number, lambda.Runtime> {
  const found = new Map<number, lambda.Runtime>();
  for (const key of Object.getOwnPropertyNames(runtimeClass)) {
    const major = CONSTANT.exec(key)?.[1];
    if (major === undefined) continue;
    const runtime = (runtimeClass as Record<string, unknown>)[key];
    if (runtime instanceof lambda.Runtime && runtime.name === `nodejs${major}.x`)
      found.set(Number(major), runtime);
  }
  return found;
}

/**
 * The newest Node.js runtime `runtimeClass` (default: the installed aws-cdk-lib's) knows at or above
 * MIN_NODE_MAJOR. Throws ConvoyConfigError, naming the versions, when it knows none.
 */
export function latestNodeRuntime(runtimeClass: object = lambda.Runtime): lambda.Runtime {
  const runtimes = nodeRuntimesOf(runtimeClass);
  const majors = [...runtimes.keys()].filter((m) => m >= MIN_NODE_MAJOR).sort((a, b) => b - a);
  const newest = majors[0];
  if (newest === undefined) {
    const known = [...runtimes.keys()].sort((a, b) => b - a)[0];
    throw new ConvoyConfigError(
      `convoy's functions need the Lambda runtime nodejs${MIN_NODE_MAJOR}.x or newer, and the installed aws-cdk-lib knows none (its newest Node.js runtime: ${known === undefined ? 'none' : `nodejs${known}.x`}); install aws-cdk-lib at or above the version in convoy's peerDependencies`,
    );
  }
  return runtimes.get(newest) as lambda.Runtime;
}
