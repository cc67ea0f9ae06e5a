/**
 * Who may depend on a namespace's Releases and ReleaseSets. A dependency reveals its verdict
 * (ready or not) to the dependent's status, so a Release may wait only for objects of its own
 * namespace, or of a namespace that says it may: the label `convoy.dev/dependable-from` with the
 * value `all` or the dependent's namespace, or `dependable-from.convoy.dev/<dependent namespace>:
 * "true"` (one label per namespace, when several may). The installation's crossNamespaceRefs does
 * not open this: it is about what convoy may read for a tenant, not what one tenant may learn of
 * another (docs/security.md).
 */
export const DEPENDABLE_FROM_LABEL = 'convoy.dev/dependable-from';
export const DEPENDABLE_FROM_PREFIX = 'dependable-from.convoy.dev/';

/** The rule a refusal names, as users read it in Applied's message. */
export const DEPENDABLE_FROM_RULE = `namespace label ${DEPENDABLE_FROM_LABEL}: all|<namespace> or ${DEPENDABLE_FROM_PREFIX}<namespace>: "true"`;

/** Whether a Release of `from` may depend on an object of `to`, given the labels of namespace `to` (undefined: not found). */
export function dependableFrom(
  from: string,
  to: string,
  labels: Readonly<Record<string, string>> | undefined,
): boolean {
  if (from === to) return true;
  if (labels === undefined) return false;
  const value = labels[DEPENDABLE_FROM_LABEL];
  return value === 'all' || value === from || labels[`${DEPENDABLE_FROM_PREFIX}${from}`] === 'true';
}
