/**
 * One fleet message: the live ReleaseSet, its Clusters, its template source resolved
 * once, the Releases of its namespace → decideFleet → the child writes in order → the run's
 * decision (domain/runtime/run-decision.ts): the status (field manager convoy-releaseset), then
 * Events about the set, and the Outcome, which the runtime commits (functions/runtime/run-commit.ts).
 * The message is a hint: only a ReleaseSet that exists with the message's uid is worked on
 * (fleetAdmission, before the Lease).
 */
import type { EventRecorder } from '../../adapters/kube/events.ts';
import type { FleetKubePort } from '../../adapters/kube/release-set-port.ts';
import type { TemplateSourceResolver } from '../../adapters/source/template-source.ts';
import { parseRelease, type Release } from '../../domain/api/objects.ts';
import { parseReleaseSet, type ReleaseSet, type ReleaseSetStatus } from '../../domain/api/release-set.ts';
import { decideFleet, withWriteFailures, type FleetDecision } from '../../domain/fleet/decide-fleet.ts';
import type { ClusterRead } from '../../domain/fleet/generate-fleet.ts';
import { FleetCondition } from '../../domain/fleet/reasons.ts';
import { done, dropped, retry, waitAsNewMessage, type Outcome } from '../../domain/runtime/outcome.ts';
import type { QueueMessage } from '../../domain/runtime/queue-message.ts';
import type { Decided, RunDecision } from '../../domain/runtime/run-decision.ts';
import type { RenderStore } from '../../domain/store/render-store.ts';
import type { Logger } from '../../platform/logger.ts';
import type { LoopRun } from '../runtime/run-commit.ts';
import type { RecordContext, RecordHandler } from '../runtime/sqs-batch-handler.ts';
import { runFleetWrites, type WritesResult } from './fleet-writes.ts';

export interface FleetRecordDeps {
  readonly kube: FleetKubePort;
  readonly resolveSource: TemplateSourceResolver;
  readonly renders: RenderStore | undefined;
  readonly events: EventRecorder;
  readonly now?: () => Date;
}

type SetRead = { readonly set: ReleaseSet } | { readonly refused: string };

/** The live ReleaseSet the message names, or why the message is not worked on. */
async function readSet(kube: FleetKubePort, message: QueueMessage): Promise<SetRead> {
  const raw = await kube.getSet(message.namespace, message.name);
  if (raw === undefined) return { refused: `ReleaseSet ${message.namespace}/${message.name} does not exist` };
  const uid = (raw['metadata'] as { uid?: unknown } | undefined)?.uid;
  if (uid !== message.uid)
    return {
      refused: `ReleaseSet ${message.namespace}/${message.name} has uid ${String(uid)}, not the message's ${message.uid}`,
    };
  const parsed = parseReleaseSet(raw);
  if (!parsed.ok)
    return { refused: `ReleaseSet ${message.namespace}/${message.name} does not parse: ${parsed.error}` };
  return { set: parsed.value };
}

/** Before the Lease: a message whose ReleaseSet is missing or another one (uid) is dropped, and nothing is written. */
export function fleetAdmission(kube: FleetKubePort, guarded: RecordHandler): RecordHandler {
  return async (message, ctx) => {
    const read = await readSet(kube, message);
    if ('refused' in read) return dropped(read.refused);
    return guarded(message, ctx);
  };
}

/** The fleet loop's run: reads, decides and writes the children; the runtime commits the status and Events. */
export function createFleetRun(deps: FleetRecordDeps): LoopRun<ReleaseSetStatus> {
  return {
    decide: (message, ctx) => decideFleetRun(deps, message, ctx),
    commit: {
      async write(message, status) {
        await deps.kube.applyStatus(message.namespace, message.name, status);
        return { kind: 'written' };
      },
      // The fleet's status closes no Lease: every run gives it back.
      markOf: () => undefined,
      events: deps.events,
    },
  };
}

