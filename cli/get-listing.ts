/**
 * What `convoy get` does alike for every kind it lists (Releases, ReleaseSets), as `kubectl get`
 * does: one named object, or the objects of a namespace (-n), of every namespace (-A) or with
 * labels (-l); -o json|yaml prints them as the API server returns them (the named object, else a
 * `List`) without metadata.managedFields unless --show-managed-fields; -o name prints
 * `<resource>/<name>`; an empty answer is one line on stderr. The table rows are each kind's own.
 */
import { GROUP_VERSION } from '../domain/api/group-version.ts';
import type { Cluster, ReleaseKey } from '../views/cluster.ts';
import { namespaceOf, type GlobalFlags } from './args.ts';
import { UsageError } from './output.ts';
import type { Session } from './session.ts';

export interface GetFlags {
  'all-namespaces': boolean;
  selector: string;
  output: 'json' | 'yaml' | 'wide' | 'name';
  watch: boolean;
  'show-managed-fields': boolean;
}

export type RawObject = Record<string, unknown> & {
  metadata?: { namespace?: string; name?: string; resourceVersion?: string; managedFields?: unknown };
};

/** A kind `get` lists. */
export interface ListedKind {
  readonly kind: 'Release' | 'ReleaseSet';
  /** What -o name prints before the name, e.g. `release.convoy.dev`. */
  readonly resource: string;
  /** The collection path in `namespace`; every namespace when undefined. */
  collection(namespace: string | undefined): string;
  /** The named object; a missing one is a CliFailure naming it. */
  readOne(cluster: Cluster, key: ReleaseKey): Promise<RawObject>;
}

/** What a `get` lists: the named object, or a namespace, or every namespace (`all`). */
export interface GetScope {
  readonly named: ReleaseKey | undefined;
  readonly namespace: string | undefined;
  readonly all: boolean;
}

/** The scope from the flags; `key` parses the named object, when the operands name one. */
export function getScope(
  kind: ListedKind,
  values: Partial<GetFlags> & Pick<GlobalFlags, 'namespace' | 'defaultNamespace'>,
  key: (() => ReleaseKey) | undefined,
): GetScope {
  const all = values['all-namespaces'] === true;
  if (key !== undefined && all) throw new UsageError(`get: -A lists every ${kind.kind}; do not name one`);
  if (key !== undefined && values.selector !== undefined)
    throw new UsageError(`get: -l selects ${kind.kind}s by label; do not name one`);
  const named = key?.();
  return { named, all, namespace: named?.namespace ?? (all ? undefined : namespaceOf(values).effective) };
}

/** The objects in scope, and the list's resourceVersion (the named object's for one) to watch from. */
export async function readScope(
  kind: ListedKind,
  cluster: Cluster,
  scope: GetScope,
  selector: string | undefined,
): Promise<{ raws: RawObject[]; resourceVersion: string | undefined }> {
  if (scope.named !== undefined) {
    const raw = await kind.readOne(cluster, scope.named);
    return { raws: [raw], resourceVersion: raw.metadata?.resourceVersion };
  }
  const list = await cluster.client.list<RawObject>(kind.collection(scope.namespace), {
    labelSelector: selector,
  });
  const rv = list.metadata?.resourceVersion;
  return { raws: list.items, resourceVersion: typeof rv === 'string' ? rv : undefined };
}

/**
 * Every object's keys in sorted order, as kubectl prints -o json|yaml (Go's encoding/json sorts a
 * map's keys): apiVersion, kind, metadata, spec, status at the top, and the same rule inside them.
 */
export function kubectlOrder(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(kubectlOrder);
  if (typeof value !== 'object' || value === null) return value;
  const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) =>
    a < b ? -1 : a > b ? 1 : 0,
  );
  return Object.fromEntries(entries.map(([k, v]) => [k, kubectlOrder(v)]));
}

/** The object as kubectl prints it: apiVersion/kind set (list items lack them), managedFields dropped unless asked, keys in kubectl's order. */
export function printable(kind: ListedKind, raw: RawObject, managedFields: boolean): RawObject {
  const { metadata, ...rest } = raw;
  const meta = { ...metadata };
  if (!managedFields) delete meta.managedFields;
  return kubectlOrder({ ...rest, apiVersion: GROUP_VERSION, kind: kind.kind, metadata: meta }) as RawObject;
}

/** -o json|yaml's document: the one object, or a `List` of them. */
export function document(
  kind: ListedKind,
  raws: readonly RawObject[],
  one: boolean,
  managedFields: boolean,
): unknown {
  if (one) return printable(kind, raws[0] ?? {}, managedFields);
  return {
    apiVersion: 'v1',
    kind: 'List',
    metadata: { resourceVersion: '' },
    items: raws.map((r) => printable(kind, r, managedFields)),
  };
}

export async function serialize(value: unknown, format: 'json' | 'yaml'): Promise<string> {
  if (format === 'json') return JSON.stringify(value, null, 2);
  const { stringify } = await import('yaml');
  return stringify(value, { lineWidth: 0, aliasDuplicateObjects: false }).replace(/\n$/, '');
}

export const nameLine = (kind: ListedKind, raw: RawObject): string =>
  `${kind.resource}/${raw.metadata?.name ?? ''}`;

/**
 * Prints the answer of a `get` without -w when it is not a table (-o json|yaml|name, or nothing
 * found): true when printed, false when the kind's table is to be printed.
 */
export async function printListed(
  s: Session,
  kind: ListedKind,
  raws: readonly RawObject[],
  scope: GetScope,
  values: Partial<GetFlags>,
): Promise<boolean> {
  const output = values.output;
  if (output === 'json' || output === 'yaml') {
    s.io.out(
      await serialize(
        document(kind, raws, scope.named !== undefined, values['show-managed-fields'] === true),
        output,
      ),
    );
    return true;
  }
  if (output === 'name') {
    for (const r of raws) s.io.out(nameLine(kind, r));
    return true;
  }
  if (raws.length > 0) return false;
  s.io.err(
    scope.all
      ? `No ${kind.kind}s found.`
      : `No ${kind.kind}s found in namespace ${scope.namespace ?? 'default'}.`,
  );
  return true;
}
