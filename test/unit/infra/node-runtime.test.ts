// The functions' Node.js runtime: the newest nodejsN.x the installed aws-cdk-lib knows, at or above
// Node 24 (what the bundles are built for); an aws-cdk-lib that knows none fails synth in one line.
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { describe, expect, it } from 'vitest';
import { ConvoyConfigError } from '../../../infra/convoy-config-checks.ts';
import { latestNodeRuntime, MIN_NODE_MAJOR, nodeRuntimesOf } from '../../../infra/node-runtime.ts';

// Stand-ins for other aws-cdk-lib versions' Runtime classes: only their NODEJS_<n>_X constants matter.
const node = (name: string) => new lambda.Runtime(name, lambda.RuntimeFamily.NODEJS);

describe('the Node.js runtime the functions get', () => {
  it("the installed aws-cdk-lib's newest nodejsN.x constant, which is the newest Node.js runtime cdk-nag's L1 knows", () => {
    const majors = lambda.Runtime.ALL.map((r) => /^nodejs(\d+)\.x$/.exec(r.name)?.[1])
      .filter((m): m is string => m !== undefined)
      .map(Number);
    expect(latestNodeRuntime().name).toBe(`nodejs${Math.max(...majors)}.x`);
    expect(latestNodeRuntime()).toBe(lambda.Runtime[`NODEJS_${Math.max(...majors)}_X` as 'NODEJS_24_X']);
  });

  it('a version that knows Node.js 26 gives nodejs26.x; one that knows 24 gives nodejs24.x', () => {
    const v26 = {
      NODEJS_20_X: node('nodejs20.x'),
      NODEJS_24_X: node('nodejs24.x'),
      NODEJS_26_X: node('nodejs26.x'),
    };
    expect(latestNodeRuntime(v26).name).toBe('nodejs26.x');
    expect(latestNodeRuntime({ NODEJS_22_X: node('nodejs22.x'), NODEJS_24_X: node('nodejs24.x') }).name).toBe(
      'nodejs24.x',
    );
  });

  it('majors compare as numbers, and NODEJS_LATEST or a constant naming another version is not taken', () => {
    const runtimes = nodeRuntimesOf({
      NODEJS_9_X: node('nodejs9.x'),
      NODEJS_100_X: node('nodejs100.x'),
      NODEJS_LATEST: node('nodejs30.x'),
      NODEJS_28_X: node('nodejs24.x'),
      NODEJS_27_X: 'nodejs27.x',
    });
    expect([...runtimes.keys()].sort((a, b) => a - b)).toEqual([9, 100]);
  });

  it(`an aws-cdk-lib that knows no Node.js ${MIN_NODE_MAJOR} or newer fails synth in one line naming what it knows and what to do`, () => {
    const old = { NODEJS_20_X: node('nodejs20.x'), NODEJS_22_X: node('nodejs22.x') };
    expect(() => latestNodeRuntime(old)).toThrow(ConvoyConfigError);
    expect(() => latestNodeRuntime(old)).toThrow(
      "convoy's functions need the Lambda runtime nodejs24.x or newer, and the installed aws-cdk-lib knows none (its newest Node.js runtime: nodejs22.x); install aws-cdk-lib at or above the version in convoy's peerDependencies",
    );
  });
});
