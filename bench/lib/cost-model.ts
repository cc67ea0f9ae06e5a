// The AWS cost model of the bench: per day, for R Releases whose three loops
// each run once per interval, from figures the bench measured per message (handler time,
// apiserver requests, SQS and S3 requests). Prices: us-east-1 list prices (x86 Lambda,
// SQS standard, S3 standard), as of 2026; they only scale the counts, which are measured.
import type { Loop } from '../../domain/runtime/queue-message.ts';
import { DEFAULT_MEMORY_MB } from '../../infra/convoy-props.ts';

export const PRICES = {
  lambdaPerMillionRequests: 0.2,
  lambdaPerGbSecond: 0.0000166667,
  sqsPerMillionRequests: 0.4,
  s3PerThousandGet: 0.0004,
  s3PerThousandPutListHead: 0.005,
};

/** Memory per function as the Convoy construct configures it by default (MB): its own constant. */
export { DEFAULT_MEMORY_MB };

export interface LoopFigures {
  /** Handler time per message (ms), measured. */
  msPerMessage: number;
  /** Management-apiserver requests per message, measured; undefined when the section did not count them. */
  apiserverRequests?: number;
  /** SQS requests per message the function made (visibility changes, sends), measured. */
  sqsRequests: number;
  s3Get: number;
  s3Other: number;
}

const round = (n: number, digits = 2): number => Math.round(n * 10 ** digits) / 10 ** digits;

export interface CostOptions {
  /** Memory per function (MB); default DEFAULT_MEMORY_MB (the construct's defaults). */
  readonly memoryMb?: Readonly<Record<Loop, number>>;
  /**
   * Lambda invocations per message (1 / the mean batch size measured); default 1 (one record per
   * invocation: an upper bound). Lambda bills requests per invocation and duration per invocation,
   * so with batches `msPerMessage` is the invocation's duration divided by its records.
   */
  readonly invocationsPerMessage?: Readonly<Record<Loop, number>>;
}

export function costModel(
  releases: number,
  intervalMinutes: number,
  loops: Record<Loop, LoopFigures>,
  options: CostOptions = {},
): Record<string, unknown> {
  const memoryOf = (loop: Loop): number => options.memoryMb?.[loop] ?? DEFAULT_MEMORY_MB[loop];
  const counted = Object.values(loops).every((f) => f.apiserverRequests !== undefined);
  const runsPerDay = (24 * 60) / intervalMinutes;
  let invocations = 0;
  let messages = 0;
  let gbSeconds = 0;
  let apiserver = 0;
  let sqs = 0;
  let s3Get = 0;
  let s3Other = 0;
  const perLoop: Record<string, unknown> = {};
  for (const [loop, f] of Object.entries(loops) as [Loop, LoopFigures][]) {
    const m = releases * runsPerDay;
    const gbs = (m * f.msPerMessage * memoryOf(loop)) / 1024 / 1000;
    // Per message: the relay's SendMessage, the event source mapping's share of a receive and
    // a delete (batches of up to 10; counted as one each per message: an upper bound), and the
    // function's own calls.
    const sqsPerMessage = 1 + 1 + 1 + f.sqsRequests;
    messages += m;
    invocations += m * (options.invocationsPerMessage?.[loop] ?? 1);
    gbSeconds += gbs;
    apiserver += m * (f.apiserverRequests ?? 0);
    sqs += m * sqsPerMessage;
    s3Get += m * f.s3Get;
    s3Other += m * f.s3Other;
    perLoop[loop] = {
      messages: m,
      ...(options.invocationsPerMessage !== undefined
        ? { invocations: round(m * (options.invocationsPerMessage[loop] ?? 1), 0) }
        : {}),
      gbSeconds: round(gbs),
      ...(f.apiserverRequests !== undefined ? { apiserverRequests: round(m * f.apiserverRequests, 0) } : {}),
      msPerMessage: f.msPerMessage,
      memoryMb: memoryOf(loop),
    };
  }
  const usd = {
    lambdaRequests: round(
      ((options.invocationsPerMessage !== undefined ? invocations : messages) / 1e6) *
        PRICES.lambdaPerMillionRequests,
    ),
    lambdaCompute: round(gbSeconds * PRICES.lambdaPerGbSecond),
    sqs: round((sqs / 1e6) * PRICES.sqsPerMillionRequests),
    s3: round((s3Get / 1000) * PRICES.s3PerThousandGet + (s3Other / 1000) * PRICES.s3PerThousandPutListHead),
  };
  return {
    releases,
    intervalMinutes,
    perDay: {
      lambdaInvocations: {
        batchOf1: messages,
        batchOf10: Math.ceil(messages / 10),
        ...(options.invocationsPerMessage !== undefined ? { measuredBatches: round(invocations, 0) } : {}),
      },
      lambdaGbSeconds: round(gbSeconds),
      sqsRequests: round(sqs, 0),
      s3Requests: { get: round(s3Get, 0), putListHead: round(s3Other, 0) },
      ...(counted
        ? { apiserverRequests: round(apiserver, 0), apiserverRequestsPerSecond: round(apiserver / 86_400) }
        : { apiserverRequests: 'not counted by this section' }),
      usd: { ...usd, total: round(usd.lambdaRequests + usd.lambdaCompute + usd.sqs + usd.s3) },
    },
    perLoop,
  };
}
