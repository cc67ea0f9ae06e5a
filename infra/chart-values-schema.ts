/**
 * The chart's values.schema.json (see valuesSchema): every key of values.yaml (chart-values.ts)
 * with its type, unknown keys refused. Pure: no file system access.
 */
import { CONFIG_CHECKSUM_ANNOTATION, PART_OF_LABEL, SELECTOR_LABEL } from './chart-values.ts';
import { RELAY_CONFIG_NAME } from './relay-manifests.ts';

type Schema = Record<string, unknown>;

const str = (description: string, extra: Schema = {}): Schema => ({ type: 'string', description, ...extra });
const stringMap = (description: string, extra: Schema = {}): Schema => ({
  type: 'object',
  description,
  additionalProperties: { type: 'string' },
  ...extra,
});
const object = (description: string, properties: Record<string, Schema>, extra: Schema = {}): Schema => ({
  type: 'object',
  description,
  additionalProperties: false,
  properties,
  ...extra,
});
const intOrPercent: Schema = {
  oneOf: [
    { type: 'integer', minimum: 0 },
    { type: 'string', pattern: '^[0-9]+%$' },
  ],
};
/** Prometheus durations (1m30s, 15s, 500ms), or empty for Prometheus' own. */
const duration = (description: string): Schema =>
  str(description, { pattern: '^(|([0-9]+(ms|s|m|h|d|w|y))+)$' });
const quantities: Schema = { type: 'object', additionalProperties: { type: ['string', 'number'] } };

/**
 * values.schema.json: helm checks the merged values against it at install, upgrade, template and lint,
 * so an unknown key (a typo such as `replica`) or a wrong type (`replicas=two`) fails naming the key.
 * Kubernetes fields the chart passes through (affinity, tolerations…) are checked to their first
 * level here and fully by the API server. The keys in the order of values.yaml.
 */
export function valuesSchema(namespaceDependent: readonly string[]): Schema {
  return {
    $schema: 'http://json-schema.org/draft-07/schema#',
    title: 'convoy chart values',
    type: 'object',
    additionalProperties: false,
    required: ['image', 'queues', 'aws', 'replicas', 'settings'],
    properties: {
      ...imageSchemas(),
      ...installationSchemas(),
      ...podSchemas(),
      ...schedulingSchemas(),
      ...optionalObjectSchemas(),
      settings: settingsSchema(namespaceDependent),
    },
  };
}

/** image, imagePullSecrets. */
function imageSchemas(): Record<string, Schema> {
  return {
    image: object('The relay image (convoy publishes none: build and push it, then name it here).', {
      repository: str(
        'The image in your registry, e.g. 111111111111.dkr.ecr.eu-west-1.amazonaws.com/convoy-relay (required).',
        { pattern: '^[^\\s:@]*(:[0-9]+/[^\\s:@]+)?$' },
      ),
      tag: str('Image tag; empty: the chart appVersion.', { pattern: '^[^\\s]*$' }),
      pullPolicy: { type: 'string', enum: ['Always', 'IfNotPresent', 'Never'] },
    }),
    imagePullSecrets: {
      type: 'array',
      description: 'Secrets of the release namespace to pull the image with.',
      items: object(
        'A Secret by name.',
        { name: str('Secret name.', { minLength: 1 }) },
        { required: ['name'] },
      ),
    },
  };
}

/** replicas, and what the installation's settings are made from: queues, region, bucket, log level, tenancy, Secrets. */
function installationSchemas(): Record<string, Schema> {
  return {
    replicas: { type: 'integer', minimum: 0, description: 'Relay Pods (one leads, all serve the HTTP API).' },
    queues: object('SQS queue URLs of the functions (required; the templates say which is missing).', {
      reconcile: str('Reconcile queue URL.'),
      drift: str('Drift queue URL.'),
      health: str('Health queue URL.'),
      fleet: str('Fleet queue URL (ReleaseSets); empty: the relay does not watch ReleaseSets.'),
      notify: str('Notify queue URL (Notifications); empty: the relay does not watch Notifications.'),
    }),
    aws: object('AWS settings.', {
      region: str('Region of the queues and the render bucket.', { minLength: 1 }),
    }),
    renderBucket: str('Render store bucket; empty: none.'),
    logLevel: { type: 'string', enum: ['debug', 'info', 'warn', 'error'] },
    tenantNamespaces: {
      type: 'array',
      description:
        'Namespaces whose Releases may act on this cluster; never kube-* or the release namespace.',
      uniqueItems: true,
      items: { type: 'string', pattern: '^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$' },
    },
    watchSecrets: {
      type: 'boolean',
      description: 'Let the relay list and watch Secrets (it can then read their data).',
    },
    egress: object("The egress policy of outbound requests on a tenant's behalf.", {
      allow: {
        type: 'array',
        description:
          'What they may reach beyond public addresses (CONVOY_EGRESS_ALLOW): CIDR, IP[:port], [IPv6]:port, host[:port] or *.domain; replaces settings.CONVOY_EGRESS_ALLOW when set.',
        uniqueItems: true,
        items: { type: 'string', pattern: '^[^\\s,]+$' },
      },
    }),
  };
}

