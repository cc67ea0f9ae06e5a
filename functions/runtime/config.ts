import { z } from 'zod';
import { describeZodError } from '../../domain/api/objects.ts';
import { DEFAULT_PROGRESS_INTERVAL_MS } from '../../domain/reconcile/progress.ts';
import {
  DEFAULT_MAX_RENDER_BYTES,
  DEFAULT_MAX_RENDER_OBJECTS,
} from '../../domain/reconcile/render-limits.ts';

/** What every function needs from its environment; read once per container, at the first invocation. */
export const functionEnvSchema = z.object({
  CONVOY_KUBECONFIG: z
    .string()
    .min(1)
    .optional()
    .describe('Kubeconfig YAML of the management cluster, inline.'),
  CONVOY_KUBECONFIG_PATH: z.string().min(1).optional().describe('Path of the management cluster kubeconfig.'),
  CONVOY_NAMESPACE: z.string().min(1).default('convoy-system').describe('Installation namespace (Leases).'),
  CONVOY_RENDER_BUCKET: z
    .string()
    .min(1)
    .optional()
    .describe('S3 bucket of the render store; absent: no store.'),
  CONVOY_RECONCILE_QUEUE_URL: z.string().url(),
  CONVOY_DRIFT_QUEUE_URL: z.string().url(),
  CONVOY_HEALTH_QUEUE_URL: z.string().url(),
  CONVOY_FLEET_QUEUE_URL: z
    .string()
    .url()
    .optional()
    .describe(
      "The fleet queue: the fleet function's own queue, where it sends its ReleaseSet's next run; absent in installations without ReleaseSets.",
    ),
  CONVOY_NOTIFY_QUEUE_URL: z
    .string()
    .url()
    .optional()
    .describe(
      "The notify queue: the notify function's own queue (a transition still owed comes back on it); absent in installations without notifications.",
    ),
  CONVOY_NOTIFY_EVENT_BUS: z
    .string()
    .min(1)
    .optional()
    .describe('The EventBridge bus of eventBridge destinations that name none (the notify function).'),
  CONVOY_DASHBOARD_URL: z
    .string()
    .url()
    .optional()
    .describe("The dashboard's public base URL: notifications link to the object's page."),
  CONVOY_CACHE_DIR: z.string().min(1).default('/tmp/convoy'),
  CONVOY_OCI_MAX_ARTIFACT_BYTES: z.coerce
    .number()
    .int()
    .positive()
    .optional()
    .describe(
      'Largest content layer of a spec.source.oci artifact, in bytes (checked against the manifest before download); default 64 MiB.',
    ),
  CONVOY_LOG_LEVEL: z.enum(['debug', 'info', 'warn', 'error']).default('info'),
  // Large renders (domain/reconcile/render-limits.ts, progress.ts): read by the reconcile function.
  CONVOY_MAX_RENDER_OBJECTS: z.coerce
    .number()
    .int()
    .min(1)
    .default(DEFAULT_MAX_RENDER_OBJECTS)
    .describe(
      'Objects one render may hold; a larger render ends Applied False/DeployFailed at Rendering, nothing applied.',
    ),
  CONVOY_MAX_RENDER_BYTES: z.coerce
    .number()
    .int()
    .min(1)
    .default(DEFAULT_MAX_RENDER_BYTES)
    .describe(
      'Bytes of render output (helm/kubectl stdout, manifest files together) one render may produce; more ends it at Rendering.',
    ),
  CONVOY_PROGRESS_INTERVAL_SECONDS: z.coerce
    .number()
    .min(1)
    .default(DEFAULT_PROGRESS_INTERVAL_MS / 1000)
    .describe(
      'A reconcile longer than this writes lastAttempted phase Syncing with counts, at most this often.',
    ),
  // Identity and tenancy (read by management-access.ts and tenancy-config.ts; validated there, naming the variable).
  CONVOY_MANAGEMENT_EKS_NAME: z
    .string()
    .optional()
    .describe('EKS management cluster: tokens minted from the function role.'),
  CONVOY_MANAGEMENT_SERVER: z.string().optional().describe('Endpoint of the EKS management cluster.'),
  CONVOY_MANAGEMENT_CA_DATA: z.string().optional().describe('CA (base64 PEM) of the EKS management cluster.'),
  CONVOY_KUBECONFIG_SECRET_ARN: z
    .string()
    .optional()
    .describe('Secrets Manager secret holding the management kubeconfig, read at run time.'),
  CONVOY_DEFAULT_SERVICE_ACCOUNT: z
    .string()
    .optional()
    .describe('ServiceAccount a Release without serviceAccountName acts as.'),
  CONVOY_IN_CLUSTER_NAMESPACES: z
    .string()
    .optional()
    .describe('Namespaces allowed to target the management cluster: *, empty, or a list.'),
  CONVOY_CROSS_NAMESPACE_REFS: z.string().optional().describe('true: references may name other namespaces.'),
  CONVOY_EKS_ROLES: z
    .string()
    .optional()
    .describe('IAM roles the EKS Clusters of each namespace may use (tenancy-config.ts parses it).'),
  CONVOY_INSECURE_REGISTRIES: z
    .string()
    .optional()
    .describe(
      'OCI registries (host[:port], comma-separated, or *) Releases may reach over plain HTTP; empty: none (tenancy-config.ts parses it).',
    ),
  CONVOY_EGRESS_ALLOW: z
    .string()
    .optional()
    .describe(
      'What Git, Helm, OCI and ECR requests may reach beyond public addresses: CIDR, IP[:port], host[:port], *.domain, comma-separated; empty: public only (tenancy-config.ts parses it).',
    ),
  CONVOY_CLUSTER_NETWORKS: z
    .string()
    .optional()
    .describe(
      "The cluster's Service and Pod CIDRs, comma-separated: refused to outbound requests even inside an allowed CIDR (tenancy-config.ts parses it).",
    ),
  CONVOY_TENANT_NAMESPACES: z
    .string()
    .optional()
    .describe(
      'Namespaces whose ServiceAccounts the functions may impersonate (RBAC grants it there only): comma-separated.',
    ),
  // The observers' hint key (functions/runtime/applied-hint.ts): the same for the three functions of an installation.
  CONVOY_HINT_KEY: z
    .string()
    .min(
      1,
      "set but empty: give the installation's shared hint key, or unset it (each container then draws its own)",
    )
    .optional()
    .describe(
      'Secret text the reconcile seals its hints to drift and health with (convoy dev, other hosts).',
    ),
  CONVOY_HINT_KEY_SECRET_ARN: z
    .string()
    .min(1, 'set but empty: give the ARN of the Secrets Manager secret holding the hint key, or unset it')
    .optional()
    .describe(
      "Secrets Manager secret holding the hint key, read once at init (the construct's; clients.ts).",
    ),
  AWS_ENDPOINT_URL: z.string().url().optional(),
  AWS_REGION: z.string().default('us-east-1'),
});

export type FunctionConfig = z.infer<typeof functionEnvSchema>;

export class ConfigError extends Error {
  override name = 'ConfigError';
}

export function loadFunctionConfig(env: Record<string, string | undefined>): FunctionConfig {
  const parsed = functionEnvSchema.safeParse(env);
  if (!parsed.success)
    throw new ConfigError(`function environment is invalid: ${describeZodError(parsed.error)}`);
  return parsed.data;
}
