// ECR through IAM (`provider: aws`): the reconcile function's role may get an
// authorization token (ecr:GetAuthorizationToken takes no resource: `*`, acknowledged) and pull
// (ecr:BatchGetImage, ecr:GetDownloadUrlForLayer) from exactly the repositories the construct's
// `ecrRepositories` lists — never `*` on images. Every Release with `provider: aws` pulls as this
// role, so the list is the installation's allow-list (docs/security.md).
import { Stack, Token } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import type { IConstruct } from 'constructs';
import { acknowledge } from './function-iam.ts';

export class EcrRepositoriesError extends Error {
  override name = 'EcrRepositoriesError';
}

const REPOSITORY_ARN =
  /^arn:aws[a-z-]*:ecr:[a-z0-9-]+:[0-9]{12}:repository\/(?:[a-z0-9]+(?:[._-][a-z0-9]+)*\/)*[a-z0-9]+(?:[._-][a-z0-9]+)*$/;
const REPOSITORY_NAME = /^(?:[a-z0-9]+(?:[._-][a-z0-9]+)*\/)*[a-z0-9]+(?:[._-][a-z0-9]+)*$/;

/**
 * The repository ARNs of `ecrRepositories`: an ARN as given, a name as the repository of that name
 * in the stack's account and region. Wildcards, empty entries and duplicates are refused at synth.
 */
export function ecrRepositoryArns(scope: IConstruct, repositories: readonly string[]): string[] {
  const arns: string[] = [];
  for (const entry of repositories) {
    const value = Token.isUnresolved(entry) ? entry : entry.trim();
    if (!Token.isUnresolved(value) && value.includes('*')) {
      throw new EcrRepositoriesError(
        `ecrRepositories: ${JSON.stringify(entry)} has a wildcard; list each repository the functions may pull from (a repository name, or its ARN)`,
      );
    }
    let arn: string;
    if (Token.isUnresolved(value)) {
      // A repository of the same app (repository.repositoryArn): an ARN by construction.
      arn = value;
    } else if (value.startsWith('arn:')) {
      if (!REPOSITORY_ARN.test(value))
        throw new EcrRepositoriesError(
          `ecrRepositories: ${JSON.stringify(entry)} is not an ECR repository ARN (arn:aws:ecr:<region>:<account>:repository/<name>)`,
        );
      arn = value;
    } else {
      if (!REPOSITORY_NAME.test(value) || value.length > 256) {
        throw new EcrRepositoriesError(
          `ecrRepositories: ${JSON.stringify(entry)} is neither an ECR repository name (lower-case path, e.g. charts/podinfo) nor an ARN`,
        );
      }
      arn = Stack.of(scope).formatArn({ service: 'ecr', resource: 'repository', resourceName: value });
    }
    if (arns.includes(arn))
      throw new EcrRepositoriesError(`ecrRepositories: ${JSON.stringify(entry)} is listed twice`);
    arns.push(arn);
  }
  return arns;
}

/** Grants a function's role (the reconcile's, the fleet's) the token and pulls from `repositories`; nothing when the list is empty. */
export function grantEcrPull(
  role: iam.IRole & IConstruct,
  repositories: readonly string[] | undefined,
): void {
  if (repositories === undefined || repositories.length === 0) return;
  const arns = ecrRepositoryArns(role, repositories);
  role.addToPrincipalPolicy(
    new iam.PolicyStatement({ actions: ['ecr:GetAuthorizationToken'], resources: ['*'] }),
  );
  role.addToPrincipalPolicy(
    new iam.PolicyStatement({
      actions: ['ecr:BatchGetImage', 'ecr:GetDownloadUrlForLayer'],
      resources: arns,
    }),
  );
  acknowledge(
    role,
    'AwsSolutions-IAM5[Resource::*]',
    'ecr:GetAuthorizationToken supports no resource-level permissions (AWS requires Resource "*"); the token alone pulls nothing: pulls are granted by ecr:BatchGetImage and ecr:GetDownloadUrlForLayer on the repositories listed in ecrRepositories only.',
  );
}
