/**
 * Slack incoming webhooks: a Block Kit message (https://api.slack.com/block-kit) naming the object,
 * cluster, verdict, reason and render, with a button to the dashboard page when the installation
 * has one. Only https://hooks.slack.com/services/… URLs are sent to; `slackBaseUrl` (an installation
 * setting for `convoy dev` and tests, never a tenant's) adds one more accepted prefix.
 */
import { slackWebhookUrlProblem } from '../../domain/notify/destination-urls.ts';
import type { DeliveryResult, NotificationEvent } from '../../domain/notify/event.ts';
import type { Egress } from '../egress/client.ts';
import { failed, hostOf, post, statusResult } from './http.ts';

/** Slack's limits (Block Kit reference): header text 150, section text 3000, a field 2000, 50 blocks. */
const HEADER_MAX = 150;
const SECTION_MAX = 3000;
const FIELD_MAX = 2000;
const CONTEXT_MAX = 2000;

/** Slack's answer codes that waiting does not fix (https://api.slack.com/messaging/webhooks#handling_errors). */
const SLACK_CODE = /^[a-z_]{2,40}$/;

function clip(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

/** Slack mrkdwn escaping: &, < and > are control characters. */
function esc(text: string): string {
  return text.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;');
}

const ICONS: Record<string, string> = { ready: '✅', failure: '❌', wait: '⏳', suspended: '⏸️' };

function renderText(event: NotificationEvent): string {
  const r = event.render;
  if (r === undefined) return '—';
  const where = [r.repository, r.ref].filter((x) => x !== undefined && x !== '').join(' ');
  const rev = r.revision !== undefined ? `\`${r.revision.slice(0, 12)}\`` : '';
  return [where, rev].filter((x) => x !== '').join(' @ ') || '—';
}

/** The Block Kit message for one event (exported for tests and the docs' example). */
export function slackMessage(event: NotificationEvent): Record<string, unknown> {
  const o = event.object;
  const v = event.verdict;
  const icon = ICONS[v.kind] ?? 'ℹ️';
  const title = clip(`${icon} ${o.kind} ${o.namespace}/${o.name}: ${event.transition}`, HEADER_MAX);
  const field = (label: string, value: string) => ({
    type: 'mrkdwn',
    text: clip(`*${label}*\n${esc(value)}`, FIELD_MAX),
  });
  const fields = [
    field('Object', `${o.kind} ${o.namespace}/${o.name}`),
    field('Cluster', event.cluster ?? 'in-cluster'),
    field('Verdict', [v.kind, v.signal].filter((x) => x !== undefined).join(' · ')),
    field('Reason', v.reason ?? '—'),
    field('Render', renderText(event)),
  ];
  if (event.step !== undefined) {
    fields.push(field('Step', `${event.step.index}${event.step.name ? ` (${event.step.name})` : ''}`));
  }
  const blocks: Record<string, unknown>[] = [
    { type: 'header', text: { type: 'plain_text', text: title, emoji: true } },
    {
      type: 'section',
      text: { type: 'mrkdwn', text: clip(esc(v.message ?? `${event.transition}`), SECTION_MAX) },
      fields,
    },
  ];
  if (event.dashboardUrl !== undefined) {
    blocks.push({
      type: 'actions',
      elements: [
        {
          type: 'button',
          text: { type: 'plain_text', text: 'Open in dashboard' },
          url: event.dashboardUrl,
          action_id: 'convoy-dashboard',
        },
      ],
    });
  }
  const previous = event.previous !== undefined ? ` · was ${event.previous.kind}` : '';
  blocks.push({
    type: 'context',
    elements: [
      {
        type: 'mrkdwn',
        text: clip(`convoy · ${event.occurredAt}${previous} · delivery ${esc(event.id)}`, CONTEXT_MAX),
      },
    ],
  });
  // `text` is the fallback of notifications and screen readers.
  return { text: title, blocks };
}

export interface SlackContext {
  readonly egress: Egress;
  readonly timeoutMs: number;
  readonly slackBaseUrl?: string | undefined;
}

export async function deliverSlack(
  ctx: SlackContext,
  destination: { readonly url: string },
  event: NotificationEvent,
): Promise<DeliveryResult> {
  const problem = slackWebhookUrlProblem(destination.url, ctx.slackBaseUrl);
  if (problem !== undefined) return failed(false, `${problem} (not retried)`);
  const outcome = await post(ctx.egress, {
    url: destination.url,
    headers: { 'Content-Type': 'application/json; charset=utf-8' },
    body: JSON.stringify(slackMessage(event)),
    what: 'Slack',
    timeoutMs: ctx.timeoutMs,
  });
  if (!outcome.ok) return outcome.result;
  const { status, text } = outcome.answer;
  const result = statusResult('Slack', hostOf(destination.url), status);
  if (result === undefined || result.ok) return { ok: true };
  // Slack names what is wrong in a short code (invalid_payload, no_service, channel_is_archived, …).
  const code = text.trim();
  return SLACK_CODE.test(code) ? failed(result.retryable, `${result.reason}: ${code}`) : result;
}
