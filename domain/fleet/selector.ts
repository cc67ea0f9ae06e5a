/**
 * Kubernetes label selector semantics over Cluster labels: matchLabels and matchExpressions
 * (In, NotIn, Exists, DoesNotExist) all must hold; `{}` matches everything. NotIn and
 * DoesNotExist match an object without the key, as in Kubernetes.
 */
import { labelKey, labelValue, type ClusterSelector } from '../api/release-set.ts';

export type Labels = Readonly<Record<string, string>>;

export function matchesSelector(selector: ClusterSelector, labels: Labels): boolean {
  for (const [key, value] of Object.entries(selector.matchLabels ?? {})) {
    if (labels[key] !== value) return false;
  }
  for (const expr of selector.matchExpressions ?? []) {
    const has = Object.hasOwn(labels, expr.key);
    const value = labels[expr.key];
    const values = expr.values ?? [];
    switch (expr.operator) {
      case 'In':
        if (!has || !values.includes(value)) return false;
        break;
      case 'NotIn':
        if (has && values.includes(value)) return false;
        break;
      case 'Exists':
        if (!has) return false;
        break;
      case 'DoesNotExist':
        if (has) return false;
        break;
    }
  }
  return true;
}

/** What is wrong with a selector: the field (under the path given) and why. */
export interface SelectorIssue {
  readonly field: string;
  readonly message: string;
}

/**
 * Why a selector is invalid, naming the field under `path`, or undefined. Admission checks the
 * same rules (CRD schema + CEL) except label keys of matchLabels, which are checked only here.
 */
export function selectorIssue(selector: ClusterSelector, path: string): SelectorIssue | undefined {
  for (const [key, value] of Object.entries(selector.matchLabels ?? {})) {
    if (!labelKey.safeParse(key).success)
      return {
        field: `${path}.matchLabels`,
        message: `${JSON.stringify(key)} is not a label key ([prefix/]name, name at most 63 characters)`,
      };
    if (!labelValue.safeParse(value).success)
      return {
        field: `${path}.matchLabels.${key}`,
        message: `${JSON.stringify(value)} is not a label value`,
      };
  }
  for (const [i, expr] of (selector.matchExpressions ?? []).entries()) {
    const at = `${path}.matchExpressions[${i}]`;
    if (!labelKey.safeParse(expr.key).success)
      return { field: `${at}.key`, message: `${JSON.stringify(expr.key)} is not a label key` };
    const needsValues = expr.operator === 'In' || expr.operator === 'NotIn';
    const count = expr.values?.length ?? 0;
    if (needsValues && count === 0)
      return { field: `${at}.values`, message: `operator ${expr.operator} needs at least one value` };
    if (!needsValues && expr.values !== undefined)
      return { field: `${at}.values`, message: `operator ${expr.operator} takes no values` };
  }
  return undefined;
}

/** selectorIssue as one line: `<field>: <why>`. */
export function selectorProblem(selector: ClusterSelector, path: string): string | undefined {
  const issue = selectorIssue(selector, path);
  return issue === undefined ? undefined : `${issue.field}: ${issue.message}`;
}
