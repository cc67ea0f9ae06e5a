/** A Kubernetes LabelSelector (matchLabels and matchExpressions). Empty selects everything. */
export interface LabelSelector {
  matchLabels?: Record<string, string> | undefined;
  matchExpressions?:
    | { key: string; operator: 'In' | 'NotIn' | 'Exists' | 'DoesNotExist'; values?: string[] | undefined }[]
    | undefined;
}

export function selectorMatches(
  selector: LabelSelector | undefined,
  labels: Readonly<Record<string, string>>,
): boolean {
  if (selector === undefined) return true;
  for (const [key, value] of Object.entries(selector.matchLabels ?? {})) {
    if (labels[key] !== value) return false;
  }
  for (const expr of selector.matchExpressions ?? []) {
    const has = Object.hasOwn(labels, expr.key);
    const value = labels[expr.key] ?? '';
    const values = expr.values ?? [];
    const ok =
      expr.operator === 'Exists'
        ? has
        : expr.operator === 'DoesNotExist'
          ? !has
          : expr.operator === 'In'
            ? has && values.includes(value)
            : !has || !values.includes(value);
    if (!ok) return false;
  }
  return true;
}
