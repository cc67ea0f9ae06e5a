// The API group and version of every convoy kind, without the schemas (no zod): for code that only
// builds a path, such as the CLI's `get` (cli/kube.ts), whose start time the schemas would double.

/** The API group and version of every convoy kind. */
export const API_GROUP = 'convoy.dev';
export const API_VERSION = 'v1alpha1';
export const GROUP_VERSION = `${API_GROUP}/${API_VERSION}`;
