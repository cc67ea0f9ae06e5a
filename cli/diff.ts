/**
 * `convoy diff <release> [--ref <ref>]`: renders the Release at its current
 * source (or --ref) on this machine and shows, per object, the difference
 * between the live object and what a server-side apply would make of it
 * (dry run), like `flux diff kustomization`. Exit 0: no difference; 1: a
 * difference (or an error). Secret values are never printed.
 *
 * The lines come from domain/render/text-diff.ts, the relay's render diff, with the same caps
 * (per object 1 MiB, 2,000 changed lines, 2 s; per run 8 MiB and 5 s): an object over one is
 * listed as differing with one line naming the cap instead of its lines.
 */
import { releaseKey, verbArgs, type VerbInput } from './args.ts';
import { readRelease } from './kube.ts';
import { comparable, compareWithLive, objectName, targetConfig } from '../views/live-compare.ts';
import { parseRefFlag, renderLocally } from './local-render.ts';
import { DEFAULT_DIFF_LIMITS, diffObjects } from '../domain/render/text-diff.ts';
import { ExitCode } from './output.ts';
import type { Session } from './session.ts';

export async function diffVerb(input: VerbInput, s: Session): Promise<ExitCode> {
  const { values, positionals } = verbArgs<{ ref: string }>(input);
  const key = releaseKey('diff', positionals, values);
  const ref = values.ref === undefined ? undefined : parseRefFlag(values.ref);
  const cluster = await s.cluster(values);
  const release = await readRelease(cluster, key);
  const render = await renderLocally(cluster, release, ref);
  const target = await targetConfig(cluster, release);
  const compared = await compareWithLive(target, render.objects);
  const checked = compared.filter((c) => c.desired !== undefined);
  const diffs = new Map(
    diffObjects(
      checked.map((c) => ({ before: comparable(c.live), after: comparable(c.desired) })),
      DEFAULT_DIFF_LIMITS,
      () => performance.now(),
    ).map((d, index) => [checked[index], d]),
  );
  let changed = 0;
  let capped = 0;
  for (const c of compared) {
    const name = objectName(c.object);
    const d = diffs.get(c);
    if (d === undefined) {
      s.io.out(`? ${name}: ${c.note ?? 'not checked'}`);
      changed++;
      continue;
    }
    if (d.result === 'unchanged') continue;
    changed++;
    s.io.out(c.live === undefined ? `+ ${name} (created)` : `~ ${name}`);
    if (d.result === 'skipped') capped++;
    for (const line of d.result === 'diffed' ? d.lines : [`  ${d.skipped}`]) s.io.out(`    ${line}`);
  }
  const at = `render ${render.renderRef}${render.revision ? ` at revision ${render.revision}` : ''}`;
  if (changed === 0) {
    s.io.err(`no difference: ${compared.length} objects of ${at} match the live objects`);
    return ExitCode.ok;
  }
  const cappedNote = capped === 0 ? '' : ` (${capped} not diffed: over a cap, named on its line)`;
  s.io.err(`${changed} of ${compared.length} objects of ${at} differ from the live objects${cappedNote}`);
  return ExitCode.failure;
}
