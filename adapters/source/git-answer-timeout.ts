import type { HttpClient } from 'isomorphic-git';

export const GIT_ANSWER_TIMEOUT_MS = 60_000;

/**
 * isomorphic-git's node client has no timeout: a server that accepts the
 * connection and never answers would hold the reconcile until the function
 * itself times out. This gives up waiting for the answer after `ms`.
 */
export function withAnswerTimeout(client: HttpClient, ms: number): HttpClient {
  return {
    request: async (req) => {
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no answer within ${Math.round(ms / 1000)} s`)), ms);
      });
      try {
        return await Promise.race([client.request(req), timeout]);
      } finally {
        clearTimeout(timer);
      }
    },
  };
}
