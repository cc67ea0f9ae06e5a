import { releaseSchema, type Release } from '../../../domain/api/index.ts';

export interface ReleaseFixture {
  name?: string;
  namespace?: string;
  uid?: string;
  generation?: number;
  resourceVersion?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  deletionTimestamp?: string;
  creationTimestamp?: string;
  spec?: Record<string, unknown>;
  status?: Record<string, unknown>;
}

/** A Release with the API's defaults applied, as the relay sees it after parsing. */
export function release(fixture: ReleaseFixture = {}): Release {
  return releaseSchema.parse({
    apiVersion: 'convoy.dev/v1alpha1',
    kind: 'Release',
    metadata: {
      name: fixture.name ?? 'podinfo',
      namespace: fixture.namespace ?? 'team-a',
      uid: fixture.uid ?? 'uid-1',
      generation: fixture.generation ?? 1,
      resourceVersion: fixture.resourceVersion ?? '100',
      creationTimestamp: fixture.creationTimestamp ?? '2026-01-01T00:00:00Z',
      ...(fixture.labels ? { labels: fixture.labels } : {}),
      ...(fixture.annotations ? { annotations: fixture.annotations } : {}),
      ...(fixture.deletionTimestamp ? { deletionTimestamp: fixture.deletionTimestamp } : {}),
    },
    spec: {
      cluster: { name: 'prod' },
      source: { git: { url: 'https://git.example.com/apps.git', ref: { branch: 'main' } } },
      ...fixture.spec,
    },
    ...(fixture.status ? { status: fixture.status } : {}),
  });
}
