/**
 * What a destination's URLs must look like, checked where the URL is known: the adapters before a
 * delivery, and admission where the URL is in the object rather than in a Secret. Pure, and no
 * message repeats the URL: a webhook or Slack URL carries its token in the path.
 */

/** Where Slack serves incoming webhooks (https://api.slack.com/messaging/webhooks). */
export const SLACK_WEBHOOK_BASE = 'https://hooks.slack.com/services/';

/**
 * Why `url` is not a Slack incoming-webhook URL, or undefined when it is. `extraBase` is a second
 * accepted prefix the installation may set for a local Slack stand-in (`convoy dev`, tests); a
 * tenant never sets it.
 */
export function slackWebhookUrlProblem(url: string, extraBase?: string): string | undefined {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return 'the Slack webhook URL does not parse';
  }
  if (parsed.username !== '' || parsed.password !== '') return 'the Slack webhook URL carries user info';
  if (extraBase !== undefined && extraBase !== '' && parsed.href.startsWith(extraBase)) return undefined;
  if (parsed.protocol !== 'https:' || parsed.host !== 'hooks.slack.com') {
    return `the URL is not a Slack incoming-webhook URL: it must start with ${SLACK_WEBHOOK_BASE}`;
  }
  if (!parsed.pathname.startsWith('/services/') || parsed.pathname.split('/').filter(Boolean).length < 4) {
    return `the URL is not a Slack incoming-webhook URL: it must look like ${SLACK_WEBHOOK_BASE}T…/B…/…`;
  }
  return undefined;
}

/** Why `url` cannot be a webhook destination, or undefined (http or https, no user info). */
export function webhookUrlProblem(url: string): string | undefined {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return 'the webhook URL does not parse';
  }
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') return 'the webhook URL is not http(s)';
  if (parsed.username !== '' || parsed.password !== '') {
    return 'the webhook URL carries user info (user:password@); put a token in the path or use the HMAC key';
  }
  return undefined;
}

export type ForgeProvider = 'github' | 'gitlab';

/**
 * The repository a commit status goes to, from the source URL a render came from:
 * `owner/repo` on GitHub, the project path (`group/subgroup/project`) on GitLab. Accepts
 * https://host/owner/repo(.git), ssh://git@host/owner/repo.git and git@host:owner/repo.git.
 * Undefined when the URL names no repository of that shape.
 */
export function repositoryFromUrl(provider: ForgeProvider, url: string): string | undefined {
  const scp = /^[\w.-]+@([\w.-]+):(?!\/)(.+)$/.exec(url);
  let path: string;
  if (scp !== null) path = scp[2] ?? '';
  else {
    try {
      path = new URL(url).pathname;
    } catch {
      return undefined;
    }
  }
  const parts = path
    .replace(/\.git\/?$/, '')
    .split('/')
    .filter((p) => p !== '');
  if (parts.some((p) => p === '.' || p === '..' || !/^[\w.~-]+$/.test(p))) return undefined;
  if (provider === 'github') return parts.length === 2 ? parts.join('/') : undefined;
  return parts.length >= 2 ? parts.join('/') : undefined;
}
