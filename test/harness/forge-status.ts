// GitHub's and GitLab's commit status endpoints on loopback, checking each request against the
// documented fields: GitHub POST /repos/{owner}/{repo}/statuses/{sha} (state pending|success|
// failure|error, context, description ≤ 140 characters, target_url), GitLab
// POST /api/v4/projects/{id}/statuses/{sha} (state pending|running|success|failed|canceled, name,
// description, target_url), a token in Authorization. Statuses are kept per commit and context as
// the forges keep them (a second status with the same context replaces the first); GitLab's
// refusal to set the state a status already has is played too.
import { json, startReceiver, type Receiver } from './loopback-receiver.ts';

export interface CommitStatus {
  readonly provider: 'github' | 'gitlab';
  readonly repository: string;
  readonly sha: string;
  readonly state: string;
  readonly context: string;
  readonly description?: string;
  readonly targetUrl?: string;
}

export interface ForgeStatusApi extends Receiver {
  /** Every accepted status, in order. */
  readonly statuses: CommitStatus[];
  /** The current status per `<repository>@<sha>#<context>`. */
  readonly current: Map<string, CommitStatus>;
}

const GITHUB = new Set(['pending', 'success', 'failure', 'error']);
const GITLAB = new Set(['pending', 'running', 'success', 'failed', 'canceled']);

function fieldsProblem(
  body: Record<string, unknown>,
  states: Set<string>,
  contextField: string,
): string | undefined {
  if (!states.has(String(body['state']))) return `state must be one of ${[...states].join(', ')}`;
  const context = body[contextField];
  if (typeof context !== 'string' || context.length === 0 || context.length > 255)
    return `${contextField}: 1–255 characters`;
  const description = body['description'];
  if (description !== undefined && (typeof description !== 'string' || description.length > 140))
    return 'description is too long (maximum is 140 characters)';
  const target = body['target_url'];
  if (target !== undefined && (typeof target !== 'string' || !/^https?:\/\//.test(target)))
    return 'target_url is not a URL';
  return undefined;
}

export async function startForgeStatusApi(token: string): Promise<ForgeStatusApi> {
  const statuses: CommitStatus[] = [];
  const current = new Map<string, CommitStatus>();
  const receiver = await startReceiver((req, res) => {
    const github = /^\/repos\/([\w.-]+)\/([\w.-]+)\/statuses\/([0-9a-f]{40})$/.exec(req.path);
    const gitlab = /^\/api\/v4\/projects\/([^/]+)\/statuses\/([0-9a-f]{40})$/.exec(req.path);
    if (req.method !== 'POST' || (!github && !gitlab)) return json(res, 404, { message: 'Not Found' });
    if (req.headers.authorization !== `Bearer ${token}`)
      return json(res, 401, { message: 'Bad credentials' });
    if (github && req.headers['user-agent'] === undefined)
      return json(res, 403, { message: 'User-Agent required' });
    let body: Record<string, unknown>;
    try {
      body = JSON.parse(req.body) as Record<string, unknown>;
    } catch {
      return json(res, 400, { message: 'Problems parsing JSON' });
    }
    const provider = github ? 'github' : 'gitlab';
    const problem = github ? fieldsProblem(body, GITHUB, 'context') : fieldsProblem(body, GITLAB, 'name');
    if (problem !== undefined) return json(res, github ? 422 : 400, { message: problem });
    const repository = github ? `${github[1]}/${github[2]}` : decodeURIComponent(gitlab?.[1] ?? '');
    const status: CommitStatus = {
      provider,
      repository,
      sha: (github ? github[3] : gitlab?.[2]) ?? '',
      state: String(body['state']),
      context: String(github ? body['context'] : body['name']),
      ...(typeof body['description'] === 'string' ? { description: body['description'] } : {}),
      ...(typeof body['target_url'] === 'string' ? { targetUrl: body['target_url'] } : {}),
    };
    const key = `${repository}@${status.sha}#${status.context}`;
    if (!github && current.get(key)?.state === status.state) {
      return json(res, 400, { message: `Cannot transition status via :run from :${status.state}` });
    }
    current.set(key, status);
    statuses.push(status);
    json(res, 201, { id: statuses.length, state: status.state, context: status.context });
  });
  return Object.assign(receiver, { statuses, current });
}
