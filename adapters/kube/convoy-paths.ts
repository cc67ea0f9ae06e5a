// The REST paths of convoy's own kinds, built in one place: the functions, the relay and the CLI
// all read and write Releases and ReleaseSets through these.
import { GROUP_VERSION } from '../../domain/api/group-version.ts';
import { resourcePath } from './http.ts';

export type ConvoyPlural =
  'releases' | 'releasesets' | 'clusters' | 'gitrepositories' | 'mutations' | 'lifecycles' | 'notifications';

/** An object of a convoy kind; without `name` the collection of `namespace` (every namespace without one). */
export const convoyPath = (
  plural: ConvoyPlural,
  namespace?: string,
  name?: string,
  subresource?: 'status',
): string => resourcePath(GROUP_VERSION, plural, namespace, name, subresource);

/** A Release, its status, or the Releases of a namespace (every namespace without one). */
export const releasePath = (namespace?: string, name?: string, subresource?: 'status'): string =>
  convoyPath('releases', namespace, name, subresource);

/** A ReleaseSet, its status, or the ReleaseSets of a namespace (every namespace without one). */
export const releaseSetPath = (namespace?: string, name?: string, subresource?: 'status'): string =>
  convoyPath('releasesets', namespace, name, subresource);

/** A Notification, its status, or the Notifications of a namespace (every namespace without one). */
export const notificationPath = (namespace?: string, name?: string, subresource?: 'status'): string =>
  convoyPath('notifications', namespace, name, subresource);
