// Helpers to create convoy objects in integration tests.
import { CustomObjectsApi, type KubeConfig } from '@kubernetes/client-node';
import { API_GROUP, API_VERSION } from '../../domain/api/common.ts';
import { parseRelease, type Release } from '../../domain/api/objects.ts';

const plurals: Record<string, string> = {
  Release: 'releases',
  Cluster: 'clusters',
  GitRepository: 'gitrepositories',
  Mutation: 'mutations',
  Lifecycle: 'lifecycles',
  ReleaseSet: 'releasesets',
  Notification: 'notifications',
};

export function convoyApi(kc: KubeConfig) {
  const api = kc.makeApiClient(CustomObjectsApi);
  const base = (kind: string, namespace: string) => ({
    group: API_GROUP,
    version: API_VERSION,
    namespace,
    plural: plurals[kind],
  });
  return {
    async create(
      kind: string,
      namespace: string,
      name: string,
      spec: unknown,
      extra: { labels?: Record<string, string>; annotations?: Record<string, string> } = {},
    ) {
      return (await api.createNamespacedCustomObject({
        ...base(kind, namespace),
        body: {
          apiVersion: `${API_GROUP}/${API_VERSION}`,
          kind,
          metadata: { name, namespace, ...extra },
          spec,
        },
      })) as Record<string, unknown>;
    },
    async get(kind: string, namespace: string, name: string) {
      return (await api.getNamespacedCustomObject({ ...base(kind, namespace), name })) as Record<
        string,
        unknown
      >;
    },
    async getRelease(namespace: string, name: string): Promise<Release> {
      const raw: unknown = await api.getNamespacedCustomObject({ ...base('Release', namespace), name });
      const parsed = parseRelease(raw);
      if (!parsed.ok) throw new Error(`Release ${namespace}/${name} does not parse: ${parsed.error}`);
      return parsed.value;
    },
    async patchMerge(kind: string, namespace: string, name: string, patch: unknown) {
      const { setHeaderOptions, PatchStrategy } = await import('@kubernetes/client-node');
      return (await api.patchNamespacedCustomObject(
        { ...base(kind, namespace), name, body: patch },
        setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
      )) as Record<string, unknown>;
    },
    raw: api,
  };
}

/** A minimal valid Release spec. */
export function releaseSpec(overrides: Record<string, unknown> = {}) {
  return {
    cluster: { name: 'local' },
    source: { git: { url: 'https://git.example.invalid/apps.git', ref: { branch: 'main' } } },
    ...overrides,
  };
}
