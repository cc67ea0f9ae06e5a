/**
 * `convoy describe <release>`: everything a user needs to know about one
 * Release, like `kubectl describe`: the verdict, conditions, the last
 * attempts, rollout and waves, hooks, pin, health summary and Events.
 */
import type { Attempt, Release } from '../domain/api/index.ts';
import { combinedVerdict } from '../domain/status/verdict.ts';
import { releaseKey, verbArgs, type VerbInput } from './args.ts';
import { releaseEvents } from '../views/events.ts';
import { eventTable } from './event-table.ts';
import { readRelease } from './kube.ts';
import { age, ExitCode, table } from './output.ts';
import type { Session } from './session.ts';
import { verdictLine } from './verdict-line.ts';
import { revisionOf } from './revision.ts';

const indent = (lines: readonly string[]): string[] => lines.map((l) => `  ${l}`);

function sourceOf(release: Release): string {
  const src = release.spec.source as {
    git?: { url: string; ref: Record<string, string> };
    helm?: { repository?: string; chart?: string; version?: string };
  };
  if (src.git !== undefined)
    return `git ${src.git.url} ${Object.entries(src.git.ref)
      .map(([k, v]) => `${k}=${v}`)
      .join(' ')}`;
  if (src.helm !== undefined)
    return `helm ${src.helm.repository ?? ''} ${src.helm.chart ?? ''} ${src.helm.version ?? ''}`.trim();
  return JSON.stringify(src);
}

function attemptLines(name: string, a: Attempt | undefined): string[] {
  if (a === undefined) return [`${name}: -`];
  const rev = revisionOf(a.resolvedSource, 40);
  const lines = [
    `${name}: ${a.phase || 'Waiting'} at ${a.attemptedAt}${a.renderRef ? `, render ${a.renderRef}` : ''}${rev ? `, revision ${rev}` : ''}`,
  ];
  if (a.failure !== undefined)
    lines.push(`  failure: ${a.failure.stage} / ${a.failure.reason}: ${a.failure.message}`);
  return lines;
}

export function describeRelease(release: Release, events: string[]): string[] {
  const s = release.status;
  const out: string[] = [
    `Name:        ${release.metadata.name}`,
    `Namespace:   ${release.metadata.namespace}`,
    `Generation:  ${release.metadata.generation ?? '-'}`,
    `Source:      ${sourceOf(release)}`,
    `Cluster:     ${release.spec.cluster.name}`,
    `Suspended:   ${release.spec.suspend ? 'true' : 'false'}`,
    `Pin:         ${s?.pin ? `${s.pin.renderRef} (${s.pin.state})` : (release.metadata.annotations?.['convoy.dev/pin'] ?? '-')}`,
    `Verdict:     ${verdictLine(combinedVerdict(release))}`,
    'Conditions:',
    ...indent(
      table(
        ['TYPE', 'STATUS', 'REASON', 'AGE', 'MESSAGE'],
        (s?.conditions ?? []).map((c) => [
          c.type,
          c.status,
          c.reason,
          age(c.lastTransitionTime),
          c.message.replace(/\s+/g, ' '),
        ]),
      ),
    ),
    'Attempts:',
    ...indent([
      ...attemptLines('Last attempted', s?.lastAttempted),
      ...attemptLines('Last successful', s?.lastSuccessful),
      ...attemptLines('Last healthy', s?.lastHealthy),
    ]),
    `Rollout:     ${s?.rollout ? `${s.rollout.state} ${s.rollout.renderRef}${s.rollout.wave !== undefined ? ` (wave ${s.rollout.wave})` : ''}` : '-'}`,
  ];
  if ((s?.waves ?? []).length > 0) {
    out.push(
      'Waves:',
      ...indent(
        table(
          ['WAVE', 'OBJECTS', 'STATE', 'APPLIED', 'HEALTHY'],
          (s?.waves ?? []).map((w) => [
            String(w.wave),
            String(w.objects),
            w.state,
            w.appliedAt ?? '-',
            w.healthyAt ?? '-',
          ]),
        ),
      ),
    );
  }
  const hooks = s?.lifecycle?.hooks ?? [];
  if (hooks.length > 0) {
    out.push(
      'Hooks:',
      ...indent(
        table(
          ['NAME', 'PHASE', 'STATE', 'JOB', 'MESSAGE'],
          hooks.map((h) => [h.name, h.phase, h.state, h.job ?? '-', h.message ?? '']),
        ),
      ),
    );
  }
  const health = s?.healthSummary;
  if (health !== undefined) {
    out.push(
      `Health:      ${health.healthy}/${health.total} healthy, ${health.progressing} progressing, ${health.degraded} degraded, ${health.missing} missing, ${health.unknown} unknown (checked ${health.checkedAt})`,
    );
    for (const o of health.objects)
      out.push(
        `  ${o.kind} ${o.namespace ? `${o.namespace}/` : ''}${o.name}: ${o.state}${o.message ? ` — ${o.message}` : ''}`,
      );
  }
  out.push('Events:', ...(events.length === 0 ? ['  <none>'] : indent(events)));
  return out;
}

export async function describeVerb(input: VerbInput, s: Session): Promise<ExitCode> {
  const { values, positionals } = verbArgs(input);
  const key = releaseKey('describe', positionals, values);
  const cluster = await s.cluster(values);
  const release = await readRelease(cluster, key);
  const events = await releaseEvents(cluster, key);
  for (const line of describeRelease(release, events.length === 0 ? [] : eventTable(events))) s.io.out(line);
  return ExitCode.ok;
}
