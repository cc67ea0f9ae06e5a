// The input and output of bench/lib/large-release-child.ts (the largeRelease section's reconcile process).
import type { KubeClientSettings } from '../../adapters/kube/kubeconfig.ts';
import type { TenancySettings } from '../../domain/tenancy/settings.ts';
import { formatAllowEntry } from '../../domain/egress/policy.ts';

export interface LargeReleaseChildInput {
  kube: KubeClientSettings;
  s3: { endpoint: string; bucket: string };
  namespace: string;
  name: string;
  uid: string;
  cacheDir: string;
  /** TenancySettings in JSON: inClusterNamespaces as a list or 'all'. */
  tenancy: {
    defaultServiceAccount?: string | undefined;
    inClusterNamespaces: string[] | 'all';
    crossNamespaceRefs: boolean;
    egressAllow?: string | undefined;
  };
  /** Objects per render this run allows (CONVOY_MAX_RENDER_OBJECTS). */
  maxRenderObjects: number;
  progressIntervalMs: number;
}

export interface LargeReleaseChildResult {
  outcome: string;
  wallMs: number;
  /** process.resourceUsage().maxRSS: the peak resident set of this process, in MiB. */
  maxRssMiB: number;
  /** The largest V8 heap used seen (sampled every 50 ms), in MiB. */
  maxHeapUsedMiB: number;
  /** Status writes by the record handler: progress writes and the final one. */
  statusWrites: number;
  statusWriteAtMs: number[];
}

/** The tenancy settings as JSON (the child's input). */
export function tenancyJson(t: TenancySettings): LargeReleaseChildInput['tenancy'] {
  return {
    defaultServiceAccount: t.defaultServiceAccount,
    inClusterNamespaces: t.inClusterNamespaces === 'all' ? 'all' : [...t.inClusterNamespaces],
    crossNamespaceRefs: t.crossNamespaceRefs,
    // The egress allow list as CONVOY_EGRESS_ALLOW writes it (the env's Git server).
    egressAllow: t.egress?.allow.map(formatAllowEntry).join(','),
  };
}
