/**
 * The Convoy construct's checks of its props, run at synth: timings that must agree with each
 * other (domain/runtime/timings.ts), props that cannot go together, and the event source
 * mappings' maximum concurrency. Each failure is a ConvoyConfigError naming the props and the rule.
 */
import type { Duration } from 'aws-cdk-lib';
import { deriveTimings, timingViolations, type Timings } from '../domain/runtime/timings.ts';
import type { QueueLoop } from '../domain/runtime/queue-message.ts';
import type { ConvoyProps } from './convoy-props.ts';

const DEFAULT_MAX_CONCURRENCY = 10;

export class ConvoyConfigError extends Error {
  override name = 'ConvoyConfigError';
}

/**
 * The function timeout, queue visibility and maxReceiveCount from domain/runtime/timings.ts (the
 * Lease duration and heartbeat the functions use come from there too); a combination that breaks
 * one of its rules fails synth, naming the props and the rule.
 */
export function timingsOf(id: string, props: ConvoyProps): Timings {
  const seconds = (d: Duration | undefined) =>
    d === undefined ? undefined : d.toSeconds({ integral: false });
  const timings = deriveTimings({
    functionTimeoutSeconds: seconds(props.functionTimeout),
    visibilityTimeoutSeconds: seconds(props.queueVisibilityTimeout),
    maxReceiveCount: props.maxReceiveCount,
    maxWaveTimeoutSeconds: seconds(props.maxWaveTimeout),
  });
  const broken = timingViolations(timings);
  if (broken.length > 0) {
    throw new ConvoyConfigError(
      `Convoy ${id}: inconsistent timings: ${broken.map((v) => `${v.props.join(' and ')}: ${v.rule}`).join('; ')} (docs/decisions.md, "Function timings")`,
    );
  }
  return timings;
}

/** Props that cannot go together fail synth, naming both. */
export function conflictingProps(id: string, props: ConvoyProps): void {
  const pairs: [keyof ConvoyProps, keyof ConvoyProps, string][] = [
    ['cluster', 'managementClusterName', 'cluster names the management cluster already'],
    [
      'cluster',
      'kubeconfigSecret',
      'with cluster, the functions reach the management cluster through EKS access, not a kubeconfig',
    ],
    [
      'cluster',
      'kubeconfigPath',
      'with cluster, the functions reach the management cluster through EKS access, not a kubeconfig',
    ],
  ];
  for (const [a, b, why] of pairs) {
    if (props[a] !== undefined && props[b] !== undefined) {
      throw new ConvoyConfigError(`Convoy ${id}: give ${a} or ${b}, not both (${why})`);
    }
  }
  for (const needsVpc of ['vpcSubnets', 'securityGroups'] as const) {
    if (props[needsVpc] !== undefined && props.vpc === undefined) {
      throw new ConvoyConfigError(
        `Convoy ${id}: ${needsVpc} is given without vpc; pass vpc too (the functions run outside any VPC otherwise)`,
      );
    }
  }
}

/** The maximum concurrency of a loop's event source mapping: the prop (one number, or per loop) or 10. */
export function maxConcurrencyOf(setting: ConvoyProps['maxConcurrency'], loop: QueueLoop): number {
  const value = typeof setting === 'number' ? setting : (setting?.[loop] ?? DEFAULT_MAX_CONCURRENCY);
  if (!Number.isInteger(value) || value < 2 || value > 1000) {
    throw new ConvoyConfigError(
      `Convoy: maxConcurrency for ${loop} is ${value}; SQS event source mappings accept an integer from 2 to 1000`,
    );
  }
  return value;
}
