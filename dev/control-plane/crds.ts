// Installs the CRDs (and any other manifests) from a folder into a running apiserver.
import { readdir, readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  ApiextensionsV1Api,
  CustomObjectsApi,
  KubeConfig,
  KubernetesObjectApi,
  loadYaml,
  PatchStrategy,
  type KubernetesObject,
} from '@kubernetes/client-node';
import { parseAllDocuments } from 'yaml';
import { CrdInstallError, errorText, isErrnoException } from './errors.ts';
import { withSharedConnections } from '../kube-connections.ts';

/**
 * Server-side applies (field manager `convoy-installer`, force) every *.yaml in `dir`, CRDs first,
 * and waits until each CRD reports Established=True. A missing or empty dir is not an error.
 */
export async function installCrds(
  kubeconfigPath: string,
  dir = 'config/crds',
  opts: { readonly timeoutMs?: number } = {},
): Promise<void> {
  let files: string[];
  try {
    files = (await readdir(dir)).filter((f) => f.endsWith('.yaml') || f.endsWith('.yml')).sort();
  } catch (err) {
    if (isErrnoException(err) && err.code === 'ENOENT') return;
    throw err;
  }
  if (files.length === 0) return;

  // Each document keeps its YAML text: loadYaml turns it into client-node's model shape
  // (`enum` -> `_enum`, `x-kubernetes-*` -> camelCase, ...), which patch() serializes back.
  // Passing raw YAML objects straight to patch() silently drops those schema fields.
  const docs: { file: string; text: string; kind: string; apiVersion: string; name: string }[] = [];
  for (const file of files) {
    const full = resolve(dir, file);
    const parsed = parseAllDocuments(await readFile(full, 'utf8'));
    for (const doc of parsed) {
      if (doc.errors.length > 0) {
        throw new CrdInstallError(`${full}: invalid YAML: ${doc.errors[0]?.message ?? 'unknown error'}`);
      }
      const obj = doc.toJS() as Partial<KubernetesObject> | null;
      if (obj === null || obj === undefined) continue;
      if (!obj.apiVersion || !obj.kind || !obj.metadata?.name) {
        throw new CrdInstallError(`${full}: every document needs apiVersion, kind and metadata.name`);
      }
      docs.push({
        file: full,
        text: doc.toString(),
        kind: obj.kind,
        apiVersion: obj.apiVersion,
        name: obj.metadata.name,
      });
    }
  }

  const kc = withSharedConnections(new KubeConfig());
  kc.loadFromFile(kubeconfigPath);
  const objects = KubernetesObjectApi.makeApiClient(kc);
  const isCrd = (d: (typeof docs)[number]): boolean =>
    d.kind === 'CustomResourceDefinition' && d.apiVersion.startsWith('apiextensions.k8s.io/');
  const apply = async (d: (typeof docs)[number]): Promise<void> => {
    try {
      await objects.patch(
        loadYaml<KubernetesObject>(d.text),
        undefined,
        undefined,
        'convoy-installer',
        true,
        PatchStrategy.ServerSideApply,
      );
    } catch (err) {
      throw new CrdInstallError(
        `${d.file}: server-side apply of ${d.kind} ${d.name} failed: ${errorText(err)}`,
        {
          cause: err,
        },
      );
    }
  };

  const crds = docs.filter(isCrd);
  for (const d of crds) await apply(d);

  const ext = kc.makeApiClient(ApiextensionsV1Api);
  const deadline = Date.now() + (opts.timeoutMs ?? 120_000);
  for (const d of crds) {
    for (;;) {
      const crd = await ext.readCustomResourceDefinition({ name: d.name });
      if (crd.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True')) break;
      if (Date.now() > deadline) {
        const conds = JSON.stringify(crd.status?.conditions ?? []);
        throw new CrdInstallError(
          `${d.file}: CRD ${d.name} not Established after ${opts.timeoutMs ?? 120_000} ms; conditions: ${conds}`,
        );
      }
      await sleep(100);
    }
  }
  // Established is not the end: the apiserver (re)builds the watch cache of a new
  // resource and answers 429 "storage is (re)initializing" until it is ready.
  const custom = kc.makeApiClient(CustomObjectsApi);
  for (const d of crds) {
    const spec = loadYaml<
      KubernetesObject & { spec: { group: string; names: { plural: string }; versions: { name: string }[] } }
    >(d.text).spec;
    for (;;) {
      try {
        await custom.listClusterCustomObject({
          group: spec.group,
          version: spec.versions[0].name,
          plural: spec.names.plural,
          limit: 1,
        });
        break;
      } catch (err) {
        if (Date.now() > deadline)
          throw new CrdInstallError(`${d.file}: ${d.name} is not served: ${errorText(err)}`, { cause: err });
        await sleep(100);
      }
    }
  }

  for (const d of docs.filter((x) => !isCrd(x))) await apply(d);
}
