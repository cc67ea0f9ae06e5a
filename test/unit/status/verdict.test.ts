import { describe, expect, it } from 'vitest';
import type { Condition } from '../../../domain/api/common.ts';
import { parseRelease, type Release } from '../../../domain/api/objects.ts';
import { combinedVerdict } from '../../../domain/status/verdict.ts';

const T = '2026-11-29T10:00:00Z';
const NEW = `sha256:${'a'.repeat(64)}`;
const OLD = `sha256:${'b'.repeat(64)}`;
const GEN = 7;

const cond = (
  type: string,
  status: Condition['status'],
  reason: string,
  observedGeneration = GEN,
): Condition => ({
  type,
  status,
  reason,
  message: `${type} says ${reason}`,
  lastTransitionTime: T,
  observedGeneration,
});

interface Shape {
  spec?: Record<string, unknown>;
  status?: Record<string, unknown>;
  conditions?: Condition[];
  generation?: number;
}

/** A Release whose every signal holds, with `shape` laid over it. */
function release(shape: Shape = {}): Release {
  const raw = {
    apiVersion: 'convoy.dev/v1alpha1',
    kind: 'Release',
    metadata: {
      name: 'podinfo',
      namespace: 'team-a',
      ...('generation' in shape ? { generation: shape.generation } : { generation: GEN }),
    },
    spec: {
      cluster: { name: 'prod' },
      source: { git: { url: 'https://git.example.com/apps.git', ref: { branch: 'main' } } },
      ...shape.spec,
    },
    status: {
      observedGeneration: GEN,
      lastAttempted: { attemptedAt: T, phase: 'Succeeded', renderRef: NEW },
      lastSuccessful: { attemptedAt: T, phase: 'Succeeded', renderRef: NEW },
      rollout: { renderRef: NEW, state: 'Succeeded' },
      conditions: shape.conditions ?? [
        cond('Applied', 'True', 'Applied'),
        cond('InSync', 'True', 'InSync'),
        cond('Healthy', 'True', 'Healthy'),
      ],
      ...shape.status,
    },
  };
  const parsed = parseRelease(raw);
  if (!parsed.ok) throw new Error(`fixture does not parse: ${parsed.error}`);
  return parsed.value;
}

/** The default conditions with `type` replaced (or removed with null). */
function withCondition(type: string, c: Condition | null, extra: Condition[] = []): Condition[] {
  const base = [
    cond('Applied', 'True', 'Applied'),
    cond('InSync', 'True', 'InSync'),
    cond('Healthy', 'True', 'Healthy'),
    ...extra,
  ];
  const out = base.filter((b) => b.type !== type);
  return c === null ? out : [...out, c];
}

const failurePolicy = { failurePolicy: { rollback: 'OnWaveFailure' } };

describe('combined verdict: Ready', () => {
  it('is ready when the new render is applied, in sync, healthy and every condition is current', () => {
    expect(combinedVerdict(release())).toMatchObject({ ready: true });
  });

  it('is ready with Healthy True NotConfigured (no spec.healthAssessment) and says health is not assessed', () => {
    const v = combinedVerdict(
      release({ conditions: withCondition('Healthy', cond('Healthy', 'True', 'NotConfigured')) }),
    );
    expect(v).toMatchObject({ ready: true, health: 'NotConfigured' });
    expect(v.message).toContain('not assessed');
  });

  it('says health is Assessed when Healthy is True Healthy', () => {
    expect(combinedVerdict(release())).toMatchObject({ ready: true, health: 'Assessed' });
  });

  it('is ready with spec.failurePolicy when RolloutSucceeded is True for the new render', () => {
    const r = release({
      spec: failurePolicy,
      conditions: withCondition('RolloutSucceeded', cond('RolloutSucceeded', 'True', 'Succeeded')),
    });
    expect(combinedVerdict(r)).toMatchObject({ ready: true });
  });
});