/** serviceAccount, resources, podAnnotations, podLabels: the relay Pods themselves. */
function podSchemas(): Record<string, Schema> {
  return {
    serviceAccount: object("The relay's ServiceAccount.", {
      annotations: stringMap('e.g. eks.amazonaws.com/role-arn for IRSA.'),
    }),
    resources: object("The relay container's resources.", {
      requests: quantities,
      limits: quantities,
      claims: { type: 'array', items: { type: 'object' } },
    }),
    podAnnotations: stringMap(`Added to the relay Pods; ${CONFIG_CHECKSUM_ANNOTATION} is the chart's own.`, {
      not: { required: [CONFIG_CHECKSUM_ANNOTATION] },
    }),
    podLabels: stringMap(
      `Added to the relay Pods; ${SELECTOR_LABEL} and ${PART_OF_LABEL} are the chart's own.`,
      {
        not: { anyOf: [{ required: [SELECTOR_LABEL] }, { required: [PART_OF_LABEL] }] },
      },
    ),
  };
}

/** nodeSelector, tolerations, affinity, priorityClassName, topologySpreadConstraints: Kubernetes fields, checked to their first level. */
function schedulingSchemas(): Record<string, Schema> {
  return {
    nodeSelector: stringMap('Node labels the relay Pods must run on.'),
    tolerations: {
      type: 'array',
      description: 'Tolerations of the relay Pods (Kubernetes Toleration).',
      items: object('A Toleration.', {
        key: { type: 'string' },
        operator: { type: 'string', enum: ['Exists', 'Equal'] },
        value: { type: 'string' },
        effect: { type: 'string', enum: ['', 'NoSchedule', 'PreferNoSchedule', 'NoExecute'] },
        tolerationSeconds: { type: 'integer' },
      }),
    },
    affinity: object('Affinity of the relay Pods (Kubernetes Affinity).', {
      nodeAffinity: { type: 'object' },
      podAffinity: { type: 'object' },
      podAntiAffinity: { type: 'object' },
    }),
    priorityClassName: str('PriorityClass of the relay Pods; empty: none.'),
    topologySpreadConstraints: {
      type: 'array',
      description:
        'Topology spread constraints of the relay Pods (Kubernetes TopologySpreadConstraint); [] for none.',
      items: object(
        'A TopologySpreadConstraint.',
        {
          maxSkew: { type: 'integer', minimum: 1 },
          topologyKey: { type: 'string', minLength: 1 },
          whenUnsatisfiable: { type: 'string', enum: ['DoNotSchedule', 'ScheduleAnyway'] },
          labelSelector: { type: 'object' },
          matchLabelKeys: { type: 'array', items: { type: 'string' } },
          minDomains: { type: 'integer', minimum: 1 },
          nodeAffinityPolicy: { type: 'string', enum: ['Honor', 'Ignore'] },
          nodeTaintsPolicy: { type: 'string', enum: ['Honor', 'Ignore'] },
        },
        { required: ['maxSkew', 'topologyKey', 'whenUnsatisfiable'] },
      ),
    },
  };
}

/** podDisruptionBudget, serviceMonitor: objects the chart renders only when asked to. */
function optionalObjectSchemas(): Record<string, Schema> {
  return {
    podDisruptionBudget: object('Rendered only when enabled and replicas > 1.', {
      enabled: { type: 'boolean' },
      minAvailable: { ...intOrPercent, description: 'Default 1.' },
      maxUnavailable: { ...intOrPercent, description: 'When set, used instead of minAvailable.' },
    }),
    serviceMonitor: object(
      "A prometheus-operator ServiceMonitor for the relay's /metrics; rendered only when enabled.",
      {
        enabled: { type: 'boolean' },
        labels: stringMap('Labels of the ServiceMonitor (to match your Prometheus serviceMonitorSelector).'),
        interval: duration("Scrape interval; empty: Prometheus' own."),
        scrapeTimeout: duration("Scrape timeout; empty: Prometheus' own."),
        relabelings: { type: 'array', items: { type: 'object' } },
        metricRelabelings: { type: 'array', items: { type: 'object' } },
      },
    ),
  };
}

/** settings: one environment variable of the relay each, any name a variable may have. */
function settingsSchema(namespaceDependent: readonly string[]): Schema {
  return {
    type: 'object',
    description:
      `Installation settings, one environment variable of the relay each (ConfigMap ${RELAY_CONFIG_NAME}); ` +
      `left out by default, defaulting to the release namespace: ${namespaceDependent.join(', ') || 'none'}.`,
    propertyNames: { pattern: '^[A-Za-z_][A-Za-z0-9_]*$' },
    additionalProperties: { type: ['string', 'number', 'boolean'] },
  };
}
