import { describe, expect, it } from 'vitest';
import { aggregate, HEALTH_STATES_WORST_FIRST, type HealthState } from '../../../domain/health/index.ts';
import { assess, deployment, DEPLOYMENT_DONE, NOW } from './fixtures.ts';

const minutesAgo = (minutes: number) => new Date(NOW.getTime() - minutes * 60_000);
const TEN_MINUTES = 10 * 60_000;

describe('Worst-of aggregation (Degraded > Missing > Progressing > Unknown > Healthy)', () => {
  it('No states aggregate to Healthy', () => {
    expect(aggregate([])).toBe('Healthy');
  });

  it('All Healthy aggregate to Healthy', () => {
    expect(aggregate(['Healthy', 'Healthy'])).toBe('Healthy');
  });

  it('Degraded beats every other state', () => {
    expect(aggregate(['Healthy', 'Unknown', 'Progressing', 'Missing', 'Degraded'])).toBe('Degraded');
  });

  it('Missing beats Progressing, Unknown and Healthy', () => {
    expect(aggregate(['Progressing', 'Missing', 'Unknown', 'Healthy'])).toBe('Missing');
  });

  it('Progressing beats Unknown and Healthy', () => {
    expect(aggregate(['Unknown', 'Healthy', 'Progressing'])).toBe('Progressing');
  });

  it('Unknown beats Healthy', () => {
    expect(aggregate(['Healthy', 'Unknown'])).toBe('Unknown');
  });

  it('Aggregation does not depend on order', () => {
    const states: HealthState[] = ['Healthy', 'Progressing', 'Unknown'];
    expect(aggregate(states)).toBe(aggregate([...states].reverse()));
    expect(HEALTH_STATES_WORST_FIRST).toEqual(['Degraded', 'Missing', 'Progressing', 'Unknown', 'Healthy']);
  });
});

describe('Progress deadline', () => {
  const rollingOut = deployment({}, { ...DEPLOYMENT_DONE, updatedReplicas: 1 });

  it('Progressing for longer than progressDeadline is Degraded', () => {
    const health = assess(rollingOut, { progressingSince: minutesAgo(11), progressDeadlineMs: TEN_MINUTES });
    expect(health.state).toBe('Degraded');
    expect(health.message).toBe(
      'Waiting for rollout to finish: 1 of 3 new replicas have been updated — Progressing for 11m0s, exceeded the progress deadline of 10m0s',
    );
  });

  it('Progressing within progressDeadline stays Progressing', () => {
    const health = assess(rollingOut, { progressingSince: minutesAgo(9), progressDeadlineMs: TEN_MINUTES });
    expect(health.state).toBe('Progressing');
  });

  it('Progressing for exactly progressDeadline stays Progressing', () => {
    expect(
      assess(rollingOut, { progressingSince: minutesAgo(10), progressDeadlineMs: TEN_MINUTES }).state,
    ).toBe('Progressing');
  });

  it('Progressing without progressingSince or without progressDeadline stays Progressing', () => {
    expect(assess(rollingOut, { progressDeadlineMs: TEN_MINUTES }).state).toBe('Progressing');
    expect(assess(rollingOut, { progressingSince: minutesAgo(600) }).state).toBe('Progressing');
  });

  it('Healthy past the deadline stays Healthy', () => {
    expect(
      assess(deployment({}, DEPLOYMENT_DONE), {
        progressingSince: minutesAgo(60),
        progressDeadlineMs: TEN_MINUTES,
      }).state,
    ).toBe('Healthy');
  });

  it('Missing past the deadline stays Missing', () => {
    expect(
      assess(undefined, { progressingSince: minutesAgo(60), progressDeadlineMs: TEN_MINUTES }).state,
    ).toBe('Missing');
  });
});
