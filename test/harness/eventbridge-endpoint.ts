// An EventBridge endpoint on loopback implementing PutEvents as AWS documents it (no AWS is
// reachable here): the AWS JSON 1.1 protocol — POST /, Content-Type application/x-amz-json-1.1,
// X-Amz-Target AWSEvents.PutEvents, a SigV4 Authorization header (present and well-formed; the
// signature itself is not checked) — and the request shape of
// https://docs.aws.amazon.com/eventbridge/latest/APIReference/API_PutEvents.html: 1–10 entries, each
// with Source, DetailType and Detail (a JSON object), at most 256 KB. Entries on the buses it
// knows are recorded; a bus it does not know is ResourceNotFoundException; `entryErrors` makes a
// bus's entries fail with an ErrorCode, as PutEvents reports them (FailedEntryCount > 0).
import { randomUUID } from 'node:crypto';
import { json, startReceiver, type Receiver } from './loopback-receiver.ts';

export interface PutEntry {
  readonly EventBusName?: string;
  readonly Source: string;
  readonly DetailType: string;
  readonly Detail: string;
  readonly Time?: number;
  readonly Resources?: string[];
}

export interface EventBridgeEndpoint extends Receiver {
  readonly entries: PutEntry[];
  /** Bus name → the ErrorCode its entries fail with. */
  readonly entryErrors: Map<string, string>;
}

function entryProblem(e: Record<string, unknown>, i: number): string | undefined {
  for (const field of ['Source', 'DetailType', 'Detail']) {
    if (typeof e[field] !== 'string' || e[field] === '') return `Entries.${i}.${field} is required`;
  }
  if (e['Time'] !== undefined && typeof e['Time'] !== 'number')
    return `Entries.${i}.Time must be epoch seconds`;
  let detail: unknown;
  try {
    detail = JSON.parse(e['Detail'] as string);
  } catch {
    return `Entries.${i}.Detail is not JSON`;
  }
  if (typeof detail !== 'object' || detail === null || Array.isArray(detail))
    return `Entries.${i}.Detail is not an object`;
  const size =
    14 + ['Source', 'DetailType', 'Detail'].reduce((n, f) => n + Buffer.byteLength(e[f] as string), 0);
  if (size > 256 * 1024) return `Entries.${i} is over 256 KB`;
  return undefined;
}

const busOf = (e: Record<string, unknown>): string =>
  typeof e['EventBusName'] === 'string' ? e['EventBusName'] : 'default';

export async function startEventBridgeEndpoint(buses: readonly string[]): Promise<EventBridgeEndpoint> {
  const entries: PutEntry[] = [];
  const entryErrors = new Map<string, string>();
  const receiver = await startReceiver((req, res) => {
    const error = (status: number, type: string, message: string) =>
      json(res, status, { __type: type, message }, { 'content-type': 'application/x-amz-json-1.1' });
    if (req.method !== 'POST' || req.path !== '/')
      return error(404, 'UnknownOperationException', 'not found');
    if (req.headers['x-amz-target'] !== 'AWSEvents.PutEvents')
      return error(400, 'UnknownOperationException', 'not PutEvents');
    if (req.headers['content-type'] !== 'application/x-amz-json-1.1')
      return error(400, 'SerializationException', 'content type');
    if (
      !/^AWS4-HMAC-SHA256 Credential=\S+\/\d{8}\/[\w-]+\/events\/aws4_request, SignedHeaders=\S+, Signature=[0-9a-f]{64}$/.test(
        String(req.headers.authorization ?? ''),
      )
    ) {
      return error(400, 'MissingAuthenticationTokenException', 'no SigV4 signature');
    }
    let body: { Entries?: Record<string, unknown>[] };
    try {
      body = JSON.parse(req.body) as typeof body;
    } catch {
      return error(400, 'SerializationException', 'body is not JSON');
    }
    const list = body.Entries;
    if (!Array.isArray(list) || list.length < 1 || list.length > 10)
      return error(400, 'ValidationException', 'Entries: 1 to 10');
    for (const [i, e] of list.entries()) {
      const problem = entryProblem(e, i);
      if (problem !== undefined) return error(400, 'ValidationException', problem);
      const bus = busOf(e);
      if (!buses.includes(bus))
        return error(400, 'ResourceNotFoundException', `Event bus ${bus} does not exist.`);
    }
    const results = list.map((e) => {
      const code = entryErrors.get(busOf(e));
      if (code !== undefined) return { ErrorCode: code, ErrorMessage: code };
      entries.push(e as unknown as PutEntry);
      return { EventId: randomUUID() };
    });
    json(
      res,
      200,
      { FailedEntryCount: results.filter((r) => 'ErrorCode' in r).length, Entries: results },
      { 'content-type': 'application/x-amz-json-1.1' },
    );
  });
  return Object.assign(receiver, { entries, entryErrors });
}
