/**
 * `convoy get [<release>] [-A] [-l selector] [-o json|yaml|wide|name] [-w]`: Releases with their
 * verdict, like `kubectl get` / `flux get` / `argocd app list`.
 *
 * -o json|yaml prints the objects as the API server returns them (a named Release: the object;
 * otherwise a `List`, as kubectl does), without metadata.managedFields unless
 * --show-managed-fields. -w prints the list, then one row (or object) per change until stopped.
 */
import type { Release } from '../domain/api/objects.ts';
import { combinedVerdict } from '../domain/status/verdict.ts';
import { releaseKey, verbArgs, type VerbInput } from './args.ts';
import type { Cluster } from '../views/cluster.ts';
import { age, CliFailure, ExitCode, shortRef, table, UsageError } from './output.ts';
import { printableRelease } from './release-shape.ts';
import type { Session } from './session.ts';
import { verdictWord } from './verdict-line.ts';
import { revisionOf } from './revision.ts';

type Raw = Record<string, unknown> & { metadata?: { namespace?: string; name?: string; resourceVersion?: string; managedFields?: unknown } };

interface GetFlags {
  'all-namespaces': boolean;
  selector: string;
  output: 'json' | 'yaml' | 'wide' | 'name';
  watch: boolean;
  'show-managed-fields': boolean;
}

const KIND = { apiVersion: 'convoy.dev/v1alpha1', kind: 'Release' } as const;

/** The object as kubectl prints it: apiVersion/kind set (list items lack them), managedFields dropped unless asked. */
function printable(raw: Raw, managedFields: boolean): Raw {
  const { metadata, ...rest } = raw;
  const meta = { ...metadata };
  if (!managedFields) delete meta.managedFields;
  return { ...KIND, ...rest, metadata: meta };
}

export async function serialize(value: unknown, format: 'json' | 'yaml'): Promise<string> {
  if (format === 'json') return JSON.stringify(value, null, 2);
  const { stringify } = await import('yaml');
  return stringify(value, { lineWidth: 0, aliasDuplicateObjects: false }).replace(/\n$/, '');
}

function parsed(raw: Raw, parse: (raw: unknown, key: { namespace: string; name: string }) => Release): Release {
  return parse(raw, { namespace: raw.metadata?.namespace ?? '?', name: raw.metadata?.name ?? '?' });
}

export async function getVerb(input: VerbInput, s: Session): Promise<ExitCode> {
  const { values, positionals } = verbArgs<GetFlags>(input);
  const all = values['all-namespaces'] === true;
  const output = values.output;
  const selector = values.selector;
  const { readRaw, releasesPath } = await import('./kube.ts');
  let named: ReturnType<typeof releaseKey> | undefined;
  if (positionals.length > 0) {
    if (all) throw new UsageError('get: -A lists every Release; do not name one');
    if (selector !== undefined) throw new UsageError('get: -l selects Releases by label; do not name one');
    named = releaseKey('get', positionals, values.namespace);
  }
  const namespace = named?.namespace ?? (all ? undefined : (values.namespace ?? 'default'));
  const cluster = await s.cluster(values);
  let raws: Raw[];
  let resourceVersion: string | undefined;
  if (named !== undefined) {
    const raw = (await readRaw(cluster, named)) as Raw;
    raws = [raw];
    resourceVersion = raw.metadata?.resourceVersion;
  } else {
    const list = await cluster.client.list<Raw>(releasesPath(namespace), { labelSelector: selector });
    raws = list.items;
    const rv = list.metadata?.resourceVersion;
    resourceVersion = typeof rv === 'string' ? rv : undefined;
  }

  const managed = values['show-managed-fields'] === true;
  const row = (r: Release) => rowOf(r, all, output === 'wide');
  const header = [...(all ? ['NAMESPACE'] : []), 'NAME', 'VERDICT', 'APPLIED', 'ROLLOUT', 'RENDER', 'SUSPENDED', 'AGE', ...(output === 'wide' ? ['REVISION', 'SOURCE', 'MESSAGE'] : [])];
  if (output === 'json' || output === 'yaml') {
    const value = named !== undefined && !values.watch ? printable(raws[0] ?? {}, managed) : { apiVersion: 'v1', kind: 'List', metadata: { resourceVersion: '' }, items: raws.map((r) => printable(r, managed)) };
    if (named !== undefined || !values.watch) s.io.out(await serialize(value, output));
    else for (const r of raws) s.io.out(`${output === 'yaml' ? '---\n' : ''}${await serialize(printable(r, managed), output)}`);
  } else if (output === 'name') {
    for (const r of raws) s.io.out(`release.convoy.dev/${r.metadata?.name ?? ''}`);
  } else if (raws.length === 0) {
    if (!values.watch) s.io.err(all ? 'No Releases found.' : `No Releases found in namespace ${namespace ?? 'default'}.`);
  } else {
    for (const line of table(header, raws.map((raw) => row(parsed(raw, printableRelease))))) s.io.out(line);
  }
  if (values.watch !== true) return ExitCode.ok;

  // -w: one row (or object) per change, as kubectl get -w prints them; columns are sized per row.
  let headerPrinted = raws.length > 0 || (output !== undefined && output !== 'wide');
  const print = async (raw: Raw): Promise<void> => {
    if (output === 'json' || output === 'yaml') s.io.out(`${output === 'yaml' ? '---\n' : ''}${await serialize(printable(raw, managed), output)}`);
    else if (output === 'name') s.io.out(`release.convoy.dev/${raw.metadata?.name ?? ''}`);
    else {
      const lines = table(header, [row(parsed(raw, printableRelease))]);
      if (!headerPrinted) s.io.out(lines[0] ?? '');
      headerPrinted = true;
      s.io.out(lines[1] ?? '');
    }
  };
  await watchReleases(cluster, s, {
    path: releasesPath(namespace),
    resourceVersion,
    labelSelector: selector,
    fieldSelector: named === undefined ? undefined : `metadata.name=${named.name}`,
    print,
    relist: async () => {
      const list = named !== undefined
        ? { items: [(await readRaw(cluster, named)) as Raw], metadata: undefined }
        : await cluster.client.list<Raw>(releasesPath(namespace), { labelSelector: selector });
      for (const r of list.items) await print(r);
      const rv = named !== undefined ? list.items[0]?.metadata?.resourceVersion : list.metadata?.resourceVersion;
      return typeof rv === 'string' ? rv : undefined;
    },
  });
  return ExitCode.ok;
}

