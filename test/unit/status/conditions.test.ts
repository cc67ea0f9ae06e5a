import { describe, expect, it } from 'vitest';
import { nextCondition, toRfc3339 } from '../../../domain/status/conditions.ts';
import { statusPatchBody, ForeignConditionError } from '../../../domain/status/slices.ts';
import { FieldManager } from '../../../domain/status/field-managers.ts';

const t0 = new Date('2026-11-29T10:00:00.123Z');
const t1 = new Date('2026-11-29T10:05:00Z');

describe('condition helpers', () => {
  const first = nextCondition(
    undefined,
    { type: 'Applied', status: 'True', reason: 'Applied', message: 'ok' },
    { generation: 3, now: t0 },
  );

  it('stamps observedGeneration and a second-precision lastTransitionTime', () => {
    expect(first).toMatchObject({ observedGeneration: 3, lastTransitionTime: '2026-11-29T10:00:00Z' });
  });

  it('keeps lastTransitionTime when status, reason and message are unchanged', () => {
    const again = nextCondition(
      [first],
      { type: 'Applied', status: 'True', reason: 'Applied', message: 'ok' },
      { generation: 4, now: t1 },
    );
    expect(again.lastTransitionTime).toBe(first.lastTransitionTime);
    expect(again.observedGeneration).toBe(4);
  });

  for (const change of [{ status: 'False' as const }, { reason: 'DeployFailed' }, { message: 'other' }]) {
    it(`moves lastTransitionTime when ${Object.keys(change)[0]} changes`, () => {
      const next = nextCondition(
        [first],
        { type: 'Applied', status: 'True', reason: 'Applied', message: 'ok', ...change },
        { generation: 3, now: t1 },
      );
      expect(next.lastTransitionTime).toBe(toRfc3339(t1));
    });
  }
});

describe('status slices', () => {
  it('refuses a condition another writer owns', () => {
    expect(() =>
      statusPatchBody(FieldManager.health, {
        healthSummary: undefined,
        conditions: [
          {
            type: 'Applied',
            status: 'True',
            reason: 'Applied',
            message: '',
            lastTransitionTime: 'x',
            observedGeneration: 1,
          },
        ],
      }),
    ).toThrow(ForeignConditionError);
  });

  it('drops absent owned fields and every field the writer does not own', () => {
    const body = statusPatchBody(FieldManager.health, {
      healthSummary: undefined,
      lastAttempted: { x: 1 },
      conditions: [],
    });
    expect(body).toEqual({ conditions: [] });
  });
});
