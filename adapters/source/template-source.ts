/**
 * Resolves a ReleaseSet's template source once per run: a Git ref to its commit, a
 * Helm version range to the exact version. It is the reconcile's source port (adapters/reconcile/
 * source-port.ts) run on the template as if it were a Release of the set's namespace, so the set
 * resolves exactly as its children will: the same credentials, read as the template's
 * ServiceAccount, the same tenancy rules, the same caches and errors.
 */
import type { Release } from '../../domain/api/objects.ts';
import type { ReleaseSet } from '../../domain/api/release-set.ts';
import type { SourceResolution } from '../../domain/fleet/generate-fleet.ts';
import type { ReconcilePorts } from '../../domain/reconcile/ports.ts';
import { SourceNotReadyError, SourceVerificationError, UnsupportedSourceError } from './errors.ts';

export type TemplateSourceResolver = (set: ReleaseSet) => Promise<SourceResolution>;

/**
 * `source`: the reconcile's source port. Errors the source port classifies become SourceNotReady
 * or Unsupported (their messages are redacted there); anything else is thrown (the run is retried).
 */
export function createTemplateSourceResolver(source: ReconcilePorts['source']): TemplateSourceResolver {
  return async (set) => {
    // Only what the source port reads: metadata (namespace, annotations), spec.source, spec.serviceAccountName.
    const asRelease = {
      apiVersion: set.apiVersion,
      kind: 'Release',
      metadata: { name: set.metadata.name, namespace: set.metadata.namespace, uid: set.metadata.uid },
      spec: set.spec.template.spec,
    } as unknown as Release;
    try {
      const tree = await source.resolve(asRelease);
      const { git, helm } = tree.resolved;
      if (git !== undefined) return { ok: true, resolved: { git: { url: git.url, commit: git.commit } } };
      if (helm !== undefined)
        return {
          ok: true,
          resolved: {
            helm: {
              repository: helm.repository,
              chart: helm.chart,
              version: helm.version,
              digest: helm.digest,
            },
          },
        };
      return {
        ok: false,
        reason: 'Unsupported',
        message:
          'spec.template.spec.source: a ReleaseSet pins git and helm sources; this source resolved to neither',
      };
    } catch (error) {
      if (error instanceof UnsupportedSourceError)
        return {
          ok: false,
          reason: 'Unsupported',
          message: `spec.template (as a Release): ${error.message}`,
        };
      if (error instanceof SourceNotReadyError || error instanceof SourceVerificationError)
        return {
          ok: false,
          reason: 'SourceNotReady',
          message: `spec.template (as a Release): ${error.message}`,
        };
      throw error;
    }
  };
}
