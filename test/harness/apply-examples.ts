// Applies every *.yaml of an examples folder (sorted, every document) with server-side apply as
// `kubectl apply --server-side` would, and returns the names of the Releases among them.
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import {
  KubernetesObjectApi,
  PatchStrategy,
  loadAllYaml,
  type KubeConfig,
  type KubernetesObject,
} from '@kubernetes/client-node';

export async function applyExamples(kc: KubeConfig, examples: string): Promise<string[]> {
  const objects = KubernetesObjectApi.makeApiClient(kc);
  const names: string[] = [];
  for (const file of (await readdir(examples)).filter((f) => f.endsWith('.yaml')).sort()) {
    for (const doc of loadAllYaml(await readFile(join(examples, file), 'utf8')) as KubernetesObject[]) {
      await objects.patch(doc, undefined, undefined, 'kubectl', true, PatchStrategy.ServerSideApply);
      if (doc.kind === 'Release' && doc.metadata?.name) names.push(doc.metadata.name);
    }
  }
  return names;
}
