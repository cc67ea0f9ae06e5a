// Stand-ins for a webhook receiver and Slack's incoming webhooks, real HTTP servers on loopback.
// The webhook receiver verifies X-Convoy-Signature-256 as docs/notifications.md tells receivers to
// (HMAC-SHA256 over "<timestamp>.<body>", constant-time compare, timestamp within 5 minutes); the
// Slack stand-in checks the message against Block Kit's published limits and answers as Slack does
// ("ok", or 400 with an error code such as invalid_blocks).
import { createHmac, timingSafeEqual } from 'node:crypto';
import { startReceiver, type Receiver, type Recorded } from './loopback-receiver.ts';

export interface WebhookReceiver extends Receiver {
  /** Deliveries whose signature verified (or all, when the receiver has no key). */
  readonly verified: Recorded[];
}

/** How a receiver checks a delivery: the recipe of docs/notifications.md. */
export function verifySignature(key: string, req: Recorded, nowSeconds: number): string | undefined {
  const timestamp = String(req.headers['x-convoy-timestamp'] ?? '');
  const signature = String(req.headers['x-convoy-signature-256'] ?? '');
  if (!/^\d+$/.test(timestamp)) return 'no timestamp';
  if (Math.abs(nowSeconds - Number(timestamp)) > 300) return 'timestamp outside 5 minutes (a replay?)';
  const expected = `sha256=${createHmac('sha256', key).update(`${timestamp}.${req.body}`).digest('hex')}`;
  const a = Buffer.from(expected);
  const b = Buffer.from(signature);
  return a.length === b.length && timingSafeEqual(a, b) ? undefined : 'signature does not verify';
}

export async function startWebhookReceiver(key?: string): Promise<WebhookReceiver> {
  const verified: Recorded[] = [];
  const receiver = await startReceiver((req, res) => {
    if (key !== undefined) {
      const problem = verifySignature(key, req, Math.floor(Date.now() / 1000));
      if (problem !== undefined) {
        res.writeHead(401).end(problem);
        return;
      }
    }
    verified.push(req);
    res.writeHead(204).end();
  });
  return Object.assign(receiver, { verified });
}

/** Block types Slack's Block Kit reference lists for messages. */
const BLOCK_TYPES = new Set([
  'actions',
  'context',
  'divider',
  'file',
  'header',
  'image',
  'input',
  'rich_text',
  'section',
  'video',
]);

type Json = Record<string, unknown>;

function textObject(t: unknown, max: number, where: string, plainOnly = false): string | undefined {
  const o = t as Json | undefined;
  if (typeof o !== 'object' || o === null) return `${where}: no text object`;
  if (o['type'] !== 'plain_text' && (plainOnly || o['type'] !== 'mrkdwn')) return `${where}: bad text type`;
  if (typeof o['text'] !== 'string' || o['text'].length === 0) return `${where}: empty text`;
  if (o['text'].length > max) return `${where}: text over ${max} characters`;
  return undefined;
}

function blockProblem(block: Json, i: number): string | undefined {
  const where = `blocks[${i}]`;
  if (!BLOCK_TYPES.has(String(block['type']))) return `${where}: unknown block type`;
  if (typeof block['block_id'] === 'string' && block['block_id'].length > 255)
    return `${where}: block_id too long`;
  switch (block['type']) {
    case 'header':
      return textObject(block['text'], 150, where, true);
    case 'section': {
      const fields = block['fields'] as unknown[] | undefined;
      if (block['text'] === undefined && fields === undefined)
        return `${where}: section without text or fields`;
      if (block['text'] !== undefined) {
        const p = textObject(block['text'], 3000, where);
        if (p !== undefined) return p;
      }
      if (fields !== undefined && (!Array.isArray(fields) || fields.length > 10))
        return `${where}: over 10 fields`;
      for (const [j, f] of (fields ?? []).entries()) {
        const p = textObject(f, 2000, `${where}.fields[${j}]`);
        if (p !== undefined) return p;
      }
      return undefined;
    }
    case 'context': {
      const elements = block['elements'] as unknown[];
      if (!Array.isArray(elements) || elements.length === 0 || elements.length > 10)
        return `${where}: 1–10 elements`;
      return undefined;
    }
    case 'actions': {
      const elements = block['elements'] as Json[];
      if (!Array.isArray(elements) || elements.length === 0 || elements.length > 25)
        return `${where}: 1–25 elements`;
      for (const e of elements) {
        if (e['type'] !== 'button') continue;
        const p = textObject(e['text'], 75, `${where}.button`, true);
        if (p !== undefined) return p;
        if (typeof e['url'] === 'string' && (e['url'].length > 3000 || !/^https?:\/\//.test(e['url'])))
          return `${where}: bad button url`;
      }
      return undefined;
    }
    default:
      return undefined;
  }
}

/** Why a payload is not a valid Block Kit message, or undefined. */
export function blockKitProblem(payload: unknown): string | undefined {
  const p = payload as Json;
  if (typeof p !== 'object' || p === null) return 'not an object';
  const blocks = p['blocks'];
  if (!Array.isArray(blocks) || blocks.length === 0) return 'no blocks';
  if (blocks.length > 50) return 'over 50 blocks';
  if (typeof p['text'] === 'string' && p['text'].length > 40_000) return 'text too long';
  for (const [i, b] of (blocks as Json[]).entries()) {
    const problem = blockProblem(b, i);
    if (problem !== undefined) return problem;
  }
  return undefined;
}

export interface SlackReceiver extends Receiver {
  readonly messages: Json[];
  /** Why the last refused payload was refused. */
  lastProblem: string | undefined;
}

/** Slack's incoming webhooks on loopback: POST /services/T…/B…/<secret>. */
export async function startSlackReceiver(): Promise<SlackReceiver> {
  const messages: Json[] = [];
  const state: { slack?: SlackReceiver } = {};
  const receiver = await startReceiver((req, res) => {
    if (req.method !== 'POST' || !req.path.startsWith('/services/')) {
      res.writeHead(404).end('no_service');
      return;
    }
    let payload: unknown;
    try {
      payload = JSON.parse(req.body);
    } catch {
      res.writeHead(400).end('invalid_payload');
      return;
    }
    const problem = blockKitProblem(payload);
    if (problem !== undefined) {
      if (state.slack) state.slack.lastProblem = problem;
      res.writeHead(400).end('invalid_blocks');
      return;
    }
    messages.push(payload as Json);
    res.writeHead(200, { 'content-type': 'text/html' }).end('ok');
  });
  state.slack = Object.assign(receiver, { messages, lastProblem: undefined as string | undefined });
  return state.slack;
}
