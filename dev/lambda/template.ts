// Reads what Lambda would run from a synthesized CloudFormation template — never copied by hand:
// each function's Handler, Runtime, MemorySize, Timeout, Environment.Variables (still holding the
// template's Ref / Fn::GetAtt values: resolve.ts maps them to local endpoints), its code and
// layers (the assets' aws:asset:path in cdk.out), and its SQS event source mapping's BatchSize,
// MaximumBatchingWindowInSeconds, ScalingConfig.MaximumConcurrency and FunctionResponseTypes;
// each queue's VisibilityTimeout and RedrivePolicy. A function's loop is the queue its mapping
// reads: the one whose URL the function's CONVOY_<LOOP>_QUEUE_URL names (the four: reconcile, drift,
// health and fleet, the ReleaseSet loop).
import { QUEUE_LOOPS, type QueueLoop } from '../../domain/runtime/queue-message.ts';

export interface CfnResource {
  readonly Type: string;
  readonly Properties?: Record<string, unknown>;
  readonly Metadata?: Record<string, unknown>;
}

export interface CfnTemplate {
  readonly Resources: Record<string, CfnResource>;
}

export interface QueueSettings {
  readonly logicalId: string;
  /** CloudFormation's default is 30 s. */
  readonly visibilityTimeoutSeconds: number;
  readonly redrive?: { readonly deadLetterLogicalId: string; readonly maxReceiveCount: number };
}

export interface EventSourceSettings {
  readonly queue: QueueSettings;
  /** Default 10 for SQS. */
  readonly batchSize: number;
  /** Default 0. */
  readonly maximumBatchingWindowInSeconds: number;
  /** Unset in the template: no limit but the account's (here: the driver's default). */
  readonly maximumConcurrency: number | undefined;
  readonly reportBatchItemFailures: boolean;
}

export interface FunctionSettings {
  readonly logicalId: string;
  readonly loop: QueueLoop;
  readonly handler: string;
  readonly runtime: string;
  /** Default 128 MB. */
  readonly memorySize: number;
  /** Default 3 s. */
  readonly timeoutSeconds: number;
  /** As in the template: strings, or intrinsic functions (resolve.ts). */
  readonly environment: Readonly<Record<string, unknown>>;
  /** aws:asset:path of the code, relative to cdk.out. */
  readonly codeAsset: string;
  /** aws:asset:path of each layer (in order), relative to cdk.out. */
  readonly layerAssets: readonly string[];
  readonly eventSource: EventSourceSettings;
}

export class TemplateError extends Error {
  override name = 'TemplateError';
}

const LOOPS: readonly QueueLoop[] = QUEUE_LOOPS;