function rowOf(r: Release, all: boolean, wide: boolean): string[] {
  const applied = r.status?.conditions?.find((c) => c.type === 'Applied');
  const verdict = combinedVerdict(r);
  const source = r.spec.source as { git?: { url?: string }; helm?: { chart?: string; repository?: string }; oci?: { url?: string } };
  const revision = revisionOf(r.status?.lastSuccessful?.resolvedSource);
  return [
    ...(all ? [r.metadata.namespace ?? ''] : []),
    r.metadata.name ?? '',
    verdictWord(verdict),
    applied?.reason ?? '-',
    r.status?.rollout?.state ?? '-',
    shortRef(r.status?.lastSuccessful?.renderRef),
    r.spec.suspend ? 'true' : 'false',
    age(r.metadata.creationTimestamp),
    ...(wide ? [revision ?? '-', source.git?.url ?? source.helm?.chart ?? source.oci?.url ?? '-', verdict.message.replace(/\s+/g, ' ')] : []),
  ];
}

/**
 * Watches from `resourceVersion` until the session is stopped: a watch the server ends (its
 * timeout) resumes from the last version seen; an expired version (410 Gone) lists again.
 */
async function watchReleases(
  cluster: Cluster,
  s: Session,
  w: {
    path: string;
    resourceVersion: string | undefined;
    labelSelector: string | undefined;
    fieldSelector: string | undefined;
    print(raw: Raw): Promise<void>;
    relist(): Promise<string | undefined>;
  },
): Promise<void> {
  const { watchStream } = await import('../adapters/kube/watch-stream.ts');
  const { isKubeApiError } = await import('../adapters/kube/http.ts');
  let version = w.resourceVersion;
  let printing = Promise.resolve();
  while (!s.signal.aborted) {
    let gone = false;
    try {
      await watchStream(
        cluster.config,
        { path: w.path, resourceVersion: version, labelSelector: w.labelSelector, fieldSelector: w.fieldSelector, timeoutSeconds: 300, signal: s.signal },
        (event) => {
          const raw = event.object as Raw;
          if (event.type === 'ERROR') {
            const status = event.object as { code?: number; message?: string };
            if (status.code === 410) gone = true;
            else throw new CliFailure(`the watch of Releases failed: ${status.message ?? JSON.stringify(status)}`);
            return;
          }
          version = raw.metadata?.resourceVersion ?? version;
          if (event.type === 'BOOKMARK') return;
          printing = printing.then(() => w.print(raw));
        },
      );
    } catch (error) {
      if (!isKubeApiError(error, 410)) throw error;
      gone = true;
    }
    await printing;
    if (gone) version = await w.relist();
  }
}