describe('combined verdict: lastAttempted.renderRef == lastSuccessful.renderRef and Applied True', () => {
  it('waits for Applied when it is not reported yet', () => {
    expect(combinedVerdict(release({ conditions: withCondition('Applied', null) }))).toMatchObject({
      ready: false,
      signal: 'Applied',
      kind: 'wait',
    });
  });

  it('waits for Applied when its reason is WaitingFor* (WaitingForSync)', () => {
    const v = combinedVerdict(
      release({ conditions: withCondition('Applied', cond('Applied', 'False', 'WaitingForSync')) }),
    );
    expect(v).toMatchObject({ ready: false, signal: 'Applied', kind: 'wait' });
    expect(v.message).toContain('WaitingForSync');
  });

  it.each(['SourceNotReady', 'ClusterNotReady', 'ValuesNotReady', 'DeployFailed', 'PruneFailed'])(
    'waits on Applied False %s: convoy retries it',
    (reason) => {
      const v = combinedVerdict(
        release({ conditions: withCondition('Applied', cond('Applied', 'False', reason)) }),
      );
      expect(v).toMatchObject({ ready: false, signal: 'Applied', kind: 'wait', retrying: true });
      expect(v.message).toContain(`Applied says ${reason}`);
      expect(v.message).toContain('retries');
    },
  );

  it.each([
    'Unsupported',
    'Unappliable',
    'Pinned',
    'WaveFailed',
    'RolloutFailed',
    'ClusterWaveFailed',
    'HookFailed',
  ])('fails on Applied False %s: convoy does not retry it', (reason) => {
    const v = combinedVerdict(
      release({ conditions: withCondition('Applied', cond('Applied', 'False', reason)) }),
    );
    expect(v).toMatchObject({ ready: false, signal: 'Applied', kind: 'failure' });
    expect(v).not.toHaveProperty('retrying');
  });

  it('waits for NewRender when lastAttempted.renderRef differs from lastSuccessful.renderRef', () => {
    const v = combinedVerdict(
      release({ status: { lastSuccessful: { attemptedAt: T, phase: 'Succeeded', renderRef: OLD } } }),
    );
    expect(v).toMatchObject({ ready: false, signal: 'NewRender', kind: 'wait' });
    expect(v.message).toContain(NEW);
  });

  it('fails on NewRender when the newest render was rolled back (Applied True RolledBack)', () => {
    const r = release({
      status: {
        lastAttempted: {
          attemptedAt: T,
          phase: 'Failed',
          renderRef: NEW,
          failure: { stage: 'Syncing', reason: 'RolledBack', message: 'wave 1 timed out' },
        },
        lastSuccessful: { attemptedAt: T, phase: 'Succeeded', renderRef: OLD },
      },
      conditions: withCondition('Applied', cond('Applied', 'True', 'RolledBack')),
    });
    const v = combinedVerdict(r);
    expect(v).toMatchObject({ ready: false, signal: 'NewRender', kind: 'failure' });
    expect(v.message).toContain('wave 1 timed out');
  });

  it('waits for NewRender when no render was made yet', () => {
    expect(
      combinedVerdict(
        release({ status: { lastAttempted: { attemptedAt: T, phase: '' }, lastSuccessful: undefined } }),
      ),
    ).toMatchObject({
      ready: false,
      signal: 'NewRender',
      kind: 'wait',
    });
  });
});

describe('combined verdict: InSync True', () => {
  it('waits for InSync when the drift loop has not checked yet', () => {
    expect(combinedVerdict(release({ conditions: withCondition('InSync', null) }))).toMatchObject({
      ready: false,
      signal: 'InSync',
      kind: 'wait',
    });
  });

  it('waits for InSync Unknown Pending', () => {
    expect(
      combinedVerdict(release({ conditions: withCondition('InSync', cond('InSync', 'Unknown', 'Pending')) })),
    ).toMatchObject({
      ready: false,
      signal: 'InSync',
      kind: 'wait',
    });
  });

  it('fails on InSync False Drifted', () => {
    expect(
      combinedVerdict(release({ conditions: withCondition('InSync', cond('InSync', 'False', 'Drifted')) })),
    ).toMatchObject({
      ready: false,
      signal: 'InSync',
      kind: 'failure',
    });
  });
});

describe('combined verdict: Healthy True and not Pending', () => {
  it('waits for Healthy Unknown Pending (the render is not assessed yet)', () => {
    expect(
      combinedVerdict(
        release({ conditions: withCondition('Healthy', cond('Healthy', 'Unknown', 'Pending')) }),
      ),
    ).toMatchObject({
      ready: false,
      signal: 'Healthy',
      kind: 'wait',
    });
  });

  it('waits for Healthy whose reason is Pending even when True', () => {
    expect(
      combinedVerdict(release({ conditions: withCondition('Healthy', cond('Healthy', 'True', 'Pending')) })),
    ).toMatchObject({
      ready: false,
      signal: 'Healthy',
      kind: 'wait',
    });
  });

  it('waits for Healthy False Progressing', () => {
    expect(
      combinedVerdict(
        release({ conditions: withCondition('Healthy', cond('Healthy', 'False', 'Progressing')) }),
      ),
    ).toMatchObject({
      ready: false,
      signal: 'Healthy',
      kind: 'wait',
    });
  });

  it('fails on Healthy False Degraded', () => {
    expect(
      combinedVerdict(
        release({ conditions: withCondition('Healthy', cond('Healthy', 'False', 'Degraded')) }),
      ),
    ).toMatchObject({
      ready: false,
      signal: 'Healthy',
      kind: 'failure',
    });
  });

  it('waits for Healthy Unknown ClusterNotReady (Unknown is never a failure)', () => {
    expect(
      combinedVerdict(
        release({ conditions: withCondition('Healthy', cond('Healthy', 'Unknown', 'ClusterNotReady')) }),
      ),
    ).toMatchObject({
      ready: false,
      signal: 'Healthy',
      kind: 'wait',
    });
  });
});