/** The four functions of a Convoy construct in `template`. */
export function readFunctionSettings(template: CfnTemplate): Record<QueueLoop, FunctionSettings> {
  const resources = template.Resources;
  const found: Partial<Record<QueueLoop, FunctionSettings>> = {};
  for (const [mappingId, mapping] of Object.entries(resources)) {
    if (mapping.Type !== 'AWS::Lambda::EventSourceMapping') continue;
    const props = mapping.Properties ?? {};
    const queueId = getAttId(props['EventSourceArn'], 'Arn');
    const functionId = refId(props['FunctionName']);
    if (queueId === undefined || functionId === undefined) continue;
    const queue = resources[queueId];
    const fn = resources[functionId];
    if (queue?.Type !== 'AWS::SQS::Queue' || fn?.Type !== 'AWS::Lambda::Function') continue;
    const fnProps = fn.Properties ?? {};
    const environment =
      (fnProps['Environment'] as { Variables?: Record<string, unknown> } | undefined)?.Variables ?? {};
    const loop = LOOPS.find((l) => refId(environment[`CONVOY_${l.toUpperCase()}_QUEUE_URL`]) === queueId);
    if (loop === undefined)
      throw new TemplateError(
        `${mappingId}: the function ${functionId} reads queue ${queueId}, which none of its CONVOY_<LOOP>_QUEUE_URL variables names`,
      );
    if (found[loop] !== undefined)
      throw new TemplateError(
        `two functions read the ${loop} queue (${found[loop].logicalId}, ${functionId})`,
      );
    const codeAsset = fn.Metadata?.['aws:asset:path'];
    if (typeof codeAsset !== 'string')
      throw new TemplateError(
        `${functionId} has no aws:asset:path metadata (synthesize with asset metadata on)`,
      );
    const handler = fnProps['Handler'];
    if (typeof handler !== 'string') throw new TemplateError(`${functionId} has no Handler`);
    const scaling = props['ScalingConfig'] as { MaximumConcurrency?: unknown } | undefined;
    found[loop] = {
      logicalId: functionId,
      loop,
      handler,
      runtime: typeof fnProps['Runtime'] === 'string' ? fnProps['Runtime'] : '',
      memorySize: numberOr(fnProps['MemorySize'], 128),
      timeoutSeconds: numberOr(fnProps['Timeout'], 3),
      environment,
      codeAsset,
      layerAssets: ((fnProps['Layers'] as unknown[] | undefined) ?? []).map((layer) =>
        layerAsset(resources, layer, functionId),
      ),
      eventSource: {
        queue: queueSettings(resources, queueId),
        batchSize: numberOr(props['BatchSize'], 10),
        maximumBatchingWindowInSeconds: numberOr(props['MaximumBatchingWindowInSeconds'], 0),
        maximumConcurrency:
          scaling?.MaximumConcurrency === undefined ? undefined : Number(scaling.MaximumConcurrency),
        reportBatchItemFailures: ((props['FunctionResponseTypes'] as unknown[] | undefined) ?? []).includes(
          'ReportBatchItemFailures',
        ),
      },
    };
  }
  const missing = LOOPS.filter((l) => found[l] === undefined);
  if (missing.length > 0)
    throw new TemplateError(
      `the template has no function fed by the ${missing.join(', ')} queue (an AWS::Lambda::EventSourceMapping from its AWS::SQS::Queue)`,
    );
  return found as Record<QueueLoop, FunctionSettings>;
}

export function queueSettings(resources: CfnTemplate['Resources'], logicalId: string): QueueSettings {
  const props = resources[logicalId]?.Properties ?? {};
  const redrive = props['RedrivePolicy'] as
    { deadLetterTargetArn?: unknown; maxReceiveCount?: unknown } | undefined;
  const deadLetterLogicalId =
    redrive === undefined ? undefined : getAttId(redrive.deadLetterTargetArn, 'Arn');
  return {
    logicalId,
    visibilityTimeoutSeconds: numberOr(props['VisibilityTimeout'], 30),
    ...(deadLetterLogicalId !== undefined
      ? { redrive: { deadLetterLogicalId, maxReceiveCount: numberOr(redrive?.maxReceiveCount, 10) } }
      : {}),
  };
}

function layerAsset(resources: CfnTemplate['Resources'], layer: unknown, functionId: string): string {
  const id = refId(layer);
  const asset = id === undefined ? undefined : resources[id]?.Metadata?.['aws:asset:path'];
  if (typeof asset !== 'string')
    throw new TemplateError(
      `${functionId}: layer ${JSON.stringify(layer)} is not a layer asset of this template`,
    );
  return asset;
}

export function refId(value: unknown): string | undefined {
  const ref = (value as { Ref?: unknown } | null | undefined)?.Ref;
  return typeof ref === 'string' ? ref : undefined;
}

export function getAttId(value: unknown, attribute: string): string | undefined {
  const getAtt = (value as { 'Fn::GetAtt'?: unknown } | null | undefined)?.['Fn::GetAtt'];
  return Array.isArray(getAtt) && getAtt[1] === attribute && typeof getAtt[0] === 'string'
    ? getAtt[0]
    : undefined;
}

function numberOr(value: unknown, fallback: number): number {
  if (value === undefined || value === null) return fallback;
  const n = Number(value);
  if (!Number.isFinite(n)) throw new TemplateError(`expected a number, got ${JSON.stringify(value)}`);
  return n;
}
