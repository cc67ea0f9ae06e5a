// `convoy get [<release>] [-A] [-o json]`: Releases with their verdict, like `kubectl get` / `argocd app list`.
import { combinedVerdict } from '../domain/status/verdict.ts';
import { parseVerbArgs, releaseKey } from './args.ts';
import { parseOrFail, readRaw, releasesPath } from './kube.ts';
import { age, ExitCode, shortRef, table, UsageError } from './output.ts';
import type { Session } from './session.ts';
import { verdictWord } from './verdict-line.ts';
import type { Release } from '../domain/api/objects.ts';

export async function getVerb(argv: readonly string[], s: Session): Promise<ExitCode> {
  const { values, positionals } = parseVerbArgs('get', argv, {
    'all-namespaces': { type: 'boolean', short: 'A', default: false },
    output: { type: 'string', short: 'o' },
  });
  if (values.output !== undefined && values.output !== 'json' && values.output !== 'wide')
    throw new UsageError(`get: --output must be json or wide, got "${values.output}"`);
  const cluster = await s.cluster(values);
  let raws: Record<string, unknown>[];
  if (positionals.length > 0) {
    if (values['all-namespaces']) throw new UsageError('get: -A lists every Release; do not name one');
    raws = [await readRaw(cluster, releaseKey('get', positionals, values.namespace))];
  } else {
    const namespace = values['all-namespaces'] ? undefined : (values.namespace ?? 'default');
    raws = (await cluster.client.list<Record<string, unknown>>(releasesPath(namespace))).items;
  }
  const releases: Release[] = raws.map((raw) => {
    const meta = (raw as { metadata?: { namespace?: string; name?: string } }).metadata;
    return parseOrFail(raw, { namespace: meta?.namespace ?? '?', name: meta?.name ?? '?' });
  });
  if (values.output === 'json') {
    s.io.out(
      JSON.stringify(
        releases.map((r) => ({
          namespace: r.metadata.namespace,
          name: r.metadata.name,
          verdict: combinedVerdict(r),
        })),
        null,
        2,
      ),
    );
    return ExitCode.ok;
  }
  if (releases.length === 0) {
    s.io.err(
      values['all-namespaces']
        ? 'No Releases found.'
        : `No Releases found in namespace ${values.namespace ?? 'default'}.`,
    );
    return ExitCode.ok;
  }
  const all = values['all-namespaces'];
  const rows = releases.map((r) => {
    const applied = r.status?.conditions?.find((c) => c.type === 'Applied');
    return [
      ...(all ? [r.metadata.namespace ?? ''] : []),
      r.metadata.name ?? '',
      verdictWord(combinedVerdict(r)),
      applied?.reason ?? '-',
      r.status?.rollout?.state ?? '-',
      shortRef(r.status?.lastSuccessful?.renderRef),
      r.spec.suspend ? 'true' : 'false',
      age(r.metadata.creationTimestamp),
    ];
  });
  for (const line of table(
    [...(all ? ['NAMESPACE'] : []), 'NAME', 'VERDICT', 'APPLIED', 'ROLLOUT', 'RENDER', 'SUSPENDED', 'AGE'],
    rows,
  ))
    s.io.out(line);
  return ExitCode.ok;
}