describe('combined verdict: RolloutSucceeded (when present) True with rollout.renderRef the new render', () => {
  it('waits for RolloutSucceeded False Progressing', () => {
    const r = release({
      spec: failurePolicy,
      conditions: withCondition('RolloutSucceeded', cond('RolloutSucceeded', 'False', 'Progressing')),
    });
    expect(combinedVerdict(r)).toMatchObject({ ready: false, signal: 'RolloutSucceeded', kind: 'wait' });
  });

  it('fails on RolloutSucceeded False Failed', () => {
    const r = release({
      spec: failurePolicy,
      conditions: withCondition('RolloutSucceeded', cond('RolloutSucceeded', 'False', 'Failed')),
    });
    expect(combinedVerdict(r)).toMatchObject({ ready: false, signal: 'RolloutSucceeded', kind: 'failure' });
  });

  it('fails on RolloutSucceeded False RolledBack', () => {
    const r = release({
      spec: failurePolicy,
      conditions: withCondition('RolloutSucceeded', cond('RolloutSucceeded', 'False', 'RolledBack')),
    });
    expect(combinedVerdict(r)).toMatchObject({ ready: false, signal: 'RolloutSucceeded', kind: 'failure' });
  });

  it('waits when RolloutSucceeded is True but status.rollout.renderRef is an older render', () => {
    const r = release({
      spec: failurePolicy,
      status: { rollout: { renderRef: OLD, state: 'Succeeded' } },
      conditions: withCondition('RolloutSucceeded', cond('RolloutSucceeded', 'True', 'Succeeded')),
    });
    const v = combinedVerdict(r);
    expect(v).toMatchObject({ ready: false, signal: 'RolloutSucceeded', kind: 'wait' });
    expect(v.message).toContain(OLD);
  });

  it('waits for RolloutSucceeded when spec.failurePolicy is set and the condition is not reported yet', () => {
    expect(combinedVerdict(release({ spec: failurePolicy }))).toMatchObject({
      ready: false,
      signal: 'RolloutSucceeded',
      kind: 'wait',
    });
  });

  it('judges a present RolloutSucceeded even without spec.failurePolicy', () => {
    const r = release({
      conditions: withCondition('RolloutSucceeded', cond('RolloutSucceeded', 'False', 'Failed')),
    });
    expect(combinedVerdict(r)).toMatchObject({ ready: false, signal: 'RolloutSucceeded', kind: 'failure' });
  });
});

describe("combined verdict: every condition's observedGeneration equals metadata.generation", () => {
  it('waits on ObservedGeneration when Applied is from an older spec, even if it says False (the old failure does not count)', () => {
    const v = combinedVerdict(
      release({ conditions: withCondition('Applied', cond('Applied', 'False', 'DeployFailed', GEN - 1)) }),
    );
    expect(v).toMatchObject({ ready: false, signal: 'ObservedGeneration', kind: 'wait' });
    expect(v.message).toContain(`generation ${GEN - 1}`);
  });

  it('waits on ObservedGeneration when a True Healthy is from an older spec', () => {
    expect(
      combinedVerdict(
        release({ conditions: withCondition('Healthy', cond('Healthy', 'True', 'Healthy', GEN - 1)) }),
      ),
    ).toMatchObject({
      ready: false,
      signal: 'ObservedGeneration',
      kind: 'wait',
    });
  });

  it('waits on ObservedGeneration when any other condition (LifecycleSucceeded) is from an older spec', () => {
    const r = release({
      conditions: withCondition(
        'LifecycleSucceeded',
        cond('LifecycleSucceeded', 'True', 'Succeeded', GEN - 1),
      ),
    });
    const v = combinedVerdict(r);
    expect(v).toMatchObject({ ready: false, signal: 'ObservedGeneration', kind: 'wait' });
    expect(v.message).toContain('LifecycleSucceeded');
  });

  it('is not ready when metadata.generation is not set', () => {
    expect(combinedVerdict(release({ generation: undefined }))).toMatchObject({
      ready: false,
      signal: 'ObservedGeneration',
      kind: 'wait',
    });
  });
});

