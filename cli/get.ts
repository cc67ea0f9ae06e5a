/**
 * `convoy get [<release>] [-A] [-l selector] [-o json|yaml|wide|name] [-w]`: Releases with their
 * verdict, like `kubectl get` / `flux get` / `argocd app list`.
 *
 * -o json|yaml prints the objects as the API server returns them (a named Release: the object;
 * otherwise a `List`, as kubectl does), without metadata.managedFields unless
 * --show-managed-fields. -w prints the list, then one row (or object) per change until stopped.
 * What every kind's `get` does alike is cli/get-listing.ts (shared with `get rset`).
 */
import type { Release } from '../domain/api/objects.ts';
import { combinedVerdict } from '../domain/status/verdict.ts';
import type { Cluster } from '../views/cluster.ts';
import { releaseKey, verbArgs, type VerbInput } from './args.ts';
import {
  document,
  getScope,
  nameLine,
  printable,
  printListed,
  readScope,
  serialize,
  type GetFlags,
  type ListedKind,
  type RawObject,
} from './get-listing.ts';
import { age, CliFailure, ExitCode, shortRef, table } from './output.ts';
import { printableRelease } from './release-shape.ts';
import type { Session } from './session.ts';
import { verdictWord } from './verdict-line.ts';
import { revisionOf } from './revision.ts';

function parsed(
  raw: RawObject,
  parse: (raw: unknown, key: { namespace: string; name: string }) => Release,
): Release {
  return parse(raw, { namespace: raw.metadata?.namespace ?? '?', name: raw.metadata?.name ?? '?' });
}

/** The kind as kubectl spells it: `get releases`, `get release <name>`, `get rel`, `get releases.convoy.dev/<name>`. */
const RELEASE_KIND_NAMES = [
  'release',
  'releases',
  'rel',
  'rels',
  'release.convoy.dev',
  'releases.convoy.dev',
];
const QUALIFIED_KIND = /^releases?\.convoy\.dev\/(.*)$/;

/** The operands without the kind word, when the first names it. */
export function releaseOperands(positionals: readonly string[]): readonly string[] {
  const [first, ...rest] = positionals;
  if (first === undefined) return positionals;
  if (RELEASE_KIND_NAMES.includes(first)) return rest;
  const qualified = QUALIFIED_KIND.exec(first);
  return qualified === null ? positionals : [qualified[1] ?? '', ...rest];
}

export async function getVerb(input: VerbInput, s: Session): Promise<ExitCode> {
  const { values, positionals: operands } = verbArgs<GetFlags>(input);
  const positionals = releaseOperands(operands);
  const output = values.output;
  const selector = values.selector;
  const { readRaw } = await import('./kube.ts');
  const { releasePath } = await import('../adapters/kube/convoy-paths.ts');
  const releases: ListedKind = {
    kind: 'Release',
    resource: 'release.convoy.dev',
    collection: (ns) => releasePath(ns),
    readOne: readRaw,
  };
  const scope = getScope(
    releases,
    values,
    positionals.length > 0 ? () => releaseKey('get', positionals, values) : undefined,
  );
  const { named, namespace, all } = scope;
  const cluster = await s.cluster(values);
  const { raws, resourceVersion } = await readScope(releases, cluster, scope, selector);

  const managed = values['show-managed-fields'] === true;
  const row = (r: Release) => rowOf(r, all, output === 'wide');
  const header = [
    ...(all ? ['NAMESPACE'] : []),
    'NAME',
    'VERDICT',
    'APPLIED',
    'ROLLOUT',
    'RENDER',
    'SUSPENDED',
    'AGE',
    ...(output === 'wide' ? ['REVISION', 'SOURCE', 'MESSAGE'] : []),
  ];
  const rows = () =>
    table(
      header,
      raws.map((raw) => row(parsed(raw, printableRelease))),
    );
  if (values.watch !== true) {
    if (!(await printListed(s, releases, raws, scope, values))) for (const line of rows()) s.io.out(line);
    return ExitCode.ok;
  }

  // -w: the list, then one row (or object) per change, as kubectl get -w prints them; columns are sized per row.
  let headerPrinted = raws.length > 0 || (output !== undefined && output !== 'wide');
  const print = async (raw: RawObject): Promise<void> => {
    if (output === 'json' || output === 'yaml')
      s.io.out(
        `${output === 'yaml' ? '---\n' : ''}${await serialize(printable(releases, raw, managed), output)}`,
      );
    else if (output === 'name') s.io.out(nameLine(releases, raw));
    else {
      const lines = table(header, [row(parsed(raw, printableRelease))]);
      if (!headerPrinted) s.io.out(lines[0] ?? '');
      headerPrinted = true;
      s.io.out(lines[1] ?? '');
    }
  };
  if ((output === 'json' || output === 'yaml') && named !== undefined)
    s.io.out(await serialize(document(releases, raws, false, managed), output));
  else if (output === 'json' || output === 'yaml' || output === 'name') for (const r of raws) await print(r);
  else if (raws.length > 0) for (const line of rows()) s.io.out(line);
  await watchReleases(cluster, s, {
    path: releasePath(namespace),
    resourceVersion,
    labelSelector: selector,
    fieldSelector: named === undefined ? undefined : `metadata.name=${named.name}`,
    print,
    relist: async () => {
      const again = await readScope(releases, cluster, scope, selector);
      for (const r of again.raws) await print(r);
      return again.resourceVersion;
    },
  });
  return ExitCode.ok;
}

function rowOf(r: Release, all: boolean, wide: boolean): string[] {
  const applied = r.status?.conditions?.find((c) => c.type === 'Applied');
  const verdict = combinedVerdict(r);
  const source = r.spec.source as {
    git?: { url?: string };
    helm?: { chart?: string; repository?: string };
    oci?: { url?: string };
  };
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
    ...(wide
      ? [
          revision ?? '-',
          source.git?.url ?? source.helm?.chart ?? source.oci?.url ?? '-',
          verdict.message.replace(/\s+/g, ' '),
        ]
      : []),
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
    print(raw: RawObject): Promise<void>;
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
        {
          path: w.path,
          resourceVersion: version,
          labelSelector: w.labelSelector,
          fieldSelector: w.fieldSelector,
          timeoutSeconds: 300,
          signal: s.signal,
        },
        (event) => {
          const raw = event.object as RawObject;
          if (event.type === 'ERROR') {
            const status = event.object as { code?: number; message?: string };
            if (status.code === 410) gone = true;
            else
              throw new CliFailure(
                `the watch of Releases failed: ${status.message ?? JSON.stringify(status)}`,
              );
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
