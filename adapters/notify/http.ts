/**
 * One notification POST through the egress client, and what its answer means for the delivery
 * loop: 2xx delivered; 408, 429 and 5xx retryable; any other answer not. A refused address is the
 * egress policy's own message (never retryable: the policy will not change by waiting), a timeout
 * or a broken connection is retryable. The answer's body is read bounded (a destination may answer
 * with gigabytes) and only ever used for a short error code, never copied into a reason whole.
 *
 * Reasons name the destination by its host only: a webhook or Slack URL carries its token in the
 * path, and a reason lands in status and Events.
 */
import type { IncomingMessage } from 'node:http';
import type { DeliveryResult } from '../../domain/notify/event.ts';
import type { Egress, EgressAnswer } from '../egress/client.ts';
import { EgressTimeoutError, describeFailure, egressRefusalOf, failureOf } from '../egress/errors.ts';

/** The most of an answer's body convoy reads (an error code fits; the rest is dropped unread). */
export const MAX_ANSWER_BYTES = 16 * 1024;

/** How long a destination has to answer, by default. */
export const DEFAULT_TIMEOUT_MS = 10_000;

export interface PostInput {
  readonly url: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
  /** What the reason calls the destination: "webhook", "Slack", "GitHub". */
  readonly what: string;
  readonly timeoutMs: number;
}

export interface PostAnswer {
  readonly status: number;
  /** At most MAX_ANSWER_BYTES of the body, as text. */
  readonly text: string;
}

export type PostOutcome =
  | { readonly ok: true; readonly answer: PostAnswer }
  | { readonly ok: false; readonly result: DeliveryResult & { ok: false } };

export function failed(retryable: boolean, reason: string): DeliveryResult & { ok: false } {
  return { ok: false, retryable, reason };
}

/** The host a reason names (never the path or query, where tokens live). */
export function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return 'an unparseable URL';
  }
}

/** At most `limit` bytes of a body; the rest is never read (the socket is closed). */
export async function readBounded(body: IncomingMessage | null, limit = MAX_ANSWER_BYTES): Promise<string> {
  if (body === null) return '';
  const declared = Number(body.headers['content-length'] ?? '0');
  if (declared > limit) {
    body.destroy();
    return '';
  }
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of body as AsyncIterable<Buffer>) {
      const room = limit - size;
      chunks.push(chunk.byteLength > room ? chunk.subarray(0, room) : chunk);
      size += Math.min(chunk.byteLength, room);
      if (size >= limit) break;
    }
  } catch {
    // A body cut short says nothing more than its status did: the status decides.
  } finally {
    body.destroy();
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** What an HTTP status means for a delivery, as a result (undefined: delivered). */
export function statusResult(what: string, host: string, status: number): DeliveryResult | undefined {
  if (status >= 200 && status < 300) return undefined;
  const retryable = status === 408 || status === 429 || status >= 500;
  const then = retryable ? 'will retry' : 'not retried: check the destination';
  return failed(retryable, `${what} ${host} answered HTTP ${status} (${then})`);
}

/** The result of a request that got no answer. */
export function errorResult(what: string, host: string, error: unknown): DeliveryResult & { ok: false } {
  const refusal = egressRefusalOf(error);
  if (refusal !== undefined) return failed(false, `${what} ${host}: ${refusal.message}`);
  const failure = error instanceof EgressTimeoutError ? 'timed out' : failureOf(error);
  const retryable = !failure.startsWith('TLS failure');
  return failed(retryable, `${what} ${host}: ${describeFailure(error)}${retryable ? ' (will retry)' : ''}`);
}

/**
 * POSTs `body` and reads the answer bounded. A redirect is followed by the egress client's rules
 * (credentials never leave their origin), but an answer from another origin is not a delivery:
 * convoy delivers to the URL it was given.
 */
export async function post(egress: Egress, input: PostInput): Promise<PostOutcome> {
  const host = hostOf(input.url);
  let answer: EgressAnswer;
  try {
    answer = await egress.send(input.url, {
      method: 'POST',
      headers: { 'User-Agent': 'convoy-notifications', ...input.headers },
      body: input.body,
      answerTimeoutMs: input.timeoutMs,
      idleTimeoutMs: input.timeoutMs,
      signal: AbortSignal.timeout(input.timeoutMs * 2),
    });
  } catch (error) {
    return { ok: false, result: errorResult(input.what, host, error) };
  }
  if (new URL(answer.url).origin !== new URL(input.url).origin) {
    answer.body?.destroy();
    return {
      ok: false,
      result: failed(
        false,
        `${input.what} ${host} redirected to another host (${hostOf(answer.url)}), which got no credentials; name the URL it redirects to (not retried)`,
      ),
    };
  }
  let text: string;
  try {
    text = await readBounded(answer.body);
  } catch (error) {
    return { ok: false, result: errorResult(input.what, host, error) };
  }
  return { ok: true, answer: { status: answer.status, text } };
}
