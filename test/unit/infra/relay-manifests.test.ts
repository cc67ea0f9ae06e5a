import { readdirSync } from 'node:fs';
import { parseAllDocuments } from 'yaml';
import { describe, expect, it } from 'vitest';
import {
  DEFAULT_CRD_DIR,
  loadCrds,
  manifestsToYaml,
  relayManifests,
  type KubeManifest,
} from '../../../infra/relay-manifests.ts';

const options = {
  queueUrls: {
    reconcile: 'https://sqs.eu-west-1.amazonaws.com/111111111111/reconcile',
    drift: 'https://sqs.eu-west-1.amazonaws.com/111111111111/drift',
    health: 'https://sqs.eu-west-1.amazonaws.com/111111111111/health',
  },
  region: 'eu-west-1',
  renderBucket: 'convoy-renders',
};

const only = (manifests: KubeManifest[], kind: string, name?: string) => {
  const found = manifests.filter(
    (m) => m.kind === kind && (name === undefined || m.metadata['name'] === name),
  );
  expect(found, kind).toHaveLength(1);
  return found[0] as KubeManifest & Record<string, never>;
};

type Rule = { apiGroups: string[]; resources: string[]; verbs: string[] };
/** "group/resource" → verbs, so a rule set compares regardless of how it is grouped. */
const permissions = (rules: Rule[]) => {
  const out: Record<string, string[]> = {};
  for (const rule of rules)
    for (const g of rule.apiGroups)
      for (const r of rule.resources) out[`${g}/${r}`] = [...(out[`${g}/${r}`] ?? []), ...rule.verbs].sort();
  return out;
};

