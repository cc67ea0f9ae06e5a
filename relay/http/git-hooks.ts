/**
 * POST /v1/hooks/git — the Git push webhook (GitHub, GitLab and Gitea formats,
 * HMAC checked) is built separately and plugged into createApiApp as
 * `deps.gitWebhook`. Until then the route answers 501 with the API's error shape.
 */

/** Handles one webhook delivery; it authenticates the sender itself (HMAC), not with a bearer token. */
export type GitWebhookHandler = (request: Request) => Promise<Response>;

export const gitWebhookNotImplemented: GitWebhookHandler = () =>
  Promise.resolve(
    Response.json(
      {
        error: 'NotImplemented',
        message: 'POST /v1/hooks/git is not available in this build; use POST /v1/namespaces/{ns}/releases/{name}/sync to trigger a Release',
      },
      { status: 501 },
    ),
  );
