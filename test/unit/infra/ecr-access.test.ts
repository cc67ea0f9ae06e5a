// The construct's `ecrRepositories` (ECR through IAM): the reconcile function's role gets
// ecr:GetAuthorizationToken (Resource "*", which AWS requires; acknowledged to cdk-nag with the
// reason) and ecr:BatchGetImage/GetDownloadUrlForLayer on exactly the listed repositories — names
// become ARNs in the stack's account and region; never a wildcard on images. The installation's
// insecure registries reach the functions' environment from the tenancy prop, checked at synth.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App, Stack, Validations } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import * as sns from 'aws-cdk-lib/aws-sns';
import { AwsSolutionsChecks } from 'cdk-nag';
import { afterAll, describe, expect, it } from 'vitest';
import { Convoy, type ConvoyProps } from '../../../infra/convoy-construct.ts';
import { EcrRepositoriesError } from '../../../infra/ecr-access.ts';
import { checkTemplate, type CfnTemplate } from '../../package/template-checks.ts';

const outdir = mkdtempSync(join(tmpdir(), 'convoy-ecr-'));
afterAll(() => rmSync(outdir, { recursive: true, force: true }));

type Statement = { Action: string | string[]; Resource: unknown; Effect: string };
type Resources = Record<string, { Properties: Record<string, unknown> }>;

function synth(props: Partial<ConvoyProps>) {
  const app = new App({
    outdir,
    context: { 'aws:cdk:disable-asset-staging': true, 'aws:cdk:bundling-stacks': [] },
  });
  const stack = new Stack(app, 'User', { env: { account: '111111111111', region: 'eu-west-1' } });
  new Convoy(stack, 'Convoy', {
    alarmsTopic: new sns.Topic(stack, 'Alarms', { enforceSSL: true }),
    kubeconfigPath: '/opt/kubeconfig',
    ...props,
  });
  Validations.of(app).addPlugins(new AwsSolutionsChecks(app, { writeSuppressionsToCloudFormation: true }));
  app.synth();
  return Template.fromStack(stack);
}

/** The ECR statements of each function role's policies, by the role's description. */
function ecrStatements(template: Template): Record<string, Statement[]> {
  const roles = template.findResources('AWS::IAM::Role') as Resources;
  const policies = Object.values(template.findResources('AWS::IAM::Policy') as Resources).map(
    (p) => p.Properties,
  );
  const out: Record<string, Statement[]> = {};
  for (const [id, role] of Object.entries(roles)) {
    const description =
      typeof role.Properties['Description'] === 'string' ? role.Properties['Description'] : id;
    const statements = policies
      .filter((p) => JSON.stringify(p['Roles']).includes(`"${id}"`))
      .flatMap((p) => (p['PolicyDocument'] as { Statement: Statement[] }).Statement)
      .filter((s) => JSON.stringify(s.Action).includes('ecr:'));
    if (statements.length > 0) out[description] = statements;
  }
  return out;
}

describe('ecrRepositories', { timeout: 120_000 }, () => {
  it("the reconcile and fleet roles (the fleet resolves a ReleaseSet template with the reconcile's source port): the token on * (acknowledged), pulls on exactly the listed repositories; no other role; cdk-nag clean", () => {
    const template = synth({
      ecrRepositories: ['charts/podinfo', 'arn:aws:ecr:us-east-1:222222222222:repository/shared/app'],
    });
    expect(checkTemplate(template.toJSON() as CfnTemplate)).toEqual([]);
    const statements = ecrStatements(template);
    expect(Object.keys(statements).sort()).toEqual(['convoy fleet function', 'convoy reconcile function']);
    expect(statements['convoy fleet function']).toEqual(statements['convoy reconcile function']);
    expect(statements['convoy reconcile function']).toEqual([
      { Action: 'ecr:GetAuthorizationToken', Effect: 'Allow', Resource: '*' },
      {
        Action: ['ecr:BatchGetImage', 'ecr:GetDownloadUrlForLayer'],
        Effect: 'Allow',
        Resource: [
          {
            'Fn::Join': [
              '',
              ['arn:', { Ref: 'AWS::Partition' }, ':ecr:eu-west-1:111111111111:repository/charts/podinfo'],
            ],
          },
          'arn:aws:ecr:us-east-1:222222222222:repository/shared/app',
        ],
      },
    ]);
    const json = JSON.stringify(template.toJSON());
    expect(json).toContain('ecr:GetAuthorizationToken supports no resource-level permissions');
  });

  it('without ecrRepositories: no ECR permission at all', () => {
    expect(ecrStatements(synth({}))).toEqual({});
  });

  it.each([
    ['*', /has a wildcard/],
    ['charts/*', /has a wildcard/],
    ['arn:aws:ecr:eu-west-1:111111111111:repository/*', /has a wildcard/],
    ['Charts/Upper', /neither an ECR repository name/],
    ['arn:aws:s3:::bucket', /is not an ECR repository ARN/],
  ])('%s is refused at synth', (entry, message) => {
    expect(() => synth({ ecrRepositories: [entry] })).toThrow(EcrRepositoriesError);
    expect(() => synth({ ecrRepositories: [entry] })).toThrow(message);
  });

  it('a repository listed twice is refused', () => {
    expect(() =>
      synth({ ecrRepositories: ['app', 'arn:aws:ecr:eu-west-1:111111111111:repository/app'] }),
    ).not.toThrow();
    expect(() => synth({ ecrRepositories: ['app', 'app'] })).toThrow(/listed twice/);
  });
});

describe('insecure registries from the construct', { timeout: 120_000 }, () => {
  const envOf = (template: Template) =>
    Object.values(template.findResources('AWS::Lambda::Function') as Resources)
      .filter((f) => String(f.Properties['Description']).startsWith('convoy '))
      .map(
        (f) =>
          (f.Properties['Environment'] as { Variables: Record<string, unknown> }).Variables[
            'CONVOY_INSECURE_REGISTRIES'
          ],
      );

  it("tenancy.insecureRegistries is every function's CONVOY_INSECURE_REGISTRIES; default none", () => {
    // Four functions: the fleet resolves a ReleaseSet template's source under the same rules.
    expect(envOf(synth({ tenancy: { insecureRegistries: 'registry.lab:5000,10.0.0.7' } }))).toEqual(
      Array(4).fill('registry.lab:5000,10.0.0.7'),
    );
    expect(envOf(synth({}))).toEqual(['', '', '', '']);
  });

  it('a malformed entry fails synth naming it', () => {
    expect(() => synth({ tenancy: { insecureRegistries: 'http://registry.lab' } })).toThrow(
      'insecureRegistries: "http://registry.lab" is not a registry host[:port]',
    );
  });
});
