/**
 * 1000 generated cases (test/fuzz/generate.ts, seeded) of the annotations and
 * Release spec values convoy reads, through the pure code that reads them: the
 * Release schema (what admission would refuse), the pin check, the sync-wave
 * plan, the retry backoff, the relay's timers and change rules, and the ONE
 * mapping to status (conclude) — whose slice must then pass the CRD's own
 * schema. 0 crashes: every case ends refused by the schema (naming the field)
 * or with a named Applied reason and a status the CRD accepts.
 */
import { describe, expect, it } from 'vitest';
import { statusProblems } from '../../../adapters/kube/status-writer.ts';
import { API_GROUP, API_VERSION } from '../../../domain/api/common.ts';
import { parseRelease } from '../../../domain/api/objects.ts';
import { Annotation, annotationOf, isNewRequest, pinProblem } from '../../../domain/reconcile/annotations.ts';
import { conclude, retryPolicyOf } from '../../../domain/reconcile/conclude.ts';
import type { Halt } from '../../../domain/reconcile/halt.ts';
import { dueTimes } from '../../../domain/relay/timers.ts';
import { releaseChangeCause } from '../../../domain/relay/release-events.ts';
import { reconcileUpToDate } from '../../../domain/relay/up-to-date.ts';
import { planWaves } from '../../../domain/render/order.ts';
import { RenderError } from '../../../domain/render/errors.ts';
import { retryDelaySeconds } from '../../../domain/runtime/backoff.ts';
import { AppliedReason } from '../../../domain/status/reasons.ts';
import { statusPatchBody } from '../../../domain/status/slices.ts';
import { generateCases, SEED } from '../../fuzz/generate.ts';

const RENDER_REF = `sha256:${'0'.repeat(64)}`;
const NAMED = new Set<string>(Object.values(AppliedReason));

describe(`fuzz: 1000 generated annotation and spec cases (seed ${SEED})`, () => {
  it('0 crashes; each case is refused by the schema naming a field, or ends with a named reason and a status the CRD accepts', () => {
    const endings = new Map<string, number>();
    const count = (ending: string) => endings.set(ending, (endings.get(ending) ?? 0) + 1);
    const now = new Date('2026-06-01T12:00:00Z');
    for (const c of generateCases(1000)) {
      const raw = {
        apiVersion: `${API_GROUP}/${API_VERSION}`,
        kind: 'Release',
        metadata: {
          name: `fuzz-${c.index}`,
          namespace: 'fuzz',
          uid: `uid-${c.index}`,
          generation: 1,
          annotations: c.annotations,
        },
        spec: {
          cluster: { name: 'local' },
          source: { git: { url: 'https://git.example/app.git', ref: { branch: 'main' } } },
          ...c.spec,
        },
      };
      const parsed = parseRelease(raw);
      if (!parsed.ok) {
        expect(parsed.error, `case ${c.index}`).toMatch(/spec\.|metadata\./);
        count('refused by the schema');
        continue;
      }
      const release = parsed.value;
      // The relay's rules and timers never throw.
      expect(() => dueTimes(release, now)).not.toThrow();
      expect(releaseChangeCause(undefined, release)).toBe('Release added');
      expect(typeof reconcileUpToDate(release)).toBe('boolean');
      for (const key of [Annotation.syncRequestedAt, Annotation.forceSyncRequestedAt]) {
        expect(typeof isNewRequest(annotationOf(release, key), undefined)).toBe('boolean');
      }
      // The retry backoff of the Release's policy never throws (it becomes a visibility timeout).
      expect(
        () => retryDelaySeconds(3, retryPolicyOf(release)),
        `case ${c.index}: ${JSON.stringify(c.spec)}`,
      ).not.toThrow();

      // Where the reconcile would stop: a bad pin, a bad sync-wave, or applied.
      let halt: Halt | undefined;
      const pin = annotationOf(release, Annotation.pin);
      const problem = pin === undefined ? undefined : pinProblem(pin);
      if (problem !== undefined) halt = { halt: 'pinInvalid', message: problem };
      const object = {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: 'cm', annotations: c.objectAnnotations },
      };
      if (halt === undefined) {
        try {
          planWaves([object]);
        } catch (error) {
          expect(error, `case ${c.index}`).toBeInstanceOf(RenderError);
          halt = { halt: 'renderFailed', message: (error as Error).message };
        }
      }
      const decision = conclude({
        release,
        now,
        resolved: halt?.halt === 'pinInvalid' ? {} : { renderRef: pin ?? RENDER_REF },
        retention: { maxRenders: 10, maxAge: '720h' },
        ...(halt === undefined ? {} : { halt }),
      });
      const applied = decision.slice.conditions.find((cond) => cond.type === 'Applied');
      expect(NAMED.has(applied?.reason ?? ''), `case ${c.index}: ${applied?.reason}`).toBe(true);
      expect(
        statusProblems(statusPatchBody('convoy-release', decision.slice)),
        `case ${c.index}`,
      ).toBeUndefined();
      count(applied?.reason ?? '?');
    }
    expect([...endings.values()].reduce((a, b) => a + b, 0)).toBe(1000);
    expect(endings.get('Pinned') ?? 0).toBeGreaterThan(0);
    expect(endings.get('DeployFailed') ?? 0).toBeGreaterThan(0);
    process.stdout.write(`fuzz endings: ${JSON.stringify(Object.fromEntries(endings))}\n`);
  });
});
