/**
 * `convoy diff <release> [--ref <ref>]`: renders the Release at its current
 * source (or --ref) on this machine and shows, per object, the difference
 * between the live object and what a server-side apply would make of it
 * (dry run), like `flux diff kustomization`. Exit 0: no difference; 1: a
 * difference (or an error). Secret values are never printed.
 */
import { releaseKey, verbArgs } from './args.ts';
import type { VerbInput } from './verbs.ts';
import { readRelease } from './kube.ts';
import { comparable, compareWithLive, objectName, targetConfig } from './live-compare.ts';
import { parseRefFlag, renderLocally } from './local-render.ts';
import { ExitCode } from './output.ts';
import type { Session } from './session.ts';
import { canonicalYaml, unifiedDiff } from './text-diff.ts';

export async function diffVerb(input: VerbInput, s: Session): Promise<ExitCode> {
  const { values, positionals } = verbArgs<{ ref: string }>(input);
  const key = releaseKey('diff', positionals, values.namespace);
  const ref = values.ref === undefined ? undefined : parseRefFlag(values.ref);
  const cluster = await s.cluster(values);
  const release = await readRelease(cluster, key);
  const render = await renderLocally(cluster, release, ref);
  const target = await targetConfig(cluster, release);
  const compared = await compareWithLive(target, render.objects);
  let changed = 0;
  for (const c of compared) {
    const name = objectName(c.object);
    if (c.desired === undefined) {
      s.io.out(`? ${name}: ${c.note ?? 'not checked'}`);
      changed++;
      continue;
    }
    const lines = unifiedDiff(canonicalYaml(comparable(c.live)), canonicalYaml(comparable(c.desired)));
    if (lines.length === 0) continue;
    changed++;
    s.io.out(c.live === undefined ? `+ ${name} (created)` : `~ ${name}`);
    for (const line of lines) s.io.out(`    ${line}`);
  }
  const at = `render ${render.renderRef}${render.revision ? ` at revision ${render.revision}` : ''}`;
  if (changed === 0) {
    s.io.err(`no difference: ${compared.length} objects of ${at} match the live objects`);
    return ExitCode.ok;
  }
  s.io.err(`${changed} of ${compared.length} objects of ${at} differ from the live objects`);
  return ExitCode.failure;
}
