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
  const found = manifests.filter((m) => m.kind === kind && (name === undefined || m.metadata['name'] === name));
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

  it('ClusterRole: exactly the watches, Release get/patch and auth reviews the relay makes', () => {
    const role = only(relayManifests(options), 'ClusterRole', 'convoy-relay');
    expect(permissions(role['rules'] as Rule[])).toEqual({
      'convoy.dev/releases': ['get', 'list', 'patch', 'watch'],
      'convoy.dev/clusters': ['list', 'watch'],
      'convoy.dev/mutations': ['list', 'watch'],
      'convoy.dev/lifecycles': ['list', 'watch'],
      'convoy.dev/gitrepositories': ['list', 'watch'],
      '/configmaps': ['list', 'watch'],
      '/secrets': ['list', 'watch'],
      'authentication.k8s.io/tokenreviews': ['create'],
      'authorization.k8s.io/subjectaccessreviews': ['create'],
    });
  });

  it('watchSecrets: false drops the Secret rule; ConfigMaps are never readable one by one (no get)', () => {
    const role = only(relayManifests({ ...options, watchSecrets: false }), 'ClusterRole', 'convoy-relay');
    const perms = permissions(role['rules'] as Rule[]);
    expect(perms['/secrets']).toBeUndefined();
    expect(perms['/configmaps']).toEqual(['list', 'watch']);
  });

  it('functions: exactly what functions/ calls, bound to the convoy:functions group; no write to rendered kinds', () => {
    const manifests = relayManifests({ ...options, namespace: 'convoy' });
    expect(permissions(only(manifests, 'ClusterRole', 'convoy-functions')['rules'] as Rule[])).toEqual({
      'convoy.dev/releases': ['get', 'list'],
      'convoy.dev/releases/status': ['patch'],
      'convoy.dev/clusters': ['get', 'list'],
      'convoy.dev/gitrepositories': ['get', 'list'],
      'convoy.dev/mutations': ['get', 'list'],
      'convoy.dev/lifecycles': ['get', 'list'],
      '/configmaps': ['get'],
      '/secrets': ['get'],
      '/serviceaccounts': ['impersonate'],
    });
    expect(permissions(only(manifests, 'Role', 'convoy-functions')['rules'] as Rule[])).toEqual({
      'coordination.k8s.io/leases': ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update'],
    });
    for (const kind of ['RoleBinding', 'ClusterRoleBinding']) {
      expect(only(manifests, kind, 'convoy-functions')['subjects']).toEqual([{ kind: 'Group', name: 'convoy:functions', apiGroup: 'rbac.authorization.k8s.io' }]);
    }
  });

  it('tenancy settings: the ConfigMap carries defaultServiceAccount (default "default"), inCluster namespaces (default the installation namespace) and cross-namespace refs (default false)', () => {
    const data = only(relayManifests({ ...options, namespace: 'convoy' }), 'ConfigMap')['data'] as Record<string, string>;
    expect(data).toMatchObject({ CONVOY_DEFAULT_SERVICE_ACCOUNT: 'default', CONVOY_IN_CLUSTER_NAMESPACES: 'convoy', CONVOY_CROSS_NAMESPACE_REFS: 'false' });
    const open = only(relayManifests({ ...options, tenancy: { defaultServiceAccount: '', inClusterNamespaces: '*', crossNamespaceRefs: true } }), 'ConfigMap')['data'] as Record<string, string>;
    expect(open).toMatchObject({ CONVOY_DEFAULT_SERVICE_ACCOUNT: '', CONVOY_IN_CLUSTER_NAMESPACES: '*', CONVOY_CROSS_NAMESPACE_REFS: 'true' });
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
            containers: { image: string; command?: string[]; envFrom: { configMapRef: { name: string } }[] }[];
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
    const config = only(manifests, 'ConfigMap') as unknown as { metadata: { name: string }; data: Record<string, string> };
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
      ingress: [{ ports: [{ protocol: 'TCP', port: 8080 }, { protocol: 'TCP', port: 8443 }] }],
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
