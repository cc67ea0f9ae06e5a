// The destination URL checks and the repository a commit status goes to, from a render's source URL.
import { describe, expect, it } from 'vitest';
import {
  repositoryFromUrl,
  slackWebhookUrlProblem,
  webhookUrlProblem,
} from '../../../domain/notify/destination-urls.ts';

describe('destination URLs', () => {
  it.each([
    ['github', 'https://github.com/acme/web.git', 'acme/web'],
    ['github', 'https://github.com/acme/web', 'acme/web'],
    ['github', 'git@github.com:acme/web.git', 'acme/web'],
    ['github', 'ssh://git@github.com/acme/web.git', 'acme/web'],
    ['github', 'https://github.com/acme/web/tree/main', undefined],
    ['github', 'https://github.com/acme/../web', undefined],
    ['gitlab', 'https://gitlab.com/acme/platform/web.git', 'acme/platform/web'],
    ['gitlab', 'git@gitlab.example.com:acme/web.git', 'acme/web'],
    ['gitlab', 'https://gitlab.com/web', undefined],
    ['gitlab', 'not a url', undefined],
  ] as const)('%s repository of %s is %s', (provider, url, repository) => {
    expect(repositoryFromUrl(provider, url)).toBe(repository);
  });

  it('a Slack URL must be an incoming webhook on hooks.slack.com, or under the installation-only extra base; no message repeats the URL', () => {
    expect(slackWebhookUrlProblem('https://hooks.slack.com/services/T1/B2/secretpart')).toBeUndefined();
    for (const url of [
      'http://hooks.slack.com/services/T1/B2/secretpart',
      'https://hooks.slack.com.evil.test/services/T1/B2/secretpart',
      'https://hooks.slack.com/workflows/T1/secretpart',
      'https://user:pw@hooks.slack.com/services/T1/B2/secretpart',
      'https://hooks.slack.com/services/secretpart',
      'secretpart',
    ]) {
      const problem = slackWebhookUrlProblem(url);
      expect(problem, url).toBeDefined();
      expect(problem, url).not.toContain('secretpart');
    }
    expect(
      slackWebhookUrlProblem('http://127.0.0.1:9/services/T/B/x', 'http://127.0.0.1:9/services/'),
    ).toBeUndefined();
    expect(slackWebhookUrlProblem('http://127.0.0.1:9/other', 'http://127.0.0.1:9/services/')).toBeDefined();
  });

  it('a webhook URL is http(s) without user info', () => {
    expect(webhookUrlProblem('https://example.com/hook/secretpart')).toBeUndefined();
    expect(webhookUrlProblem('ftp://example.com/secretpart')).toBe('the webhook URL is not http(s)');
    expect(webhookUrlProblem('https://u:secretpart@example.com/')).toMatch(/user info/);
    expect(webhookUrlProblem('::secretpart')).toBe('the webhook URL does not parse');
  });
});
