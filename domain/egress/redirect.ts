/**
 * What an outbound request may follow, and what it carries there:
 * - a URL must be http(s), name a host without a trailing dot and carry no user info (credentials
 *   travel in headers the caller controls, never in a URL a server handed back);
 * - a redirect goes to the same scheme or a stronger one (http → https), never https → http;
 * - at most MAX_REDIRECTS hops, no URL twice (a loop);
 * - credentials (Authorization and the caller's CA) go only to the origin they were meant for:
 *   a hop to another origin goes without them.
 * Every hop is checked against the egress policy again (the adapter connects through it).
 * Pure: URL is the WHATWG parser, no network.
 */

export const MAX_REDIRECTS = 5;

export type UrlProblem = 'scheme' | 'userinfo' | 'trailing-dot' | 'unparseable';

/** Why a URL is not one convoy connects to, for messages; undefined when it is fine. */
export function urlProblem(url: URL): UrlProblem | undefined {
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return 'scheme';
  if (url.username !== '' || url.password !== '') return 'userinfo';
  if (url.hostname.endsWith('.')) return 'trailing-dot';
  return undefined;
}

export function describeUrlProblem(problem: UrlProblem, url: string): string {
  switch (problem) {
    case 'scheme':
      return `${url} is not an http(s) URL`;
    case 'userinfo':
      return 'the URL carries user info (user:password@); convoy does not send credentials written into a URL it is given or redirected to';
    case 'trailing-dot':
      return 'the host ends in a dot; write it without the trailing dot';
    case 'unparseable':
      return 'the URL does not parse';
  }
}

export type RedirectStep =
  | { readonly ok: true; readonly url: URL; readonly sameOrigin: boolean }
  | { readonly ok: false; readonly reason: string };

/**
 * The next hop of a redirect from `from` (the URL answered 3xx with `location`), given the URLs
 * already visited (the first request's included) and the origin credentials were meant for.
 */
export function redirectStep(
  from: URL,
  location: string,
  visited: readonly string[],
  credentialsOrigin: string,
): RedirectStep {
  let next: URL;
  try {
    next = new URL(location, from);
  } catch {
    return { ok: false, reason: 'redirected to a location that does not parse' };
  }
  next.hash = '';
  const problem = urlProblem(next);
  if (problem === 'scheme')
    return {
      ok: false,
      reason: `redirected to a ${next.protocol.replace(/:$/, '')} URL; only http(s) is followed`,
    };
  if (problem !== undefined)
    return {
      ok: false,
      reason: `redirected to a URL convoy does not follow: ${describeUrlProblem(problem, '')}`,
    };
  if (from.protocol === 'https:' && next.protocol === 'http:') {
    return {
      ok: false,
      reason:
        'redirected from HTTPS to plain HTTP; convoy follows redirects to the same scheme or HTTPS only',
    };
  }
  if (visited.includes(next.href)) return { ok: false, reason: 'redirect loop' };
  if (visited.length > MAX_REDIRECTS) return { ok: false, reason: `more than ${MAX_REDIRECTS} redirects` };
  return { ok: true, url: next, sameOrigin: next.origin === credentialsOrigin };
}

/** Headers that carry credentials: never sent to an origin they were not meant for. */
export const CREDENTIAL_HEADERS: readonly string[] = ['authorization', 'cookie', 'proxy-authorization'];

/** The headers for a hop: without credentials when the hop leaves their origin. */
export function headersForHop(
  headers: Readonly<Record<string, string>>,
  sameOrigin: boolean,
): Record<string, string> {
  if (sameOrigin) return { ...headers };
  return Object.fromEntries(
    Object.entries(headers).filter(([name]) => !CREDENTIAL_HEADERS.includes(name.toLowerCase())),
  );
}
