import { describe, expect, it } from 'vitest';
import {
  MAX_SUMMARY_MESSAGE_LENGTH,
  summarize,
  type HealthEntry,
  type HealthState,
} from '../../../domain/health/index.ts';

const entry = (
  name: string,
  state: HealthState,
  namespace: string | null = 'default',
  kind = 'Deployment',
): HealthEntry => ({
  ref: { apiVersion: 'apps/v1', kind, name, ...(namespace === null ? {} : { namespace }) },
  health: { state, message: `${name} is ${state}` },
});

describe('healthSummary', () => {
  it('Summary counts every state and lists only the objects that are not healthy', () => {
    const summary = summarize(
      [
        entry('a', 'Healthy'),
        entry('b', 'Progressing'),
        entry('c', 'Degraded'),
        entry('d', 'Missing'),
        entry('e', 'Unknown'),
        entry('f', 'Healthy'),
      ],
      'sha256:abc',
      '2025-01-01T12:00:00Z',
    );
    expect(summary).toEqual({
      renderRef: 'sha256:abc',
      checkedAt: '2025-01-01T12:00:00Z',
      total: 6,
      healthy: 2,
      progressing: 1,
      degraded: 1,
      missing: 1,
      unknown: 1,
      objects: [
        {
          apiVersion: 'apps/v1',
          kind: 'Deployment',
          namespace: 'default',
          name: 'c',
          state: 'Degraded',
          message: 'c is Degraded',
        },
        {
          apiVersion: 'apps/v1',
          kind: 'Deployment',
          namespace: 'default',
          name: 'd',
          state: 'Missing',
          message: 'd is Missing',
        },
        {
          apiVersion: 'apps/v1',
          kind: 'Deployment',
          namespace: 'default',
          name: 'b',
          state: 'Progressing',
          message: 'b is Progressing',
        },
        {
          apiVersion: 'apps/v1',
          kind: 'Deployment',
          namespace: 'default',
          name: 'e',
          state: 'Unknown',
          message: 'e is Unknown',
        },
      ],
    });
  });

  it('Summary lists at most 20 objects, worst first', () => {
    const entries = [
      ...Array.from({ length: 25 }, (_, i) => entry(`p${String(i).padStart(2, '0')}`, 'Progressing')),
      entry('zz-degraded', 'Degraded'),
      entry('zz-missing', 'Missing'),
    ];
    const summary = summarize(entries, 'sha256:abc', '2025-01-01T12:00:00Z');
    expect(summary.total).toBe(27);
    expect(summary.progressing).toBe(25);
    expect(summary.objects).toHaveLength(20);
    expect(summary.objects.slice(0, 2).map((o) => o.name)).toEqual(['zz-degraded', 'zz-missing']);
    expect(summary.objects.slice(2).every((o) => o.state === 'Progressing')).toBe(true);
  });

  it('Summary order does not depend on the order of the entries', () => {
    const entries = [entry('b', 'Progressing'), entry('a', 'Progressing', 'other'), entry('c', 'Degraded')];
    const forward = summarize(entries, 'r', 't');
    const backward = summarize([...entries].reverse(), 'r', 't');
    expect(backward).toEqual(forward);
    expect(forward.objects.map((o) => o.name)).toEqual(['c', 'b', 'a']);
  });

  it('Summary of cluster-scoped objects has no namespace field', () => {
    const summary = summarize(
      [entry('widgets.example.com', 'Progressing', null, 'CustomResourceDefinition')],
      'r',
      't',
    );
    expect(summary.objects[0]).not.toHaveProperty('namespace');
  });

  it('Summary of an empty render counts nothing', () => {
    expect(summarize([], 'r', 't')).toMatchObject({ total: 0, healthy: 0, objects: [] });
  });

  it('Summary truncates long messages', () => {
    const long: HealthEntry = {
      ref: { apiVersion: 'v1', kind: 'Pod', name: 'p' },
      health: { state: 'Degraded', message: 'x'.repeat(1000) },
    };
    const message = summarize([long], 'r', 't').objects[0]?.message ?? '';
    expect(message).toHaveLength(MAX_SUMMARY_MESSAGE_LENGTH);
    expect(message.endsWith('…')).toBe(true);
  });
});
