/**
 * The installation setting `eksRoles`: which IAM roles the EKS Clusters (`Cluster.spec.eks`) of
 * each namespace may use. A token for an EKS cluster is minted with convoy's own AWS
 * credentials, so without this setting a Cluster in team-a could name team-b's `roleArn` — or
 * none at all, and act as the functions' own IAM role. Pure; policy.ts checks it before any
 * token is minted.
 *
 * Text form (environment variable CONVOY_EKS_ROLES, the construct's `eksTargets.namespaceRoles`):
 * entries separated by `;` or new lines, each `<namespace>=<role>[,<role>…]`, where
 * - `<namespace>` is a namespace or a pattern (`*` matches any characters; `*` alone: every
 *   namespace);
 * - `<role>` is an IAM role ARN or a pattern of one (`arn:aws:iam::111122223333:role/team-a-*`;
 *   `*` alone: any role ARN), or `self`: the functions' own role (a Cluster without roleArn),
 *   which no pattern includes — a namespace may use it only when `self` is named for it.
 * Empty or unset: no namespace may use any role (EKS Clusters are refused by policy).
 */

/** The keyword for the functions' own IAM role: a Cluster whose spec.eks has no roleArn. */
export const FUNCTION_ROLE = 'self';

export interface EksRoleGrant {
  /** A namespace, or a pattern with `*`. */
  readonly namespace: string;
  /** IAM role ARN patterns, or FUNCTION_ROLE. */
  readonly roles: readonly string[];
}

/** A bad `eksRoles` entry; the message names the setting and the entry. */
export class EksRolesSettingError extends Error {
  override name = 'EksRolesSettingError';
}

const NAMESPACE_PATTERN = /^[a-z0-9*]([-a-z0-9*]*[a-z0-9*])?$/;
const ROLE_PATTERN = /^arn:[^\s,;=]+$/;

/** The grants of an `eksRoles` text; throws EksRolesSettingError naming `setting`. */
export function parseEksRoles(text: string, setting = 'eksRoles'): EksRoleGrant[] {
  const grants: EksRoleGrant[] = [];
  for (const raw of text.split(/[;\n]/)) {
    const entry = raw.trim();
    if (entry === '') continue;
    const eq = entry.indexOf('=');
    if (eq < 0)
      throw new EksRolesSettingError(
        `${setting}: ${JSON.stringify(entry)} is not <namespace>=<role>[,<role>…]`,
      );
    const namespace = entry.slice(0, eq).trim();
    if (!NAMESPACE_PATTERN.test(namespace) || namespace.length > 63) {
      throw new EksRolesSettingError(
        `${setting}: ${JSON.stringify(namespace)} is not a namespace or a pattern of one (use * for every namespace)`,
      );
    }
    const roles = entry
      .slice(eq + 1)
      .split(',')
      .map((r) => r.trim())
      .filter((r) => r !== '');
    if (roles.length === 0)
      throw new EksRolesSettingError(
        `${setting}: the entry for ${namespace} names no role (an IAM role ARN, a pattern of one, or ${FUNCTION_ROLE})`,
      );
    const bad = roles.find((r) => r !== FUNCTION_ROLE && r !== '*' && !ROLE_PATTERN.test(r));
    if (bad !== undefined) {
      throw new EksRolesSettingError(
        `${setting}: ${JSON.stringify(bad)} (for ${namespace}) is not an IAM role ARN, a pattern of one, or ${FUNCTION_ROLE}`,
      );
    }
    grants.push({ namespace, roles });
  }
  return grants;
}

/** The text form of `grants` (what parseEksRoles reads back). */
export function formatEksRoles(
  grants: Readonly<Record<string, readonly string[]>> | readonly EksRoleGrant[],
): string {
  const list: readonly EksRoleGrant[] = Array.isArray(grants)
    ? grants
    : Object.entries(grants as Readonly<Record<string, readonly string[]>>).map(([namespace, roles]) => ({
        namespace,
        roles,
      }));
  return list.map((g) => `${g.namespace}=${g.roles.join(',')}`).join(';');
}

/** The role patterns (and FUNCTION_ROLE) granted to `namespace`. */
export function eksRolesOf(namespace: string, grants: readonly EksRoleGrant[]): string[] {
  return [...new Set(grants.filter((g) => globMatches(g.namespace, namespace)).flatMap((g) => g.roles))];
}

/** Whether a Cluster of `namespace` may use `roleArn` (undefined: the functions' own role). */
export function eksRoleAllowed(
  namespace: string,
  roleArn: string | undefined,
  grants: readonly EksRoleGrant[],
): boolean {
  const roles = eksRolesOf(namespace, grants);
  if (roleArn === undefined) return roles.includes(FUNCTION_ROLE);
  return roles.some((pattern) => pattern !== FUNCTION_ROLE && globMatches(pattern, roleArn));
}

/**
 * `*` matches any run of characters, everything else itself. No regular expression: the text is
 * a tenant's, and the greedy match with one backtrack point is linear in practice (O(n·m) at worst).
 */
export function globMatches(pattern: string, text: string): boolean {
  let p = 0;
  let t = 0;
  let star = -1;
  let resume = 0;
  while (t < text.length) {
    if (p < pattern.length && pattern[p] !== '*' && pattern[p] === text[t]) {
      p++;
      t++;
    } else if (p < pattern.length && pattern[p] === '*') {
      star = p++;
      resume = t;
    } else if (star >= 0) {
      p = star + 1;
      t = ++resume;
    } else {
      return false;
    }
  }
  while (p < pattern.length && pattern[p] === '*') p++;
  return p === pattern.length;
}
