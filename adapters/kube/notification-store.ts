/**
 * Notifications on the management cluster, as the functions' identity: read one, list those of
 * a namespace, and update one's status. Every status write is a server-side apply by
 * convoy-notify carrying the resourceVersion it was computed from: the API server refuses it
 * (409) when the Notification changed since, and the update computes again from a fresh read.
 * That precondition is what lets two runs of the notify loop never both record (or claim) the
 * same thing (domain/notify/records.ts).
 */
import { API_GROUP, API_VERSION } from '../../domain/api/common.ts';
import {
  notificationStatusSchema,
  parseNotification,
  type Notification,
  type NotificationStatus,
} from '../../domain/api/notification.ts';
import { FieldManager } from '../../domain/status/field-managers.ts';
import { applyPatchText } from './apply-patch-text.ts';
import { notificationPath } from './convoy-paths.ts';
import { createKubeClient, KubeApiError, PATCH_CONTENT_TYPES } from './http.ts';
import type { KubeClientConfig } from './kubeconfig.ts';
import { isNotFound } from './management-reader.ts';

/** Tries of one status update before its run fails (and its message comes back). */
const MAX_TRIES = 5;

export class NotificationInvalidError extends Error {
  override name = 'NotificationInvalidError';
}

export interface NotificationStore {
  /** undefined: no such Notification. @throws NotificationInvalidError naming the field. */
  get(namespace: string, name: string): Promise<Notification | undefined>;
  /** The Notifications of a namespace that parse; one that does not is left out (admission refuses it). */
  list(namespace: string): Promise<Notification[]>;
  /**
   * Computes the next status from the live Notification and writes it, again from a fresh read
   * when another writer came first. `next` returns undefined to write nothing. The result: what
   * `next` returned on the read that was written (or not), with the Notification it was computed from.
   */
  update<T>(
    namespace: string,
    name: string,
    next: (current: Notification) => { status: NotificationStatus | undefined; result: T },
  ): Promise<{ result: T; notification: Notification } | undefined>;
}

export function createNotificationStore(config: KubeClientConfig): NotificationStore {
  const client = createKubeClient(config);
  const get = async (namespace: string, name: string): Promise<Notification | undefined> => {
    let raw: unknown;
    try {
      raw = await client.get<unknown>(notificationPath(namespace, name));
    } catch (error) {
      if (isNotFound(error)) return undefined;
      throw error;
    }
    const parsed = parseNotification(raw);
    if (!parsed.ok)
      throw new NotificationInvalidError(`Notification ${namespace}/${name} does not parse: ${parsed.error}`);
    return parsed.value;
  };
  const write = async (
    current: Notification,
    status: NotificationStatus,
  ): Promise<'written' | 'conflict'> => {
    const checked = notificationStatusSchema.safeParse(status);
    if (!checked.success)
      throw new Error(
        `the convoy-notify status of Notification ${current.metadata.namespace ?? ''}/${current.metadata.name} is not valid for its CRD, so it was not sent: ${checked.error.issues[0]?.path.join('.') ?? ''}: ${checked.error.issues[0]?.message ?? ''}`,
      );
    const path = notificationPath(current.metadata.namespace, current.metadata.name, 'status');
    const body = {
      apiVersion: `${API_GROUP}/${API_VERSION}`,
      kind: 'Notification',
      metadata: {
        name: current.metadata.name,
        namespace: current.metadata.namespace,
        resourceVersion: current.metadata.resourceVersion,
      },
      status,
    };
    const response = await client.http({
      method: 'PATCH',
      path,
      body: applyPatchText(body),
      contentType: PATCH_CONTENT_TYPES.apply,
      query: { fieldManager: FieldManager.notify, force: 'true' },
    });
    if (response.status === 409) return 'conflict';
    if (response.status < 200 || response.status > 299)
      throw new KubeApiError(
        `PATCH ${path}: HTTP ${response.status}${serverMessage(response.body)}`,
        response,
      );
    return 'written';
  };
  return {
    get,
    async list(namespace) {
      const { items } = await client.list<unknown>(notificationPath(namespace));
      return items.flatMap((raw) => {
        const parsed = parseNotification(raw);
        return parsed.ok ? [parsed.value] : [];
      });
    },
    async update(namespace, name, next) {
      for (let attempt = 1; ; attempt++) {
        const current = await get(namespace, name);
        if (current === undefined) return undefined;
        const { status, result } = next(current);
        if (status === undefined) return { result, notification: current };
        if ((await write(current, status)) === 'written') return { result, notification: current };
        if (attempt >= MAX_TRIES)
          throw new Error(
            `the status of Notification ${namespace}/${name} changed under ${MAX_TRIES} writes in a row; the message comes back`,
          );
      }
    },
  };
}

function serverMessage(body: unknown): string {
  const message = (body as { message?: unknown } | undefined)?.message;
  return typeof message === 'string' && message !== '' ? `: ${message.slice(0, 500)}` : '';
}
