import { parse } from 'yaml';
import type { Release } from '../../domain/api/index.ts';
import { gitRepositorySchema } from '../../domain/api/objects.ts';
import type { ReconcilePorts } from '../../domain/reconcile/ports.ts';
import type { ManagementReader } from '../kube/management-reader.ts';
import type { DataReader, DataReaderFor } from '../kube/identity-reads.ts';
import { readCheckoutFile } from '../render/content-check.ts';
import { fetchGitSource } from '../source/git.ts';
import type { GitCache } from '../source/git-cache.ts';
import { credentialsFrom } from './credentials.ts';
import { STRICT_EGRESS } from '../../domain/egress/policy.ts';
import { createEgress, type Egress } from '../egress/client.ts';
import { inClusterIdentity } from '../../domain/tenancy/identity.ts';
import { PolicyRefusedError, referencedNamespace } from '../../domain/tenancy/policy.ts';
import { ReadRefusedError } from '../../domain/tenancy/read-refusal.ts';
import { DEFAULT_TENANCY, type TenancySettings } from '../../domain/tenancy/settings.ts';

/** A values layer that could not be read; the Applied reason is ValuesNotReady. */
export class ValuesNotReadyError extends Error {
  override name = 'ValuesNotReadyError';
}

const DEFAULT_KEY = 'values.yaml';

interface ValuesPortDeps {
  /** convoy's own objects (a GitRepository layer), read with the functions' identity. */
  reader: ManagementReader;
  /** ConfigMap and Secret layers and a GitRepository's credentials, read as the Release's identity. */
  readsAs: DataReaderFor;
  gitCache: GitCache;
  /** Whether a layer may name another namespace (default no), and who a Release reads as. */
  tenancy?: Pick<TenancySettings, 'crossNamespaceRefs' | 'defaultServiceAccount' | 'egress'> | undefined;
  /** The egress client of a GitRepository layer's fetch; default one with `tenancy.egress` (else the strict policy). */
  egress?: Egress | undefined;
}

/**
 * Reads spec.content.helm.valuesFrom in order, as the Release's identity: a layer its
 * ServiceAccount may not read is ValuesNotReady naming the layer and the identity. A missing
 * optional layer is skipped. Secret-backed layers never appear in messages beyond their name and key.
 */
export function createValuesPort(deps: ValuesPortDeps): ReconcilePorts['values'] {
  const egress = deps.egress ?? createEgress(deps.tenancy?.egress ?? STRICT_EGRESS);
  return {
    async read(release: Release) {
      const releaseNs = release.metadata.namespace ?? 'default';
      const data = deps.readsAs(inClusterIdentity(release, deps.tenancy ?? DEFAULT_TENANCY));
      const layers = release.spec.content.helm?.valuesFrom ?? [];
      const out: Record<string, unknown>[] = [];
      for (const [index, layer] of layers.entries()) {
        const field = `spec.content.helm.valuesFrom[${index}]`;
        let ns: string;
        try {
          ns = referencedNamespace(
            {
              field,
              fromNamespace: releaseNs,
              kind: layer.kind,
              name: layer.name,
              namespace: layer.namespace,
            },
            deps.tenancy ?? DEFAULT_TENANCY,
          );
        } catch (error) {
          // ValuesNotReady, naming the policy; nothing of the other namespace is read.
          if (error instanceof PolicyRefusedError) throw new ValuesNotReadyError(error.message);
          throw error;
        }
        const where = `${field} (${layer.kind} ${ns}/${layer.name}${layer.kind === 'GitRepository' ? `:${layer.path ?? ''}` : ` key ${layer.key ?? DEFAULT_KEY}`})`;
        const text = await readLayer({ ...deps, egress }, data, ns, layer, { field, where });
        if (text === undefined) {
          if (layer.optional) continue;
          throw new ValuesNotReadyError(`${where} does not exist; create it or mark the layer optional`);
        }
        out.push(parseLayer(text, where, layer.kind === 'Secret'));
      }
      return out;
    },
  };
}

type Layer = NonNullable<NonNullable<Release['spec']['content']['helm']>['valuesFrom']>[number];

async function readLayer(
  deps: Pick<ValuesPortDeps, 'reader' | 'gitCache'> & { egress: Egress },
  data: DataReader,
  ns: string,
  layer: Layer,
  { field, where }: { field: string; where: string },
): Promise<string | undefined> {
  try {
    if (layer.kind === 'ConfigMap')
      return (await data.configMapData(ns, layer.name))?.[layer.key ?? DEFAULT_KEY];
    if (layer.kind === 'Secret') return (await data.secretData(ns, layer.name))?.[layer.key ?? DEFAULT_KEY];
    const raw = await deps.reader.getObject('gitrepositories', ns, layer.name);
    if (raw === undefined) return undefined;
    const repo = gitRepositorySchema.parse(raw).spec;
    const auth = await credentialsFrom(
      data,
      ns,
      repo.secretRef?.name,
      `GitRepository ${ns}/${layer.name} secretRef`,
    );
    const tree = await fetchGitSource(
      { url: repo.url, ref: repo.ref, path: '.', ...(auth ? { auth } : {}) },
      deps.gitCache,
      { egress: deps.egress },
    );
    // The render sandbox's rule: no link out of the checkout, no hard link (adapters/render/content-check.ts).
    return await readCheckoutFile(tree.root, layer.path ?? DEFAULT_KEY);
  } catch (error) {
    if (error instanceof ValuesNotReadyError) throw error;
    // The layer (or the credentials of its GitRepository) and the identity, never the data.
    if (error instanceof ReadRefusedError) {
      throw new ValuesNotReadyError(`${layer.kind === 'GitRepository' ? where : field}: ${error.message}`, {
        cause: error,
      });
    }
    throw new ValuesNotReadyError(
      `${where} could not be read: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
}

function parseLayer(text: string, where: string, secret: boolean): Record<string, unknown> {
  let value: unknown;
  try {
    value = parse(text, { maxAliasCount: 50 });
  } catch (error) {
    // yaml's messages quote the offending source; for a Secret that would leak its data.
    const line = (error as { linePos?: { line: number }[] }).linePos?.[0]?.line;
    const detail = secret
      ? `line ${line ?? '?'}`
      : error instanceof Error
        ? error.message.split('\n')[0]
        : String(error);
    throw new ValuesNotReadyError(`${where} is not valid YAML: ${detail}`);
  }
  if (value === null || value === undefined) return {};
  if (typeof value !== 'object' || Array.isArray(value)) {
    throw new ValuesNotReadyError(
      `${where} must be a YAML mapping of values, not ${Array.isArray(value) ? 'a list' : typeof value}`,
    );
  }
  return value as Record<string, unknown>;
}