describe('relayManifests', () => {
  it('starts with every CRD of config/crds', () => {
    const manifests = relayManifests(options);
    const crdFiles = readdirSync(DEFAULT_CRD_DIR).filter((f) => f.endsWith('.yaml'));
    const crds = manifests.filter((m) => m.kind === 'CustomResourceDefinition');
    expect(crds.map((c) => c.metadata['name']).sort()).toEqual(
      crdFiles.map((f) => f.replace(/\.yaml$/, '')).sort(),
    );
    expect(manifests.slice(0, crds.length)).toEqual(crds);
    expect(loadCrds()).toEqual(crds);
  });

  it('ClusterRole: exactly the watches, Release reads and auth reviews the relay makes; no Release write, no Secret by default', () => {
    const role = only(relayManifests(options), 'ClusterRole', 'convoy-relay');
    expect(permissions(role['rules'] as Rule[])).toEqual({
      'convoy.dev/releases': ['get', 'list', 'watch'],
      'convoy.dev/clusters': ['list', 'watch'],
      'convoy.dev/mutations': ['list', 'watch'],
      'convoy.dev/lifecycles': ['list', 'watch'],
      'convoy.dev/gitrepositories': ['list', 'watch'],
      'convoy.dev/releasesets': ['list', 'watch'],
      'convoy.dev/notifications': ['list', 'watch'],
      '/configmaps': ['list', 'watch'],
      'authentication.k8s.io/tokenreviews': ['create'],
      'authorization.k8s.io/subjectaccessreviews': ['create'],
    });
    expect(only(relayManifests(options), 'ConfigMap')['data']).toMatchObject({
      CONVOY_WATCH_SECRETS: 'false',
    });
  });

  it('watchSecrets: true adds list/watch on Secrets (and says so to the relay); ConfigMaps are never readable one by one (no get)', () => {
    const manifests = relayManifests({ ...options, watchSecrets: true });
    const perms = permissions(only(manifests, 'ClusterRole', 'convoy-relay')['rules'] as Rule[]);
    expect(perms['/secrets']).toEqual(['list', 'watch']);
    expect(perms['/configmaps']).toEqual(['list', 'watch']);
    expect(only(manifests, 'ConfigMap')['data']).toMatchObject({ CONVOY_WATCH_SECRETS: 'true' });
  });

  it('functions: exactly what functions/ calls (Events included), bound to the convoy:functions group; no impersonation cluster-wide, no Secret or ConfigMap, no write to rendered kinds', () => {
    const manifests = relayManifests({ ...options, namespace: 'convoy' });
    expect(permissions(only(manifests, 'ClusterRole', 'convoy-functions')['rules'] as Rule[])).toEqual({
      'convoy.dev/releases': ['create', 'delete', 'get', 'list', 'patch', 'update'],
      'convoy.dev/releases/status': ['patch'],
      // The fleet function: its ReleaseSet, its status, the owner references of its children.
      'convoy.dev/releasesets': ['get', 'list', 'watch'],
      'convoy.dev/releasesets/status': ['get', 'patch', 'update'],
      'convoy.dev/releasesets/finalizers': ['update'],
      'convoy.dev/clusters': ['get', 'list'],
      'convoy.dev/gitrepositories': ['get', 'list'],
      'convoy.dev/mutations': ['get', 'list'],
      'convoy.dev/lifecycles': ['get', 'list'],
      // The notify function: the Notifications of a Release's namespace, and their status (convoy-notify).
      'convoy.dev/notifications': ['get', 'list'],
      'convoy.dev/notifications/status': ['patch'],
      // A dependency in another namespace counts only where that namespace's labels allow it.
      '/namespaces': ['get'],
      'events.k8s.io/events': ['create', 'get', 'patch'],
    });
    expect(permissions(only(manifests, 'Role', 'convoy-functions')['rules'] as Rule[])).toEqual({
      'coordination.k8s.io/leases': [
        'create',
        'delete',
        'deletecollection',
        'get',
        'list',
        'patch',
        'update',
      ],
    });
    for (const kind of ['RoleBinding', 'ClusterRoleBinding']) {
      expect(only(manifests, kind, 'convoy-functions')['subjects']).toEqual([
        { kind: 'Group', name: 'convoy:functions', apiGroup: 'rbac.authorization.k8s.io' },
      ]);
    }
    // The impersonate rule exists only as a ClusterRole bound by RoleBindings; none without tenant namespaces.
    expect(
      permissions(only(manifests, 'ClusterRole', 'convoy-functions-impersonate')['rules'] as Rule[]),
    ).toEqual({ '/serviceaccounts': ['impersonate'] });
    expect(
      manifests.filter(
        (m) =>
          m.kind === 'ClusterRoleBinding' &&
          (m as unknown as { roleRef: { name: string } }).roleRef.name === 'convoy-functions-impersonate',
      ),
    ).toEqual([]);
    expect(
      manifests.filter(
        (m) => m.kind === 'RoleBinding' && m.metadata['name'] === 'convoy-functions-impersonate',
      ),
    ).toEqual([]);
  });

  it('tenantNamespaces: one RoleBinding granting impersonate on ServiceAccounts per tenant namespace, to the functions group only', () => {
    const manifests = relayManifests({
      ...options,
      namespace: 'convoy',
      tenancy: { tenantNamespaces: ['team-a', 'team-b'] },
    });
    const bindings = manifests.filter(
      (m) => m.kind === 'RoleBinding' && m.metadata['name'] === 'convoy-functions-impersonate',
    );
    expect(bindings.map((b) => b.metadata['namespace'])).toEqual(['team-a', 'team-b']);
    for (const binding of bindings) {
      expect(binding['roleRef']).toEqual({
        apiGroup: 'rbac.authorization.k8s.io',
        kind: 'ClusterRole',
        name: 'convoy-functions-impersonate',
      });
      expect(binding['subjects']).toEqual([
        { kind: 'Group', name: 'convoy:functions', apiGroup: 'rbac.authorization.k8s.io' },
      ]);
    }
    expect(only(manifests, 'ConfigMap')['data']).toMatchObject({
      CONVOY_TENANT_NAMESPACES: 'team-a,team-b',
      CONVOY_IN_CLUSTER_NAMESPACES: 'team-a,team-b',
    });
  });

  it.each([
    ['kube-system', /kube-system may not be a tenant namespace.*cluster-admin/],
    ['kube-public', /kube-public may not be a tenant namespace/],
    ['kube-node-lease', /kube-node-lease may not be a tenant namespace/],
    ['convoy', /convoy is convoy's own installation namespace/],
    ['Team_A', /"Team_A" is not a namespace name/],
  ])('tenantNamespaces refuses %s with a clear error naming the setting', (tenant, message) => {
    expect(() =>
      relayManifests({ ...options, namespace: 'convoy', tenancy: { tenantNamespaces: ['team-a', tenant] } }),
    ).toThrow(message);
    expect(() =>
      relayManifests({ ...options, namespace: 'convoy', tenancy: { tenantNamespaces: [tenant] } }),
    ).toThrow(/^tenantNamespaces: /);
  });

  it('tenancy settings: the ConfigMap carries defaultServiceAccount (default "default"), tenant and inCluster namespaces (default none) and cross-namespace refs (default false)', () => {
    const data = only(relayManifests({ ...options, namespace: 'convoy' }), 'ConfigMap')['data'] as Record<
      string,
      string
    >;
    expect(data).toMatchObject({
      CONVOY_DEFAULT_SERVICE_ACCOUNT: 'default',
      CONVOY_TENANT_NAMESPACES: '',
      CONVOY_IN_CLUSTER_NAMESPACES: '',
      CONVOY_CROSS_NAMESPACE_REFS: 'false',
    });
    const open = only(
      relayManifests({
        ...options,
        tenancy: { defaultServiceAccount: '', inClusterNamespaces: '*', crossNamespaceRefs: true },
      }),
      'ConfigMap',
    )['data'] as Record<string, string>;
    expect(open).toMatchObject({
      CONVOY_DEFAULT_SERVICE_ACCOUNT: '',
      CONVOY_IN_CLUSTER_NAMESPACES: '*',
      CONVOY_CROSS_NAMESPACE_REFS: 'true',
    });
  });

  it("Role: Leases in the installation namespace only (leader Lease; deletecollection of a deleted Release's Leases)", () => {
    const manifests = relayManifests({ ...options, namespace: 'convoy' });
    const role = only(manifests, 'Role', 'convoy-relay');
    expect(role.metadata['namespace']).toBe('convoy');
    expect(permissions(role['rules'] as Rule[])).toEqual({
      'coordination.k8s.io/leases': ['create', 'deletecollection', 'get', 'list', 'update'],
    });
    for (const kind of ['RoleBinding', 'ClusterRoleBinding']) {
      expect(only(manifests, kind, 'convoy-relay')['subjects']).toEqual([
        { kind: 'ServiceAccount', name: 'convoy-relay', namespace: 'convoy' },
      ]);
    }
  });

  it("Deployment: 2 replicas of the image's entrypoint as the relay ServiceAccount, with queue URLs, bucket and region from the ConfigMap", () => {
    const manifests = relayManifests({ ...options, image: 'registry.example/convoy:1' });
    const deployment = only(manifests, 'Deployment') as unknown as {
      spec: {
        replicas: number;
        template: {
          spec: {
            serviceAccountName: string;
            containers: {
              image: string;
              command?: string[];
              envFrom: { configMapRef: { name: string } }[];
            }[];
          };
        };
      };
    };
    expect(deployment.spec.replicas).toBe(2);
    const pod = deployment.spec.template.spec;
    expect(pod.serviceAccountName).toBe('convoy-relay');
    expect(only(manifests, 'ServiceAccount').metadata['name']).toBe('convoy-relay');
    const [container] = pod.containers;
    expect(container?.image).toBe('registry.example/convoy:1');
    expect(container?.command).toBeUndefined();
    expect(container?.envFrom).toEqual([{ configMapRef: { name: 'convoy-relay-config' } }]);
    const config = only(manifests, 'ConfigMap') as unknown as {
      metadata: { name: string };
      data: Record<string, string>;
    };
    expect(config.metadata.name).toBe('convoy-relay-config');
    expect(config.data).toMatchObject({
      CONVOY_NAMESPACE: 'convoy-system',
      CONVOY_RECONCILE_QUEUE_URL: options.queueUrls.reconcile,
      CONVOY_DRIFT_QUEUE_URL: options.queueUrls.drift,
      CONVOY_HEALTH_QUEUE_URL: options.queueUrls.health,
      CONVOY_RENDER_BUCKET: 'convoy-renders',
      AWS_REGION: 'eu-west-1',
    });
  });

  it('PodDisruptionBudget keeps one relay; NetworkPolicy admits only the HTTP and HTTPS ports', () => {
    const manifests = relayManifests(options);
    expect(only(manifests, 'PodDisruptionBudget')['spec']).toEqual({
      minAvailable: 1,
      selector: { matchLabels: { 'app.kubernetes.io/name': 'convoy-relay' } },
    });
    expect(only(manifests, 'NetworkPolicy')['spec']).toMatchObject({
      policyTypes: ['Ingress'],
      ingress: [
        {
          ports: [
            { protocol: 'TCP', port: 8080 },
            { protocol: 'TCP', port: 8443 },
          ],
        },
      ],
    });
  });

  it('IRSA: the role ARN annotates the ServiceAccount only when given', () => {
    expect(only(relayManifests(options), 'ServiceAccount').metadata['annotations']).toBeUndefined();
    const arn = 'arn:aws:iam::111111111111:role/relay';
    expect(
      only(relayManifests({ ...options, irsaRoleArn: arn }), 'ServiceAccount').metadata['annotations'],
    ).toEqual({ 'eks.amazonaws.com/role-arn': arn });
  });

  it('manifestsToYaml: one YAML document per object, in order', () => {
    const manifests = relayManifests(options);
    const docs = parseAllDocuments(manifestsToYaml(manifests)).map((d) => d.toJS() as KubeManifest);
    expect(docs).toEqual(manifests);
  });
});