describe('combined verdict: the first signal not there yet', () => {
  it('names Applied before InSync, Healthy and RolloutSucceeded', () => {
    const r = release({
      spec: failurePolicy,
      conditions: [
        cond('Applied', 'False', 'DeployFailed'),
        cond('InSync', 'False', 'Drifted'),
        cond('Healthy', 'False', 'Degraded'),
        cond('RolloutSucceeded', 'False', 'Failed'),
      ],
    });
    expect(combinedVerdict(r)).toMatchObject({ signal: 'Applied' });
  });

  it('names InSync before Healthy', () => {
    const r = release({
      conditions: [
        cond('Applied', 'True', 'Applied'),
        cond('InSync', 'Unknown', 'Pending'),
        cond('Healthy', 'False', 'Degraded'),
      ],
    });
    expect(combinedVerdict(r)).toMatchObject({ signal: 'InSync', kind: 'wait' });
  });

  it('names Healthy before RolloutSucceeded', () => {
    const r = release({
      spec: failurePolicy,
      conditions: [
        cond('Applied', 'True', 'Applied'),
        cond('InSync', 'True', 'InSync'),
        cond('Healthy', 'False', 'Progressing'),
        cond('RolloutSucceeded', 'False', 'Failed'),
      ],
    });
    expect(combinedVerdict(r)).toMatchObject({ signal: 'Healthy', kind: 'wait' });
  });
});

describe('combined verdict: status.rollout of the current render', () => {
  it('waits while the rollout of the new render is Progressing, without RolloutSucceeded', () => {
    const v = combinedVerdict(
      release({ status: { rollout: { renderRef: NEW, state: 'Progressing', wave: 1 } } }),
    );
    expect(v).toMatchObject({ ready: false, signal: 'Rollout', kind: 'wait' });
    expect(v.message).toContain('Progressing at wave 1');
  });

  it('fails when the rollout of the new render Failed, even with Healthy True NotConfigured and no failurePolicy', () => {
    const r = release({
      status: { rollout: { renderRef: NEW, state: 'Failed' } },
      conditions: withCondition('Healthy', cond('Healthy', 'True', 'NotConfigured')),
    });
    expect(combinedVerdict(r)).toMatchObject({ ready: false, signal: 'Rollout', kind: 'failure' });
  });

  it('does not judge the rollout of an older render by its state', () => {
    expect(
      combinedVerdict(release({ status: { rollout: { renderRef: OLD, state: 'Failed' } } })),
    ).toMatchObject({ ready: true });
  });
});

describe('combined verdict: Suspended', () => {
  const allStale = [
    cond('Applied', 'True', 'Applied', GEN - 1),
    cond('InSync', 'True', 'InSync', GEN - 1),
    cond('Healthy', 'True', 'Healthy', GEN - 1),
  ];

  it('a suspended Release is its own verdict, Suspended, not Waiting (ObservedGeneration): suspending bumped the generation and nothing reconciles it', () => {
    const v = combinedVerdict(release({ spec: { suspend: true }, conditions: allStale }));
    expect(v).toMatchObject({ ready: false, signal: 'Suspended', kind: 'suspended' });
    expect(v.message).toContain('spec.suspend');
    expect(v.message).toContain('convoy resume podinfo -n team-a');
  });

  it('a suspended Release whose every signal holds is still Suspended, and says what the observers last reported', () => {
    const v = combinedVerdict(release({ spec: { suspend: true } }));
    expect(v).toMatchObject({ ready: false, kind: 'suspended' });
    expect(v.message).toContain(`render ${NEW} was applied last`);
    expect(v.message).toContain('InSync True (InSync), Healthy True (Healthy)');
  });

  it('a suspended Release that failed or never reconciled is Suspended too', () => {
    expect(
      combinedVerdict(
        release({
          spec: { suspend: true },
          conditions: withCondition('Applied', cond('Applied', 'False', 'Unsupported')),
        }),
      ),
    ).toMatchObject({ kind: 'suspended' });
    const never = combinedVerdict(
      release({
        spec: { suspend: true },
        conditions: [],
        status: { lastAttempted: undefined, lastSuccessful: undefined, rollout: undefined },
      }),
    );
    expect(never).toMatchObject({ kind: 'suspended' });
    expect(never.message).toContain('no render was applied yet');
  });

  it('after a resume the verdict is computed from the current generation: observers not yet at it wait, all at it is Ready', () => {
    const resumed = GEN;
    const appliedOnly = [
      cond('Applied', 'True', 'Applied', resumed),
      cond('InSync', 'True', 'InSync', resumed - 2),
      cond('Healthy', 'True', 'Healthy', resumed - 2),
    ];
    expect(combinedVerdict(release({ spec: { suspend: false }, conditions: appliedOnly }))).toMatchObject({
      ready: false,
      signal: 'ObservedGeneration',
      kind: 'wait',
    });
    expect(combinedVerdict(release({ spec: { suspend: false } }))).toMatchObject({ ready: true });
  });
});