async function decideFleetRun(
  deps: FleetRecordDeps,
  message: QueueMessage,
  ctx: RecordContext,
): Promise<Decided<ReleaseSetStatus>> {
  const now = deps.now ?? (() => new Date());
  const log = ctx.logger;
  // Read again under the Lease: the status a run before us wrote is the rollout's memory.
  const read = await readSet(deps.kube, message);
  if ('refused' in read) return dropped(read.refused);
  const { set } = read;
  const namespace = message.namespace;
  const [clusters, source, releases] = await Promise.all([
    readClusters(deps.kube, namespace),
    deps.resolveSource(set),
    readReleases(deps.kube, namespace, log),
  ]);
  const at = now();
  let decision = decideFleet({ set, clusters, source, releases, now: at });
  if (decision.stop === 'deleting') return done();

  // The child writes are the run's work: their failures are part of what it decides.
  const written = await runFleetWrites(
    decision.writes,
    message.uid,
    namespace,
    { kube: deps.kube, renders: deps.renders },
    log,
  );
  decision = withWriteFailures(decision, written.failures, set.metadata.generation ?? 0, at);
  return fleetRunDecision(set, decision, written);
}

/** The run's decision once the children are written: the set's status, then Events about the set (they report it), then the Outcome. */
export function fleetRunDecision(
  set: ReleaseSet,
  decision: FleetDecision,
  written: WritesResult,
): RunDecision<ReleaseSetStatus> {
  const status = decision.status;
  return {
    write: { slice: () => status },
    before: [],
    after: [
      {
        kind: 'events',
        subject: {
          kind: 'ReleaseSet',
          namespace: set.metadata.namespace ?? 'default',
          name: set.metadata.name,
          uid: set.metadata.uid,
          resourceVersion: set.metadata.resourceVersion,
        },
        intents: [...decision.events, ...written.events],
      },
    ],
    outcome: outcomeOf(decision),
    report: {
      message: 'fleet decided',
      fields: {
        stop: decision.stop,
        writes: decision.writes.length,
        failedWrites: written.failures.length,
        revision: status.revision?.id,
      },
    },
  };
}

/**
 * The decision as the queue sees it: retry → backoff; a recheck → a new delayed message; else done.
 * A rollout may wait for hours (soaks, step deadlines, slow batches), so its rechecks spend no
 * receive: a visibility change would count every recheck towards the queue's maxReceiveCount and
 * dead-letter a long rollout's only message. The copy names its chain (queue-message.ts
 * followUpOf), so the Lease still knows it as the set's follow-up. Only failures spend receives.
 */
function outcomeOf(decision: FleetDecision): Outcome {
  if (decision.retry) {
    const failed =
      decision.status.conditions?.find((c) => c.status === 'False' && c.type === FleetCondition.Generated) ??
      decision.status.conditions?.find((c) => c.type === FleetCondition.RolloutSucceeded);
    return retry(new Error(`${decision.stop}: ${failed?.reason ?? ''} ${failed?.message ?? ''}`.trim()));
  }
  if (decision.requeueAfterSeconds !== undefined)
    return waitAsNewMessage(
      decision.requeueAfterSeconds * 1000,
      `${decision.stop}: look again in ${decision.requeueAfterSeconds} s`,
    );
  return done();
}

async function readClusters(kube: FleetKubePort, namespace: string): Promise<ClusterRead> {
  try {
    const items = await kube.listClusters(namespace);
    return {
      ok: true,
      clusters: items.map((item) => {
        const metadata = (item['metadata'] ?? {}) as {
          name?: string;
          labels?: Record<string, string>;
          annotations?: Record<string, string>;
        };
        return {
          name: metadata.name ?? '',
          labels: metadata.labels ?? {},
          annotations: metadata.annotations ?? {},
        };
      }),
    };
  } catch (error) {
    return { ok: false, message: error instanceof Error ? error.message : String(error) };
  }
}

async function readReleases(kube: FleetKubePort, namespace: string, log: Logger): Promise<Release[]> {
  const items = await kube.listReleases(namespace);
  return items.flatMap((raw) => {
    const parsed = parseRelease(raw);
    if (parsed.ok) return [parsed.value];
    const name = (raw['metadata'] as { name?: string } | undefined)?.name;
    log.warn('a Release of the namespace does not parse; the fleet leaves it out', {
      release: name,
      reason: parsed.error,
    });
    return [];
  });
}
