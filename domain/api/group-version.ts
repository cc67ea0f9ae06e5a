// The API group and version of every convoy kind, without the schemas (no zod): for code that only
// builds a path (adapters/kube/convoy-paths.ts), which the CLI's `get` loads: the schemas would double its start time.

/** The API group and version of every convoy kind. */
export const API_GROUP = 'convoy.dev';
export const API_VERSION = 'v1alpha1';
export const GROUP_VERSION = `${API_GROUP}/${API_VERSION}`;
