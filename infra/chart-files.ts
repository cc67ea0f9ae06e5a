/**
 * The files of charts/convoy: Chart.yaml, values.yaml and its schema, the README, the CRDs, and the
 * templates chart-templates.ts makes from relayManifests(), one file per kind.
 */
import { stringify } from 'yaml';
import { loadCrds, relayManifests } from './relay-manifests.ts';
import {
  chartReadme,
  chartValues,
  notesTemplate,
  serviceMonitorTemplate,
  valuesYaml,
} from './chart-values.ts';
import { valuesSchema } from './chart-values-schema.ts';
import {
  chartManifests,
  configMapTemplate,
  helmify,
  isTenantBinding,
  namespaceDependent,
  pdbTemplate,
  settingDefaults,
  tenantRoleBindingsTemplate,
} from './chart-templates.ts';
import { GENERATED, PLACEHOLDER_REGION, withDefaults, yamlOf } from './install-defaults.ts';

export const CHART_NAME = 'convoy';

/** Templates rendered only under a condition: the whole file, its header comment too, so a skipped one renders nothing. */
const CONDITIONAL_FILES: Record<string, string> = {
  [`charts/${CHART_NAME}/templates/pdb.yaml`]:
    'and .Values.podDisruptionBudget.enabled (gt (int .Values.replicas) 1)',
};

function templateFile(name: string, docs: readonly string[]): string {
  const text = `# ${GENERATED}\n${docs.join('---\n')}`;
  const condition = CONDITIONAL_FILES[name];
  return condition === undefined ? text : `{{- if ${condition} }}\n${text.trimEnd()}\n{{- end }}\n`;
}

function templateName(kind: string): string {
  const short: Record<string, string> = { PodDisruptionBudget: 'pdb', NetworkPolicy: 'networkpolicy' };
  return `charts/${CHART_NAME}/templates/${short[kind] ?? kind.toLowerCase()}.yaml`;
}

/** charts/convoy/<file> → content. `version` is the package version (Chart version and appVersion). */
export function chartFiles(version: string): Map<string, string> {
  const files = new Map<string, string>();
  const { manifests, defaults } = chartManifests();
  const deployment = relayManifests(withDefaults({ crds: [] })).find(
    (m) => m.kind === 'Deployment',
  ) as unknown as {
    spec: {
      template: {
        metadata: { labels: Record<string, string> };
        spec: { containers: { resources: unknown }[]; topologySpreadConstraints?: unknown };
      };
    };
  };

  files.set(
    `charts/${CHART_NAME}/Chart.yaml`,
    `# ${GENERATED}\n${stringify(
      {
        apiVersion: 'v2',
        name: CHART_NAME,
        description:
          "convoy's relay for a management cluster: CRDs, RBAC and the relay Deployment; the control loops run as functions fed by SQS",
        type: 'application',
        version,
        // The relay image is built from this package: its tag is the package version (README).
        appVersion: version,
      },
      { lineWidth: 0 },
    )}`,
  );
  const fromNamespace = [
    ...namespaceDependent(
      (manifests.find((m) => m.kind === 'ConfigMap')?.['data'] ?? {}) as Record<string, string>,
    ),
  ];
  const values = chartValues({
    resources: deployment.spec.template.spec.containers[0]?.resources ?? {},
    topologySpreadConstraints: deployment.spec.template.spec.topologySpreadConstraints ?? [],
    settings: Object.fromEntries(
      Object.entries(settingDefaults(defaults)).filter(([name]) => !fromNamespace.includes(name)),
    ),
    region: PLACEHOLDER_REGION,
  });
  files.set(`charts/${CHART_NAME}/values.yaml`, valuesYaml(values, `# ${GENERATED}\n`, fromNamespace));
  files.set(
    `charts/${CHART_NAME}/values.schema.json`,
    `${JSON.stringify(valuesSchema(fromNamespace), null, 2)}\n`,
  );
  files.set(`charts/${CHART_NAME}/README.md`, chartReadme(`# ${GENERATED}`));
  files.set(`charts/${CHART_NAME}/.helmignore`, `# ${GENERATED}\n.git/\n*.tgz\n`);
  for (const crd of loadCrds()) {
    files.set(
      `charts/${CHART_NAME}/crds/${String(crd.metadata['name'])}.yaml`,
      `# ${GENERATED}\n${yamlOf(crd)}`,
    );
  }
  const byFile = new Map<string, string[]>();
  for (const m of manifests) {
    if (isTenantBinding(m)) {
      files.set(
        `charts/${CHART_NAME}/templates/tenant-rolebindings.yaml`,
        `# ${GENERATED}\n${tenantRoleBindingsTemplate(yamlOf(m))}`,
      );
      continue;
    }
    const text = helmify(
      m.kind === 'ConfigMap'
        ? configMapTemplate(m, defaults)
        : m.kind === 'PodDisruptionBudget'
          ? pdbTemplate(yamlOf(m))
          : yamlOf(m),
    );
    const name = templateName(m.kind);
    byFile.set(name, [...(byFile.get(name) ?? []), text]);
  }
  for (const [name, docs] of byFile) files.set(name, templateFile(name, docs));
  files.set(`charts/${CHART_NAME}/templates/NOTES.txt`, notesTemplate());
  const serviceLabels = (manifests.find((m) => m.kind === 'Service')?.metadata['labels'] ?? {}) as Record<
    string,
    string
  >;
  files.set(
    `charts/${CHART_NAME}/templates/servicemonitor.yaml`,
    serviceMonitorTemplate(`# ${GENERATED}\n`, serviceLabels),
  );
  return files;
}
