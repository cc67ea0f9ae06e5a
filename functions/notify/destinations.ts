/**
 * A Notification's destination with its credentials: spec.to[i] and the Secret it names, read
 * as the watched object's identity (the Release's ServiceAccount, impersonated: the same path as
 * every other tenant credential, adapters/kube/identity-reads.ts). A Secret that identity may
 * not read, a missing Secret or key is a failure that cannot be retried: the destination is
 * reported at once and nothing is sent. The values live in memory for one run only.
 */
import type { DataReader } from '../../adapters/kube/identity-reads.ts';
import type { NotificationDestination } from '../../domain/api/notification.ts';
import type { ResolvedDestination } from '../../domain/notify/event.ts';
import { ReadRefusedError } from '../../domain/tenancy/index.ts';

export type Resolved =
  | { readonly ok: true; readonly destination: ResolvedDestination }
  | { readonly ok: false; readonly retryable: boolean; readonly reason: string };

export interface ResolveContext {
  readonly namespace: string;
  /** Secrets as the watched object's identity. */
  readonly secrets: DataReader;
  /** The installation's event bus, for an eventBridge destination without busName. */
  readonly eventBus?: string | undefined;
  /** The repository of the render (a commit status without spec.to[].commitStatus.repository). */
  readonly sourceUrl?: string | undefined;
}

const refused = (reason: string): Resolved => ({ ok: false, retryable: false, reason });

async function secretKeys(
  ctx: ResolveContext,
  name: string,
): Promise<{ ok: true; data: Record<string, string> } | { ok: false; resolved: Resolved }> {
  try {
    const data = await ctx.secrets.secretData(ctx.namespace, name);
    if (data === undefined)
      return { ok: false, resolved: refused(`Secret ${ctx.namespace}/${name} not found`) };
    return { ok: true, data };
  } catch (error) {
    // Refused for the identity: named, never retried (the RBAC decides, not time).
    if (error instanceof ReadRefusedError) return { ok: false, resolved: refused(error.message) };
    return {
      ok: false,
      resolved: {
        ok: false,
        retryable: true,
        reason: `reading Secret ${ctx.namespace}/${name}: ${(error as Error).message}`,
      },
    };
  }
}

function key(
  data: Record<string, string>,
  name: string,
  secret: string,
  ctx: ResolveContext,
): string | Resolved {
  const value = data[name];
  return value === undefined || value === ''
    ? refused(`Secret ${ctx.namespace}/${secret} has no key ${name}`)
    : value;
}

export async function resolveDestination(
  to: NotificationDestination,
  ctx: ResolveContext,
): Promise<Resolved> {
  if (to.eventBridge !== undefined) {
    const busName = to.eventBridge.busName ?? ctx.eventBus;
    if (busName === undefined)
      return refused(
        'eventBridge names no busName and the installation sets no event bus (CONVOY_NOTIFY_EVENT_BUS)',
      );
    return { ok: true, destination: { type: 'eventBridge', busName } };
  }
  const secretName = (to.webhook ?? to.slack ?? to.commitStatus)?.secretRef.name;
  if (secretName === undefined) return refused('the destination names no type');
  const read = await secretKeys(ctx, secretName);
  if (!read.ok) return read.resolved;
  if (to.webhook !== undefined || to.slack !== undefined) {
    const url = key(read.data, 'url', secretName, ctx);
    if (typeof url !== 'string') return url;
    if (to.slack !== undefined) return { ok: true, destination: { type: 'slack', url } };
    const hmacKey = read.data['hmacKey'];
    return { ok: true, destination: { type: 'webhook', url, ...(hmacKey ? { hmacKey } : {}) } };
  }
  const status = to.commitStatus!;
  const token = key(read.data, 'token', secretName, ctx);
  if (typeof token !== 'string') return token;
  const repository = status.repository ?? repositoryOf(ctx.sourceUrl);
  if (repository === undefined)
    return refused('commitStatus names no repository and the render came from no Git URL to take it from');
  const apiUrl =
    status.apiUrl ?? (status.provider === 'github' ? 'https://api.github.com' : 'https://gitlab.com/api/v4');
  return {
    ok: true,
    destination: { type: 'commitStatus', provider: status.provider, token, apiUrl, repository },
  };
}

/** owner/repo of https://host/owner/repo(.git) or git@host:owner/repo(.git). */
export function repositoryOf(url: string | undefined): string | undefined {
  if (url === undefined) return undefined;
  const path =
    /^[\w.-]+@[\w.-]+:(.+)$/.exec(url)?.[1] ?? (URL.canParse(url) ? new URL(url).pathname : undefined);
  const trimmed = path
    ?.replace(/^\/+/, '')
    .replace(/\.git$/, '')
    .replace(/\/+$/, '');
  return trimmed === undefined || trimmed === '' ? undefined : trimmed;
}
