// The admission policy on the functions' Release writes, as every install path ships it (its effect
// on the real apiserver: test/integration/least-privilege.test.ts).
import { describe, expect, it } from 'vitest';
import { FUNCTIONS_RELEASE_POLICY } from '../../../infra/functions-admission.ts';
import { chartFiles, deployFiles } from '../../../infra/install-files.ts';
import { relayManifests } from '../../../infra/relay-manifests.ts';

const base = {
  queueUrls: { reconcile: 'https://q/r', drift: 'https://q/d', health: 'https://q/h' },
  region: 'eu-west-1',
  crds: [],
};

describe("the functions' Release-write policy in the install manifests", () => {
  it('a ValidatingAdmissionPolicy on releases (not releases/status) matched on the group convoy:functions, with no params (they would be looked up for every identity)', () => {
    const manifests = relayManifests(base);
    const policy = manifests.find((m) => m.kind === 'ValidatingAdmissionPolicy');
    const binding = manifests.find((m) => m.kind === 'ValidatingAdmissionPolicyBinding');
    expect(policy?.metadata['name']).toBe(FUNCTIONS_RELEASE_POLICY);
    expect(policy?.['spec']).not.toHaveProperty('paramKind');
    expect(policy?.['spec']).toMatchObject({
      failurePolicy: 'Fail',
      matchConstraints: {
        resourceRules: [
          { apiGroups: ['convoy.dev'], operations: ['CREATE', 'UPDATE', 'DELETE'], resources: ['releases'] },
        ],
      },
      matchConditions: [{ expression: "request.userInfo.groups.exists(g, g == 'convoy:functions')" }],
    });
    expect(binding?.['spec']).toEqual({ policyName: FUNCTIONS_RELEASE_POLICY, validationActions: ['Deny'] });
    // After the CRDs when they are included (it matches releases.convoy.dev).
    const kinds = relayManifests({ ...base, crds: undefined }).map((m) => m.kind);
    expect(kinds.lastIndexOf('CustomResourceDefinition')).toBeLessThan(
      kinds.indexOf('ValidatingAdmissionPolicy'),
    );
  });

  it("`convoy dev`'s functions ServiceAccount is matched too", () => {
    const policy = relayManifests({
      ...base,
      namespace: 'dev-system',
      functionsServiceAccount: 'convoy-functions',
    }).find((m) => m.kind === 'ValidatingAdmissionPolicy');
    expect(JSON.stringify(policy)).toContain(
      "request.userInfo.username == 'system:serviceaccount:dev-system:convoy-functions'",
    );
  });

  it('deploy/ and the chart ship it', () => {
    expect(deployFiles().get('deploy/convoy.yaml')).toContain('kind: ValidatingAdmissionPolicyBinding');
    const chart = chartFiles('0.0.0');
    expect(chart.get('charts/convoy/templates/validatingadmissionpolicy.yaml')).toContain(
      `name: ${FUNCTIONS_RELEASE_POLICY}`,
    );
    expect(chart.get('charts/convoy/templates/validatingadmissionpolicybinding.yaml')).toContain(
      `policyName: ${FUNCTIONS_RELEASE_POLICY}`,
    );
  });
});
