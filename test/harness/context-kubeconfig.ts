// A kubeconfig whose context names a namespace, as `kubectl config set-context --current --namespace <ns>`
// leaves a user's: the CLI tests run convoy with it to show the context's namespace is the default.
import { readFile, writeFile } from 'node:fs/promises';
import { parse as parseYaml, stringify } from 'yaml';

type Kubeconfig = {
  'current-context': string;
  contexts: { name: string; context: Record<string, unknown> }[];
};

/** Writes to `file` a copy of `source` whose current context names `namespace`; returns `file`. */
export async function withContextNamespace(source: string, namespace: string, file: string): Promise<string> {
  const config = parseYaml(await readFile(source, 'utf8')) as Kubeconfig;
  const current = config.contexts.find((c) => c.name === config['current-context']);
  if (current === undefined) throw new Error(`${source}: no current context`);
  current.context.namespace = namespace;
  await writeFile(file, stringify(config));
  return file;
}
