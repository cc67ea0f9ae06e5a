// What `convoy dev` does with examples/: checks every YAML file (an invalid one is named, and
// convoy dev starts anyway), and gives the example Releases their source: one GitRepository per
// examples/repos/<name> in the examples namespace, pointing at the Git server on --git-port, so
// `kubectl apply -f examples/` works whatever port that server has.
import { readdir, readFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import {
  CoreV1Api,
  CustomObjectsApi,
  PatchStrategy,
  RbacAuthorizationV1Api,
  setHeaderOptions,
  type KubeConfig,
} from '@kubernetes/client-node';
import { parseAllDocuments } from 'yaml';
import { API_GROUP, API_VERSION } from '../domain/api/common.ts';

/** The namespace examples/ deploys to. */
export const EXAMPLES_NAMESPACE = 'convoy-examples';
const FIELD_MANAGER = 'convoy-dev';

export interface ExampleProblem {
  /** Relative to the folder that was checked. */
  readonly file: string;
  readonly message: string;
}

/** Every *.yaml / *.yml under `dir` that does not parse, with the first error of each. */
export async function invalidExampleFiles(dir: string): Promise<ExampleProblem[]> {
  const problems: ExampleProblem[] = [];
  for (const file of await yamlFiles(dir)) {
    const docs = parseAllDocuments(await readFile(file, 'utf8'));
    const docList = Array.isArray(docs) ? docs : [docs];
    const error = docList.flatMap((d) => d.errors)[0];
    if (error !== undefined)
      problems.push({ file: relative(dir, file), message: error.message.split('\n')[0] ?? error.name });
  }
  return problems;
}

/** Creates (server-side apply) the examples namespace and a GitRepository `<name>` → `<gitUrl>/<name>.git` per repo. */
export async function provideExampleSources(
  kc: KubeConfig,
  gitUrl: string,
  repoNames: readonly string[],
  namespace: string = EXAMPLES_NAMESPACE,
): Promise<void> {
  const core = kc.makeApiClient(CoreV1Api);
  const apply = setHeaderOptions('Content-Type', PatchStrategy.ServerSideApply);
  await core.patchNamespace(
    {
      name: namespace,
      fieldManager: FIELD_MANAGER,
      force: true,
      body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } },
    },
    apply,
  );
  const custom = kc.makeApiClient(CustomObjectsApi);
  for (const name of repoNames) {
    await custom.patchNamespacedCustomObject(
      {
        group: API_GROUP,
        version: API_VERSION,
        namespace,
        plural: 'gitrepositories',
        name,
        fieldManager: FIELD_MANAGER,
        force: true,
        body: {
          apiVersion: `${API_GROUP}/${API_VERSION}`,
          kind: 'GitRepository',
          metadata: { name, namespace, labels: { 'app.kubernetes.io/managed-by': 'convoy-dev' } },
          spec: { url: `${gitUrl}/${name}.git`, ref: { branch: 'main' } },
        },
      },
      apply,
    );
  }
}

async function yamlFiles(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...(await yamlFiles(path)));
    else if (/\.ya?ml$/.test(entry.name)) out.push(path);
  }
  return out.sort();
}

/**
 * The examples tenant's own rights, as a platform team grants a team: the ServiceAccount its
 * Releases act as (`serviceAccount`, the installation's defaultServiceAccount) may administer the
 * examples namespace (ClusterRole admin, bound there) — and nothing outside it.
 */
export async function grantExampleDeployer(
  kc: KubeConfig,
  serviceAccount: string,
  namespace: string = EXAMPLES_NAMESPACE,
): Promise<void> {
  const rbac = kc.makeApiClient(RbacAuthorizationV1Api);
  const name = 'convoy-examples-deployer';
  await rbac.patchNamespacedRoleBinding(
    {
      name,
      namespace,
      fieldManager: FIELD_MANAGER,
      force: true,
      body: {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'RoleBinding',
        metadata: { name, namespace },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'admin' },
        subjects: [{ kind: 'ServiceAccount', name: serviceAccount, namespace }],
      },
    },
    setHeaderOptions('Content-Type', PatchStrategy.ServerSideApply),
  );
}
