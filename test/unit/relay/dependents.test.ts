// The relay's reverse index of spec.dependsOn: a dependency's change that a dependent may act on
// sends each dependent one reconcile message; status writes that change nothing it judges send none.
import { describe, expect, it } from 'vitest';
import type { Release } from '../../../domain/api/objects.ts';
import { createDependentsWiring } from '../../../relay/dependents.ts';
import { createLogger } from '../../../platform/logger.ts';
import type { Watched } from '../../../relay/watch/informers.ts';
import type { InformerEvent } from '../../../relay/watch/resilient-informer.ts';
import { rel, set } from '../dependencies/fixtures.ts';

function wiring(releases: Release[]) {
  const lines: string[] = [];
  const log = createLogger({ level: 'info', write: (line) => lines.push(line) });
  const find = (ns: string, name: string) =>
    releases.find((r) => r.metadata.namespace === ns && r.metadata.name === name);
  const sent: string[] = [];
  const send = (r: Release, cause: string) => sent.push(`${r.metadata.name}: ${cause}`);
  return { w: createDependentsWiring(log, find), sent, send, lines };
}

describe('relay: dependents of a dependency', () => {
  const a = rel('a', 'new');
  const b = rel('b', 'new', [{ name: 'a' }]);
  const c = rel('c', 'new', [{ name: 'a' }, { kind: 'ReleaseSet', name: 'mesh' }]);

  it("a dependency's verdict turning ready sends each dependent one reconcile message", () => {
    const { w, sent, send } = wiring([a, b, c]);
    for (const r of [a, b, c]) w.onRelease(undefined, r, true, send);
    expect(sent).toEqual([]);
    w.onRelease(a, rel('a', 'ready'), false, send);
    expect(sent).toEqual([
      'b: dependency Release team-a/a changed',
      'c: dependency Release team-a/a changed',
    ]);
  });

  it('a status write that changes nothing a dependent judges sends nothing', () => {
    const { w, sent, send } = wiring([a, b]);
    w.onRelease(undefined, b, true, send);
    const ready = rel('a', 'ready');
    const rewritten = {
      ...ready,
      status: { ...ready.status, reconciledAt: '2026-12-07T11:00:00Z' },
    } as Release;
    w.onRelease(ready, rewritten, false, send);
    expect(sent).toEqual([]);
  });

  it('a dependency deleted or added wakes its dependents; a dependent that drops the edge is no longer woken', () => {
    const { w, sent, send } = wiring([a, b]);
    w.onRelease(undefined, b, false, send);
    w.onRelease(a, undefined, false, send);
    w.onRelease(undefined, a, false, send);
    expect(sent).toEqual(['b: dependency Release team-a/a deleted', 'b: dependency Release team-a/a added']);
    w.onRelease(b, rel('b', 'new'), false, send);
    w.onRelease(a, rel('a', 'ready'), false, send);
    expect(sent).toHaveLength(2);
  });

  it('a ReleaseSet whose rollout state changes wakes the Releases that depend on it', () => {
    const { w, sent, send } = wiring([c]);
    w.onRelease(undefined, c, true, send);
    const event: InformerEvent<Watched> = {
      type: 'modified',
      old: set('mesh', 'Progressing'),
      object: set('mesh', 'Succeeded'),
      fromList: false,
      initial: false,
    };
    w.onReleaseSet(event, send);
    expect(sent).toEqual(['c: dependency ReleaseSet team-a/mesh changed']);
  });

  it('1,000 dependents of one Release: one message each when it turns ready', () => {
    const many = Array.from({ length: 1000 }, (_, i) => rel(`app-${i}`, 'new', [{ name: 'a' }]));
    const { w, sent, send } = wiring([a, ...many]);
    for (const r of many) w.onRelease(undefined, r, true, send);
    expect(w.dependents()).toBe(1000);
    w.onRelease(a, rel('a', 'ready'), false, send);
    expect(new Set(sent).size).toBe(1000);
  });
});
