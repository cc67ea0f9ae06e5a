/**
 * `${cluster.name}`, `${cluster.labels.<key>}` and `${cluster.annotations.<key>}` in string values
 * (never in keys). `$${` stands for a literal `${`. Any other `${…}`, or a label or annotation the
 * Cluster does not have, is an error naming the field; nothing is half substituted.
 */
import type { ClusterFacts } from './select-clusters.ts';

export type Substituted<T> =
  | { readonly ok: true; readonly value: T }
  | { readonly ok: false; readonly field: string; readonly message: string };

const VARIABLE = /\$\$\{|\$\{([^}]*)\}|\$\{/g;

function lookup(expression: string, cluster: ClusterFacts): string | undefined {
  if (expression === 'cluster.name') return cluster.name;
  if (expression.startsWith('cluster.labels.'))
    return cluster.labels[expression.slice('cluster.labels.'.length)];
  if (expression.startsWith('cluster.annotations.'))
    return cluster.annotations[expression.slice('cluster.annotations.'.length)];
  return undefined;
}

function describeUnknown(expression: string, cluster: ClusterFacts): string {
  if (expression.startsWith('cluster.labels.'))
    return `Cluster ${cluster.name} has no label ${JSON.stringify(expression.slice(15))} (\${${expression}})`;
  if (expression.startsWith('cluster.annotations.'))
    return `Cluster ${cluster.name} has no annotation ${JSON.stringify(expression.slice(20))} (\${${expression}})`;
  return `unknown variable \${${expression}}: use \${cluster.name}, \${cluster.labels.<key>} or \${cluster.annotations.<key>} ($\${ for a literal \${)`;
}

export function substituteString(text: string, cluster: ClusterFacts, field: string): Substituted<string> {
  if (!text.includes('${')) return { ok: true, value: text };
  let failure: string | undefined;
  const value = text.replace(VARIABLE, (match: string, expression: string | undefined) => {
    if (match === '$${') return '${';
    if (match === '${') {
      failure ??= `unclosed \${ in ${JSON.stringify(text.slice(0, 80))}`;
      return match;
    }
    const found = lookup(expression ?? '', cluster);
    if (found === undefined && failure === undefined) failure = describeUnknown(expression ?? '', cluster);
    return found ?? '';
  });
  if (failure !== undefined) return { ok: false, field, message: failure };
  return { ok: true, value };
}

/** Substitutes every string value in a JSON value; `path` names the field in errors. */
export function substituteValue(value: unknown, cluster: ClusterFacts, path: string): Substituted<unknown> {
  if (typeof value === 'string') return substituteString(value, cluster, path);
  if (Array.isArray(value)) {
    const out: unknown[] = [];
    for (const [i, item] of value.entries()) {
      const r = substituteValue(item, cluster, `${path}[${i}]`);
      if (!r.ok) return r;
      out.push(r.value);
    }
    return { ok: true, value: out };
  }
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) {
      const r = substituteValue(item, cluster, `${path}.${key}`);
      if (!r.ok) return r;
      out[key] = r.value;
    }
    return { ok: true, value: out };
  }
  return { ok: true, value };
}
