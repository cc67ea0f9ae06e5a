/**
 * Which Releases the functions may write. The fleet function writes the child Releases of a
 * ReleaseSet (create, server-side apply, delete, orphan), so functions-rbac.ts grants create,
 * patch, update and delete on releases in every namespace — and RBAC cannot say more. Without
 * more, a compromised function could write any tenant's Release, or plant one in kube-system.
 *
 * A ValidatingAdmissionPolicy (admissionregistration.k8s.io/v1, Kubernetes 1.30+) shipped with the
 * install, matched on the functions' identity only (group convoy:functions, or the ServiceAccount
 * `convoy dev` binds like it): a Release they create must be a ReleaseSet's child — labelled
 * convoy.dev/release-set and with a ReleaseSet owner reference; one they change or delete must
 * already be one (owned by a ReleaseSet, or labelled as one's child, which the fleet function
 * adopts: domain/fleet/child-state.ts). A tenant's own Release is never theirs to write. A "child"
 * planted where its ReleaseSet is not — kube-system, or any namespace without that set — is
 * deleted by the garbage collector, which finds no owner of that uid in the child's namespace.
 * Their status writes (the releases/status subresource, every loop's slice) are not matched.
 *
 * Not shipped: a policy refusing the functions' creates in a namespace that holds no ReleaseSet
 * (paramKind ReleaseSet, paramRef of the Release's namespace, parameterNotFoundAction Deny). The
 * apiserver looks the params up before it evaluates matchConditions, so such a binding refuses
 * everyone's Releases in those namespaces, not the functions' only; narrowed to creates of labelled
 * children it still refused a child created right after its set (4 of 60 tries: the admission's
 * ReleaseSet informer lags the create). docs/security.md door 18.
 */
import { API_GROUP } from '../domain/api/common.ts';
import { FleetLabel } from '../domain/fleet/labels.ts';
import { FUNCTIONS_GROUP } from './functions-rbac.ts';
import type { KubeManifest } from './kube-manifest.ts';

export const FUNCTIONS_RELEASE_POLICY = 'convoy-functions-release-writes';

const ADMISSION = 'admissionregistration.k8s.io/v1';

/** A CEL test that Release `o` has a ReleaseSet owner reference. */
const ownedBySet = (o: string) =>
  `(has(${o}.metadata.ownerReferences) && ${o}.metadata.ownerReferences.exists(r, r.kind == 'ReleaseSet' && r.apiVersion.startsWith('${API_GROUP}/')))`;
/** A CEL test that Release `o` carries the child label. */
const labelledChild = (o: string) =>
  `(has(${o}.metadata.labels) && '${FleetLabel.releaseSet}' in ${o}.metadata.labels)`;

/**
 * The policy and its binding. `serviceAccount`: the installation's ServiceAccount the
 * functions use where no user of FUNCTIONS_GROUP can be minted (functions-rbac.ts, `convoy dev`).
 */
export function functionsReleasePolicy(
  namespace: string,
  labels: Record<string, string>,
  serviceAccount?: string,
): KubeManifest[] {
  const identity = [
    `request.userInfo.groups.exists(g, g == '${FUNCTIONS_GROUP}')`,
    ...(serviceAccount === undefined
      ? []
      : [`request.userInfo.username == 'system:serviceaccount:${namespace}:${serviceAccount}'`]),
  ].join(' || ');
  return [
    {
      apiVersion: ADMISSION,
      kind: 'ValidatingAdmissionPolicy',
      metadata: { name: FUNCTIONS_RELEASE_POLICY, labels },
      spec: {
        failurePolicy: 'Fail',
        // releases only: the status subresource (every loop's status slice) is not matched.
        matchConstraints: {
          resourceRules: [
            {
              apiGroups: [API_GROUP],
              apiVersions: ['*'],
              operations: ['CREATE', 'UPDATE', 'DELETE'],
              resources: ['releases'],
            },
          ],
        },
        matchConditions: [{ name: 'the-functions-identity', expression: identity }],
        validations: [
          {
            expression: `request.operation == 'CREATE' ? (${labelledChild('object')} && ${ownedBySet('object')}) : (${ownedBySet('oldObject')} || ${labelledChild('oldObject')})`,
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
      spec: { policyName: FUNCTIONS_RELEASE_POLICY, validationActions: ['Deny'] },
    },
  ];
}
