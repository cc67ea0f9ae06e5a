/**
 * Where the functions may write Releases. The fleet function writes the child Releases of a
 * ReleaseSet (create, server-side apply, delete, orphan), so functions-rbac.ts grants create,
 * patch, update and delete on releases — and RBAC cannot say more: not "only in namespaces that
 * hold a ReleaseSet", not "only a ReleaseSet's children". Without more, a compromised function
 * could write a Release into kube-system or any tenant's namespace.
 *
 * A ValidatingAdmissionPolicy (admissionregistration.k8s.io/v1, Kubernetes 1.30+) shipped with the
 * install says it, matched on the functions' identity only (group convoy:functions, or the
 * ServiceAccount `convoy dev` binds like it): a Release the functions create, change or delete
 * must be in a namespace that holds a ReleaseSet (the binding's paramRef takes the ReleaseSets of
 * the Release's own namespace; none found: denied), and must be a ReleaseSet's child — created
 * with a ReleaseSet owner reference; changed or deleted only when it already was one, or carries
 * the convoy.dev/release-set label the fleet function adopts by (domain/fleet/child-state.ts).
 * The status subresource (every loop's status slice) is not matched: `releases` only.
 */
import { API_GROUP, API_VERSION } from '../domain/api/common.ts';
import { FleetLabel } from '../domain/fleet/labels.ts';
import { FUNCTIONS_GROUP } from './functions-rbac.ts';
import type { KubeManifest } from './kube-manifest.ts';

export const FUNCTIONS_RELEASE_POLICY = 'convoy-functions-release-writes';

const ADMISSION = 'admissionregistration.k8s.io/v1';

/** A Release (`o`, a CEL variable) a ReleaseSet owns, or labelled as one's child. */
const setLinked = (o: string) =>
  `(has(${o}.metadata.ownerReferences) && ${o}.metadata.ownerReferences.exists(r, r.kind == 'ReleaseSet' && r.apiVersion.startsWith('${API_GROUP}/')))` +
  ` || (has(${o}.metadata.labels) && '${FleetLabel.releaseSet}' in ${o}.metadata.labels)`;

/**
 * The policy and its binding. `serviceAccount`: the installation's ServiceAccount the functions
 * use where no user of FUNCTIONS_GROUP can be minted (functions-rbac.ts, `convoy dev`).
 */
export function functionsReleasePolicy(namespace: string, labels: Record<string, string>, serviceAccount?: string): KubeManifest[] {
  const identity = [
    `request.userInfo.groups.exists(g, g == '${FUNCTIONS_GROUP}')`,
    ...(serviceAccount === undefined ? [] : [`request.userInfo.username == 'system:serviceaccount:${namespace}:${serviceAccount}'`]),
  ].join(' || ');
  return [
    {
      apiVersion: ADMISSION,
      kind: 'ValidatingAdmissionPolicy',
      metadata: { name: FUNCTIONS_RELEASE_POLICY, labels },
      spec: {
        failurePolicy: 'Fail',
        // The ReleaseSets of the Release's namespace (the binding's paramRef has no namespace).
        paramKind: { apiVersion: `${API_GROUP}/${API_VERSION}`, kind: 'ReleaseSet' },
        matchConstraints: {
          resourceRules: [{ apiGroups: [API_GROUP], apiVersions: ['*'], operations: ['CREATE', 'UPDATE', 'DELETE'], resources: ['releases'] }],
        },
        matchConditions: [{ name: 'the-functions-identity', expression: identity }],
        validations: [
          {
            expression: `request.operation == 'CREATE' ? (${setLinked('object')}) : (${setLinked('oldObject')})`,
            messageExpression: `'the functions of convoy write only the child Releases of a ReleaseSet: ' + request.namespace + '/' + request.name + ' is not one'`,
            reason: 'Forbidden',
          },
        ],
      },
    },
    {
      apiVersion: ADMISSION,
      kind: 'ValidatingAdmissionPolicyBinding',
      metadata: { name: FUNCTIONS_RELEASE_POLICY, labels },
      spec: {
        policyName: FUNCTIONS_RELEASE_POLICY,
        validationActions: ['Deny'],
        // Every ReleaseSet of the admitted Release's namespace; a namespace without one is denied.
        paramRef: { selector: {}, parameterNotFoundAction: 'Deny' },
      },
    },
  ];
}
