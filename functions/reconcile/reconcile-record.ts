import { API_GROUP, API_VERSION } from '../../domain/api/common.ts';
import { parseRelease, type Release } from '../../domain/api/objects.ts';
import type { ReconcilePorts } from '../../domain/reconcile/ports.ts';
import { reconcile } from '../../domain/reconcile/reconcile.ts';
import { dropped, stop, type Outcome } from '../../domain/runtime/outcome.ts';
import type { Loop, QueueMessage } from '../../domain/runtime/queue-message.ts';
import { FieldManager } from '../../domain/status/field-managers.ts';
import type { EventRecorder } from '../../adapters/kube/events.ts';
import { observeWrites } from './release-events.ts';
import { appliedHint } from '../runtime/applied-hint.ts';
import { StatusRefusedError, type StatusWriter } from '../../adapters/kube/status-writer.ts';
import { concludeStatusRefused } from '../../domain/reconcile/conclude.ts';
import { createKubeClient, resourcePath } from '../../adapters/kube/http.ts';
import type { KubeClientConfig } from '../../adapters/kube/kubeconfig.ts';
import { isNotFound } from '../../adapters/kube/management-reader.ts';
import type { RecordContext, RecordHandler } from '../runtime/sqs-batch-handler.ts';

export interface ReleaseSource {
  /** The Release as stored now, or undefined when it no longer exists. */
  get(namespace: string, name: string): Promise<unknown>;
}

export function createReleaseSource(config: KubeClientConfig): ReleaseSource {
  const client = createKubeClient(config);
  return {
    async get(namespace, name) {
      try {
        return await client.get<unknown>(resourcePath(`${API_GROUP}/${API_VERSION}`, 'releases', namespace, name));
      } catch (error) {
        if (isNotFound(error)) return undefined;
        throw error;
      }
    },
  };
}

/** Sends a Release to another loop's queue at once. */
export type Notifier = (loop: Loop, release: Release, cause: string, applied?: QueueMessage['applied']) => Promise<void>;

export interface ReconcileRecordDeps {
  releases: ReleaseSource;
  statusWriter: StatusWriter;
  ports: ReconcilePorts;
  notify: Notifier;
  /** Events about the Release (release-events.ts); undefined: none are written. */
  events?: EventRecorder | undefined;
}

/**
 * Loads the Release a message names, reconciles it and writes the
 * convoy-release status slice. A message for a deleted or replaced Release
 * (uid differs) is dropped.
 */
export function createReconcileRecordHandler(deps: ReconcileRecordDeps): RecordHandler {
  return async (message: QueueMessage, ctx: RecordContext): Promise<Outcome> => {
    const release = await loadRelease(deps.releases, message, ctx);
    if (!('metadata' in release)) return release;
    const writes = observeWrites(deps.ports);
    const result = await reconcile(release, writes.ports);
    if (result.kind === 'suspended') {
      ctx.logger.info('suspended: not reconciled');
      return stop();
    }
    const log = ctx.logger.child({ renderRef: result.renderRef });
    const key = { namespace: message.namespace, name: message.name };
    try {
      await deps.statusWriter.apply(key, { manager: FieldManager.release, slice: result.slice });
    } catch (error) {
      // Deleted while it was reconciled: nothing left to report on.
      if (isNotFound(error)) return dropped('the Release was deleted during the reconcile', { gone: true });
      if (!(error instanceof StatusRefusedError)) throw error;
      // convoy computed a status its own CRD refuses: say so in Applied instead of retrying forever.
      log.error('the reconcile status was refused; writing Applied False/DeployFailed instead', { error });
      const refused = concludeStatusRefused(release, deps.ports.now(), error.message, result.slice.resolvedRetentionPolicy ?? deps.ports.retentionDefault);
      await deps.statusWriter.apply(key, { manager: FieldManager.release, slice: refused.slice });
      return refused.outcome;
    }
    await writes.emit(deps.events, release, result.slice, log);
    for (const warning of result.warnings) log.warn(warning);
    // The first drift and health checks after an apply build on its answers (applied-hint.ts).
    const hint = result.observed && appliedHint(release, { manager: FieldManager.release, slice: result.slice }, result.observed);
    for (const loop of result.notify) await deps.notify(loop, release, `applied ${result.renderRef ?? ''}`.trim(), hint);
    const applied = result.slice.conditions.find((c) => c.type === 'Applied');
    log.info('reconciled', { applied: applied?.reason, phase: result.slice.lastAttempted?.phase });
    return result.outcome;
  };
}

/** The Release of a message, or the Outcome that ends the message without work. */
export async function loadRelease(
  releases: ReleaseSource,
  message: QueueMessage,
  ctx: RecordContext,
): Promise<Release | Outcome> {
  const raw = await releases.get(message.namespace, message.name);
  if (raw === undefined) return dropped('the Release no longer exists', { gone: true });
  const parsed = parseRelease(raw);
  if (!parsed.ok) {
    ctx.logger.error('the Release does not parse; was it written before the CRD schema?', { reason: parsed.error });
    return stop();
  }
  if (message.uid !== '' && parsed.value.metadata.uid !== message.uid) {
    return dropped(`the message is for uid ${message.uid}, the Release now has uid ${parsed.value.metadata.uid ?? '?'}`, { gone: true });
  }
  return parsed.value;
}
