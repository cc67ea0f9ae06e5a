/**
 * Commit statuses on GitHub (POST /repos/{owner}/{repo}/statuses/{sha},
 * https://docs.github.com/en/rest/commits/statuses) and GitLab (POST /projects/{id}/statuses/{sha},
 * https://docs.gitlab.com/ee/api/commits.html#set-the-pipeline-status-of-a-commit) for the commit a
 * render came from.
 *
 * The context (GitHub `context`, GitLab `name`) is `convoy/<namespace>/<name>@<cluster>`: one per
 * object and cluster, so several clusters deploying one commit never overwrite each other's status.
 * The token goes in `Authorization` (GitLab accepts a personal or project access token as a Bearer
 * token), the one header the egress client never carries to another origin on a redirect.
 */
import { repositoryFromUrl } from '../../domain/notify/destination-urls.ts';
import type { DeliveryResult, NotificationEvent } from '../../domain/notify/event.ts';
import type { Egress } from '../egress/client.ts';
import { failed, hostOf, post, statusResult } from './http.ts';

export const DESCRIPTION_MAX = 140;
export const CONTEXT_MAX = 255;

type GitHubState = 'pending' | 'success' | 'failure' | 'error';
type GitLabState = 'pending' | 'running' | 'success' | 'failed' | 'canceled';

/**
 * The verdict as a status: wait → pending (GitLab: running, its "in progress"), ready → success,
 * failure → failure (GitLab: failed), suspended → error (GitLab: canceled: convoy stopped acting).
 */
export function commitState(provider: 'github' | 'gitlab', verdict: string): GitHubState | GitLabState {
  const github: Record<string, GitHubState> = {
    wait: 'pending',
    ready: 'success',
    failure: 'failure',
    suspended: 'error',
  };
  const gitlab: Record<string, GitLabState> = {
    wait: 'running',
    ready: 'success',
    failure: 'failed',
    suspended: 'canceled',
  };
  return provider === 'github' ? (github[verdict] ?? 'pending') : (gitlab[verdict] ?? 'pending');
}

export function statusContext(event: NotificationEvent): string {
  const o = event.object;
  const at = event.cluster !== undefined && event.cluster !== '' ? `@${event.cluster}` : '';
  return `convoy/${o.namespace}/${o.name}${at}`.slice(0, CONTEXT_MAX);
}

export function statusDescription(event: NotificationEvent): string {
  const v = event.verdict;
  const text = [event.transition, v.reason, v.message].filter((x) => x !== undefined && x !== '').join(': ');
  return text.length <= DESCRIPTION_MAX ? text : `${text.slice(0, DESCRIPTION_MAX - 1)}…`;
}

export interface CommitStatusContext {
  readonly egress: Egress;
  readonly timeoutMs: number;
}

export interface CommitStatusDestination {
  readonly provider: 'github' | 'gitlab';
  readonly token: string;
  readonly apiUrl: string;
  readonly repository: string;
}

/** The request of one status, or why there is none to send. */
function statusRequest(
  destination: CommitStatusDestination,
  event: NotificationEvent,
): { url: string; body: Record<string, unknown> } | { problem: string } {
  const { provider } = destination;
  const revision = event.render?.revision;
  if (revision === undefined || !/^[0-9a-f]{40}([0-9a-f]{24})?$/i.test(revision)) {
    return {
      problem: `${provider} commit status: the event names no commit (render.revision is ${revision === undefined ? 'absent' : 'not a full commit SHA'}); a commit status needs the commit a render came from`,
    };
  }
  const repository =
    destination.repository !== ''
      ? destination.repository
      : repositoryFromUrl(provider, event.render?.repository ?? '');
  if (repository === undefined) {
    return {
      problem: `${provider} commit status: the destination names no repository and the render's source URL is not a ${provider} repository URL`,
    };
  }
  let base: URL;
  try {
    base = new URL(destination.apiUrl);
  } catch {
    return { problem: `${provider} commit status: the API URL does not parse` };
  }
  if (base.protocol !== 'https:' && base.protocol !== 'http:') {
    return { problem: `${provider} commit status: the API URL is not http(s)` };
  }
  const root = base.href.replace(/\/+$/, '');
  const common = {
    description: statusDescription(event),
    ...(event.dashboardUrl ? { target_url: event.dashboardUrl } : {}),
  };
  const state = commitState(provider, event.verdict.kind);
  if (provider === 'github') {
    const [owner = '', repo = ''] = repository.split('/');
    return {
      url: `${root}/repos/${encodeURIComponent(owner)}/${encodeURIComponent(repo)}/statuses/${revision}`,
      body: { state, context: statusContext(event), ...common },
    };
  }
  return {
    url: `${root}/projects/${encodeURIComponent(repository)}/statuses/${revision}`,
    body: { state, name: statusContext(event), ...common },
  };
}

export async function deliverCommitStatus(
  ctx: CommitStatusContext,
  destination: CommitStatusDestination,
  event: NotificationEvent,
): Promise<DeliveryResult> {
  const request = statusRequest(destination, event);
  if ('problem' in request) return failed(false, `${request.problem} (not retried)`);
  const what = destination.provider === 'github' ? 'GitHub' : 'GitLab';
  const headers: Record<string, string> = {
    'Content-Type': 'application/json',
    Authorization: `Bearer ${destination.token}`,
  };
  if (destination.provider === 'github') {
    headers['Accept'] = 'application/vnd.github+json';
    headers['X-GitHub-Api-Version'] = '2022-11-28';
  }
  const outcome = await post(ctx.egress, {
    url: request.url,
    headers,
    body: JSON.stringify(request.body),
    what,
    timeoutMs: ctx.timeoutMs,
  });
  if (!outcome.ok) return outcome.result;
  const { status, text } = outcome.answer;
  // GitLab refuses to set the state a status already has ("Cannot transition status via :run from
  // :running"): the commit already shows what convoy would send.
  if (destination.provider === 'gitlab' && status === 400 && text.includes('Cannot transition status via')) {
    return { ok: true };
  }
  const result = statusResult(what, hostOf(request.url), status);
  if (result === undefined) return { ok: true };
  if (status === 401 || status === 403) {
    return failed(
      false,
      `${what} ${hostOf(request.url)} refused the token (HTTP ${status}): it needs the right to set commit statuses on the repository (not retried)`,
    );
  }
  return result;
}
