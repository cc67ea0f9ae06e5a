// The command line of `npm run bench` (bench/run.ts): the sections, the sizes each one runs at,
// and their checks — a wrong value stops the run before anything starts.
import { parseArgs } from 'node:util';

export const SECTIONS = [
  'reconcile200',
  'queueLatency',
  'queueCadence',
  'functions',
  'observers',
  'perRelease',
  'package',
  'embeddedCluster',
  'flux',
  'relayScale',
  'slowGit',
  'serviceAllocation',
  'multiCluster',
  'relayMetrics',
  'dashboard',
  'celRedos',
  'celHostile',
  'renderDiff',
  'cliStart',
  'lambdaRuntime',
  'largeRelease',
  'steadyInterval',
  'ociResolve',
  'fleet',
] as const;
export type Section = (typeof SECTIONS)[number];

export class BenchUsageError extends Error {
  override name = 'BenchUsageError';
}

export interface BenchOptions {
  /** Whether the section was asked for (--only; default every section). */
  wanted: (section: Section) => boolean;
  sequential: number;
  burst: number;
  perReleaseN: number;
  fluxNs: number[];
  relayScaleN: number;
  relayScaleChanges: number;
  multiClusterN: number;
  lambdaN: number;
  steadyN: number;
  largeReleaseN: number;
  fleetN: number;
}

/** The options of process.argv, checked; BenchUsageError names the one that is wrong. */
export function benchOptions(): BenchOptions {
  const { values } = parseArgs({
    options: {
      only: { type: 'string' },
      sequential: { type: 'string', default: '50' },
      burst: { type: 'string', default: '200' },
      'per-release-n': { type: 'string', default: '20' },
      'flux-n': { type: 'string', default: '100,300,1000' },
      'relay-scale-n': { type: 'string', default: '10000' },
      'relay-scale-changes': { type: 'string', default: '1000' },
      'multi-cluster-n': { type: 'string', default: '100' },
      'lambda-n': { type: 'string', default: '20' },
      'steady-n': { type: 'string', default: '10' },
      'large-release-n': { type: 'string', default: '10000' },
      'fleet-n': { type: 'string', default: '500' },
    },
  });
  const only = new Set(
    (values.only ?? SECTIONS.join(','))
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean),
  );
  for (const s of only)
    if (!(SECTIONS as readonly string[]).includes(s))
      throw new BenchUsageError(`--only: unknown section ${s}; sections: ${SECTIONS.join(', ')}`);
  const wanted = (s: Section): boolean => only.has(s);
  const sequential = Number(values.sequential);
  const burst = Number(values.burst);
  const perReleaseN = Number(values['per-release-n']);
  if (!Number.isInteger(perReleaseN) || perReleaseN < 1)
    throw new BenchUsageError('--per-release-n must be a positive integer');
  const fluxNs = (values['flux-n'] ?? '').split(',').map((s) => Number(s.trim()));
  if (fluxNs.some((n) => !Number.isInteger(n) || n < 1))
    throw new BenchUsageError('--flux-n must be positive integers separated by commas, e.g. 100,300,1000');
  const relayScaleN = Number(values['relay-scale-n']);
  const relayScaleChanges = Number(values['relay-scale-changes']);
  if (
    !Number.isInteger(relayScaleN) ||
    !Number.isInteger(relayScaleChanges) ||
    relayScaleChanges < 1 ||
    relayScaleN < relayScaleChanges
  ) {
    throw new BenchUsageError(
      '--relay-scale-n and --relay-scale-changes must be positive integers, changes <= n',
    );
  }
  const multiClusterN = Number(values['multi-cluster-n']);
  if (!Number.isInteger(multiClusterN) || multiClusterN < 1)
    throw new BenchUsageError('--multi-cluster-n must be a positive integer');
  const lambdaN = Number(values['lambda-n']);
  if (!Number.isInteger(lambdaN) || lambdaN < 1)
    throw new BenchUsageError('--lambda-n must be a positive integer');
  const largeReleaseN = Number(values['large-release-n']);
  if (!Number.isInteger(largeReleaseN) || largeReleaseN < 2)
    throw new BenchUsageError('--large-release-n must be an integer of at least 2');
  const fleetN = Number(values['fleet-n']);
  // Below 15 Clusters the early ring (9%) rounds to none, and a step that selects no Cluster is refused.
  if (!Number.isInteger(fleetN) || fleetN < 15)
    throw new BenchUsageError(
      '--fleet-n must be an integer of at least 15 (each of the 4 steps needs a Cluster)',
    );
  if (!Number.isInteger(sequential) || sequential < 1 || !Number.isInteger(burst) || burst < 1) {
    throw new BenchUsageError('--sequential and --burst must be positive integers');
  }
  return {
    wanted,
    sequential,
    burst,
    perReleaseN,
    fluxNs,
    relayScaleN,
    relayScaleChanges,
    multiClusterN,
    lambdaN,
    steadyN: Number(values['steady-n']),
    largeReleaseN,
    fleetN,
  };
}
