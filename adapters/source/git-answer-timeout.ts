import { nodeHttp } from '../node-http.ts';
import { Agent as HttpsAgent } from 'node:https';
import type { HttpClient } from 'isomorphic-git';

export const GIT_ANSWER_TIMEOUT_MS = 60_000;

/**
 * isomorphic-git's node client has no timeout: a server that accepts the
 * connection and never answers would hold the reconcile until the function
 * itself times out. This gives up waiting for the answer after `ms`.
 *
 * It also gives each request an agent whose sockets time out after `ms`, not
 * the 5 s of node's global agent (keep-alive, `timeout: 5000` since Node 19):
 * through that agent a server that took more than 5 s to start answering
 * failed every fetch with "Request timed out", however long convoy meant to
 * wait. Without keep-alive: a wrapper lives for one fetch, and its idle sockets
 * would otherwise stay open for `ms`. A request that brings its own agent keeps it.
 */
export function withAnswerTimeout(client: HttpClient, ms: number): HttpClient {
  const agents = { http: new nodeHttp.Agent({ keepAlive: false, timeout: ms }), https: new HttpsAgent({ keepAlive: false, timeout: ms }) };
  return {
    request: async (req) => {
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no answer within ${Math.round(ms / 1000)} s`)), ms);
      });
      const agent: unknown = req.agent ?? (req.url.startsWith('https:') ? agents.https : agents.http);
      try {
        return await Promise.race([client.request({ ...req, agent }), timeout]);
      } finally {
        clearTimeout(timer);
      }
    },
  };
}
