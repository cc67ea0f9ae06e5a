import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App, Duration, Stack } from 'aws-cdk-lib';
import { Annotations, Match, Template } from 'aws-cdk-lib/assertions';
import * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import * as sns from 'aws-cdk-lib/aws-sns';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { functionEnvSchema, loadFunctionConfig } from '../../../functions/runtime/config.ts';
import {
  Convoy,
  DEFAULT_MEMORY_MB,
  ESM_BANNER,
  ConvoyConfigError,
  LOOPS,
  QUEUE_LOOPS,
  type ConvoyProps,
  type QueueLoop,
} from '../../../infra/convoy-construct.ts';
import { ConvoyStack } from '../../../infra/stack.ts';

type Resource = { Type: string; Properties: Record<string, unknown> };
type Statement = {
  Action: string | string[];
  Effect: string;
  Resource: unknown;
  Principal?: unknown;
  Condition?: unknown;
};

// One cloud assembly directory for every synth: the 37 MB kubectl layer zip is staged into it once.
const outdir = mkdtempSync(join(tmpdir(), 'convoy-infra-'));
afterAll(() => rmSync(outdir, { recursive: true, force: true }));

/**
 * Assets are not copied into the cloud assembly (the 37 MB kubectl layer zip
 * would be, on every synth); each resource records its asset's path instead.
 * Without `bundle`, esbuild is skipped too (CDK's `aws:cdk:bundling-stacks`,
 * as `cdk synth --exclusively` does): the template is the same but for asset hashes.
 */
const testContext = (bundle: boolean) => ({
  'aws:cdk:disable-asset-staging': true,
  'aws:cdk:enable-asset-metadata': true,
  ...(bundle ? {} : { 'aws:cdk:bundling-stacks': [] }),
});

function synth(props: ConvoyProps & { topic?: boolean; secretName?: string } = {}, bundle = false) {
  const app = new App({ outdir, context: testContext(bundle) });
  const stack = new Stack(app, 'Test', { env: { account: '111111111111', region: 'eu-west-1' } });
  const alarmsTopic = props.topic ? new sns.Topic(stack, 'Alarms') : undefined;
  const kubeconfigSecret = props.secretName
    ? secretsmanager.Secret.fromSecretNameV2(stack, 'Kubeconfig', props.secretName)
    : undefined;
  const convoy = new Convoy(stack, 'Convoy', {
    ...props,
    ...(alarmsTopic ? { alarmsTopic } : {}),
    ...(kubeconfigSecret ? { kubeconfigSecret } : {}),
  });
  return { app, stack, convoy, outdir, template: Template.fromStack(stack) };
}

const byType = (template: Template, type: string) => template.findResources(type) as Record<string, Resource>;
const logicalId = (stack: Stack, construct: { node: { defaultChild?: unknown } }) =>
  stack.getLogicalId(construct.node.defaultChild as Parameters<Stack['getLogicalId']>[0]);

/** Every statement of the policies attached to a role (by logical id). */
function statementsOf(template: Template, roleId: string): Statement[] {
  return Object.values(byType(template, 'AWS::IAM::Policy'))
    .filter((p) => (p.Properties['Roles'] as { Ref: string }[]).some((r) => r.Ref === roleId))
    .flatMap((p) => (p.Properties['PolicyDocument'] as { Statement: Statement[] }).Statement);
}
const actionsOf = (statements: Statement[]) =>
  statements.flatMap((s) => (Array.isArray(s.Action) ? s.Action : [s.Action]));
const roleIdOf = (template: Template, fnId: string) =>
  (byType(template, 'AWS::Lambda::Function')[fnId].Properties['Role'] as { 'Fn::GetAtt': [string, string] })[
    'Fn::GetAtt'
  ][0];

describe('Convoy construct, default props, bundled with esbuild', () => {
  let main: ReturnType<typeof synth>;
  beforeAll(() => {
    main = synth({ topic: true, kubeconfigPath: '/opt/kubeconfig/config' }, true);
  }, 60_000);

  const fnId = (loop: QueueLoop) => logicalId(main.stack, main.convoy.functions[loop]);
  const queueId = (loop: QueueLoop) => logicalId(main.stack, main.convoy.queues[loop]);
  const dlqId = (loop: QueueLoop) => logicalId(main.stack, main.convoy.deadLetterQueues[loop]);

  it('four standard queues (reconcile, drift, health, fleet), each redriven to its own dead-letter queue after 190 receives (a 30-min wait at 10-s rechecks + 10), visibility = 6 × the 5-min timeout, retention 4 days (DLQ 14)', () => {
    main.template.resourceCountIs('AWS::SQS::Queue', 8);
    const queues = byType(main.template, 'AWS::SQS::Queue');
    for (const loop of QUEUE_LOOPS) {
      const queue = queues[queueId(loop)].Properties;
      expect(queue['FifoQueue']).toBeUndefined();
      expect(queue['VisibilityTimeout']).toBe(1800);
      expect(queue['RedrivePolicy']).toEqual({
        deadLetterTargetArn: { 'Fn::GetAtt': [dlqId(loop), 'Arn'] },
        maxReceiveCount: 190,
      });
      expect(queue['MessageRetentionPeriod']).toBe(4 * 24 * 3600);
      expect(queue['SqsManagedSseEnabled']).toBe(true);
      expect(queues[dlqId(loop)].Properties['RedrivePolicy']).toBeUndefined();
      expect(queues[dlqId(loop)].Properties['MessageRetentionPeriod']).toBe(14 * 24 * 3600);
    }
  });

  it('four Node.js 24 functions from functions/<loop>/handler.ts (the fourth: fleet); the helm/kubectl layer on reconcile only', () => {
    const functions = byType(main.template, 'AWS::Lambda::Function');
    expect(Object.keys(functions)).toHaveLength(4);
    const layerId = logicalId(main.stack, main.convoy.kubectlLayer);
    for (const loop of QUEUE_LOOPS) {
      const fn = functions[fnId(loop)].Properties;
      expect(fn['Runtime']).toBe('nodejs24.x');
      expect(fn['Handler']).toBe('index.handler');
      expect(fn['Timeout']).toBe(300);
      expect(fn['Architectures']).toEqual(['x86_64']);
      expect(fn['Layers']).toEqual(loop === 'reconcile' ? [{ Ref: layerId }] : undefined);
    }
    main.template.hasResourceProperties('AWS::Lambda::LayerVersion', {
      Description: Match.stringLikeRegexp('/opt/helm/helm'),
    });
  });

  it('memory by default: reconcile 1024 MB, drift, health and fleet 256 MB (the bench lambdaRuntime peaks: 110–127 MB), from DEFAULT_MEMORY_MB', () => {
    const functions = byType(main.template, 'AWS::Lambda::Function');
    const memory = Object.fromEntries(
      QUEUE_LOOPS.map((loop) => [loop, functions[fnId(loop)].Properties['MemorySize']]),
    );
    expect(memory).toEqual({ reconcile: 1024, drift: 256, health: 256, fleet: 256 });
    expect(memory).toEqual(DEFAULT_MEMORY_MB);
  });

  it('each bundle (fleet too) is minified ESM with @aws-sdk left external and require/__filename shimmed', () => {
    for (const loop of QUEUE_LOOPS) {
      const fn = main.template.findResources('AWS::Lambda::Function')[fnId(loop)] as {
        Metadata: Record<string, string>;
      };
      const bundle = join(fn.Metadata['aws:asset:path'], 'index.mjs');
      expect(existsSync(bundle), bundle).toBe(true);
      const text = readFileSync(bundle, 'utf8');
      expect(text.startsWith(ESM_BANNER)).toBe(true);
      expect(text).toMatch(/from\s*"@aws-sdk\/client-sqs"/);
      expect(text).toMatch(/export\s*\{[^}]*as handler/);
      // Minified: the handler's own comments are gone.
      expect(text).not.toContain('Lambda entry point of the');
    }
  });

  it('event source mappings: batch 10 (fleet: 1, one ReleaseSet per run), ReportBatchItemFailures, maximum concurrency', () => {
    const mappings = Object.values(byType(main.template, 'AWS::Lambda::EventSourceMapping')).map(
      (m) => m.Properties,
    );
    expect(mappings).toHaveLength(4);
    for (const loop of QUEUE_LOOPS) {
      expect(mappings).toContainEqual(
        expect.objectContaining({
          FunctionName: { Ref: fnId(loop) },
          EventSourceArn: { 'Fn::GetAtt': [queueId(loop), 'Arn'] },
          BatchSize: loop === 'fleet' ? 1 : 10,
          FunctionResponseTypes: ['ReportBatchItemFailures'],
          ScalingConfig: { MaximumConcurrency: 10 },
        }),
      );
    }
  });

  it('render store: KMS-encrypted, public access blocked, TLS only, versioning off, lifecycle housekeeping', () => {
    const keyId = logicalId(main.stack, main.convoy.key);
    const bucketId = logicalId(main.stack, main.convoy.renderBucket);
    main.template.hasResourceProperties('AWS::KMS::Key', { EnableKeyRotation: true });
    const bucket = byType(main.template, 'AWS::S3::Bucket')[bucketId].Properties;
    expect(bucket['BucketEncryption']).toEqual({
      ServerSideEncryptionConfiguration: [
        {
          BucketKeyEnabled: true,
          ServerSideEncryptionByDefault: {
            SSEAlgorithm: 'aws:kms',
            KMSMasterKeyID: { 'Fn::GetAtt': [keyId, 'Arn'] },
          },
        },
      ],
    });
    expect(bucket['PublicAccessBlockConfiguration']).toEqual({
      BlockPublicAcls: true,
      BlockPublicPolicy: true,
      IgnorePublicAcls: true,
      RestrictPublicBuckets: true,
    });
    expect(bucket['VersioningConfiguration']).toBeUndefined();
    expect(bucket['LifecycleConfiguration']).toEqual({
      Rules: [
        expect.objectContaining({
          AbortIncompleteMultipartUpload: { DaysAfterInitiation: 1 },
          NoncurrentVersionExpiration: { NoncurrentDays: 1 },
        }),
      ],
    });
    main.template.hasResourceProperties('AWS::S3::BucketPolicy', {
      Bucket: { Ref: bucketId },
      PolicyDocument: {
        Statement: Match.arrayWith([
          Match.objectLike({
            Effect: 'Deny',
            Action: 's3:*',
            Condition: { Bool: { 'aws:SecureTransport': 'false' } },
          }),
        ]),
      },
    });
    main.template.hasResource('AWS::S3::Bucket', { DeletionPolicy: 'Retain' });
  });

  it('alarms: errors and throttles of each function, oldest-message age of each queue and visible messages of each DLQ, notifying the topic', () => {
    const alarms = Object.values(byType(main.template, 'AWS::CloudWatch::Alarm')).map((a) => a.Properties);
    expect(alarms).toHaveLength(16);
    const topicId = main.stack.getLogicalId(main.stack.node.findChild('Alarms').node.defaultChild as never);
    for (const loop of QUEUE_LOOPS) {
      for (const metric of ['Errors', 'Throttles']) {
        expect(alarms).toContainEqual(
          expect.objectContaining({
            MetricName: metric,
            Namespace: 'AWS/Lambda',
            Dimensions: [{ Name: 'FunctionName', Value: { Ref: fnId(loop) } }],
            AlarmActions: [{ Ref: topicId }],
            OKActions: [{ Ref: topicId }],
          }),
        );
      }
      expect(alarms).toContainEqual(
        expect.objectContaining({
          MetricName: 'ApproximateAgeOfOldestMessage',
          Namespace: 'AWS/SQS',
          Dimensions: [{ Name: 'QueueName', Value: { 'Fn::GetAtt': [queueId(loop), 'QueueName'] } }],
          Threshold: 900,
          AlarmActions: [{ Ref: topicId }],
        }),
      );
      expect(alarms).toContainEqual(
        expect.objectContaining({
          MetricName: 'ApproximateNumberOfMessagesVisible',
          Dimensions: [{ Name: 'QueueName', Value: { 'Fn::GetAtt': [dlqId(loop), 'QueueName'] } }],
          Threshold: 1,
          ComparisonOperator: 'GreaterThanOrEqualToThreshold',
          AlarmActions: [{ Ref: topicId }],
        }),
      );
    }
  });

  it('relay role: EKS Pod Identity trust (AssumeRole + TagSession) for the relay ServiceAccount; sends to the four queues, reads the bucket', () => {
    const roleId = logicalId(main.stack, main.convoy.relayRole);
    const role = byType(main.template, 'AWS::IAM::Role')[roleId].Properties;
    expect(role['AssumeRolePolicyDocument']).toEqual({
      Version: '2012-10-17',
      Statement: [
        {
          Effect: 'Allow',
          Principal: { Service: 'pods.eks.amazonaws.com' },
          Action: ['sts:AssumeRole', 'sts:TagSession'],
          Condition: {
            StringEquals: {
              'aws:RequestTag/kubernetes-namespace': 'convoy-system',
              'aws:RequestTag/kubernetes-service-account': 'convoy-relay',
            },
          },
        },
      ],
    });
    const statements = statementsOf(main.template, roleId);
    for (const loop of QUEUE_LOOPS) {
      const queueArn = JSON.stringify({ 'Fn::GetAtt': [queueId(loop), 'Arn'] });
      expect(
        statements.some(
          (s) => actionsOf([s]).includes('sqs:SendMessage') && JSON.stringify(s.Resource) === queueArn,
        ),
        loop,
      ).toBe(true);
    }
    expect(actionsOf(statements)).toEqual(
      expect.arrayContaining(['s3:GetObject', 's3:ListBucket', 'kms:Decrypt']),
    );
    expect(actionsOf(statements)).not.toContain('s3:PutObject');
    expect(actionsOf(statements)).not.toContain('sqs:ReceiveMessage');
  });

  it('IAM: only reconcile may write the bucket; drift, health and fleet read it', () => {
    const writes = ['s3:PutObject', 's3:DeleteObject'];
    const actions = (loop: QueueLoop) =>
      actionsOf(statementsOf(main.template, roleIdOf(main.template, fnId(loop))));
    expect(actions('reconcile')).toEqual(
      expect.arrayContaining([...writes, 's3:GetObject', 'kms:GenerateDataKey']),
    );
    for (const loop of ['drift', 'health', 'fleet'] as const) {
      expect(actions(loop)).toEqual(expect.arrayContaining(['s3:GetObject', 's3:ListBucket', 'kms:Decrypt']));
      for (const write of [...writes, 'kms:Encrypt', 'kms:GenerateDataKey'])
        expect(actions(loop)).not.toContain(write);
    }
  });

  it("IAM: each function consumes its own queue and sends only there (a busy Lease waits as a new message) and where its loop sends (reconcile → drift, health; drift → reconcile); the three loops read the reconcile queue's backlog", () => {
    const sendsTo = {
      reconcile: ['reconcile', 'drift', 'health'],
      drift: ['drift', 'reconcile'],
      health: ['health'],
      fleet: ['fleet'],
    } as const;
    for (const loop of QUEUE_LOOPS) {
      const statements = statementsOf(main.template, roleIdOf(main.template, fnId(loop)));
      const on = (action: string) =>
        QUEUE_LOOPS.filter((target) =>
          statements.some(
            (s) =>
              actionsOf([s]).includes(action) &&
              JSON.stringify(s.Resource) === JSON.stringify({ 'Fn::GetAtt': [queueId(target), 'Arn'] }),
          ),
        );
      expect(on('sqs:ReceiveMessage')).toEqual([loop]);
      expect(on('sqs:ChangeMessageVisibility')).toEqual([loop]);
      expect(on('sqs:SendMessage').sort()).toEqual([...sendsTo[loop]].sort());
      // Deploy bursts: reconcile, drift and health read the reconcile queue's backlog (functions/runtime/burst-guard.ts); fleet does not.
      expect(on('sqs:GetQueueAttributes').includes('reconcile')).toBe(loop !== 'fleet');
    }
  });

  it("IAM: each function may send to its own queue's dead-letter queue and to no other (an invalid message goes there at its first receive)", () => {
    for (const loop of QUEUE_LOOPS) {
      const statements = statementsOf(main.template, roleIdOf(main.template, fnId(loop)));
      const sendsTo = QUEUE_LOOPS.filter((target) =>
        statements.some(
          (s) =>
            actionsOf([s]).includes('sqs:SendMessage') &&
            JSON.stringify(s.Resource) === JSON.stringify({ 'Fn::GetAtt': [dlqId(target), 'Arn'] }),
        ),
      );
      expect(sendsTo, loop).toEqual([loop]);
    }
  });

  it('environment: the variables functions/runtime/config.ts reads, valid once CloudFormation resolves them; CONVOY_FLEET_QUEUE_URL only in the fleet function', () => {
    const functions = byType(main.template, 'AWS::Lambda::Function');
    const known = new Set(Object.keys(functionEnvSchema.shape));
    for (const loop of QUEUE_LOOPS) {
      const vars = (functions[fnId(loop)].Properties['Environment'] as { Variables: Record<string, unknown> })
        .Variables;
      expect(vars).toMatchObject({
        CONVOY_NAMESPACE: 'convoy-system',
        CONVOY_RENDER_BUCKET: { Ref: logicalId(main.stack, main.convoy.renderBucket) },
        CONVOY_RECONCILE_QUEUE_URL: { Ref: queueId('reconcile') },
        CONVOY_DRIFT_QUEUE_URL: { Ref: queueId('drift') },
        CONVOY_HEALTH_QUEUE_URL: { Ref: queueId('health') },
        CONVOY_KUBECONFIG_PATH: '/opt/kubeconfig/config',
      });
      if (loop === 'fleet') expect(vars['CONVOY_FLEET_QUEUE_URL']).toEqual({ Ref: queueId('fleet') });
      else expect(vars['CONVOY_FLEET_QUEUE_URL']).toBeUndefined();
      for (const name of Object.keys(vars).filter((n) => n.startsWith('CONVOY_')))
        expect(known, name).toContain(name);
      // What Lambda will hand the function: references resolved, AWS_REGION set by Lambda.
      const resolved = Object.fromEntries(
        Object.entries(vars).map(([k, v]) => [
          k,
          typeof v === 'string'
            ? v
            : k.endsWith('_URL')
              ? `https://sqs.eu-west-1.amazonaws.com/111111111111/${k}`
              : 'bucket',
        ]),
      );
      expect(() => loadFunctionConfig({ ...resolved, AWS_REGION: 'eu-west-1' })).not.toThrow();
    }
  });

  it('object limit: the reconcile function gets CONVOY_MAX_RENDER_OBJECTS and CONVOY_MAX_RENDER_BYTES (default 10000 and 32 MiB, or maxRenderObjects, maxRenderBytes), the observers do not; a bad value fails synth naming the prop', () => {
    const functions = byType(main.template, 'AWS::Lambda::Function');
    const varsOf = (fns: typeof functions, id: string) =>
      (fns[id]?.Properties['Environment'] as { Variables: Record<string, unknown> }).Variables;
    expect(varsOf(functions, fnId('reconcile'))).toMatchObject({
      CONVOY_MAX_RENDER_OBJECTS: '10000',
      CONVOY_MAX_RENDER_BYTES: String(32 * 1024 * 1024),
    });
    expect(varsOf(functions, fnId('drift'))['CONVOY_MAX_RENDER_OBJECTS']).toBeUndefined();
    expect(varsOf(functions, fnId('health'))['CONVOY_MAX_RENDER_OBJECTS']).toBeUndefined();
    const small = synth({ maxRenderObjects: 2_500, maxRenderBytes: 1_000_000 });
    const reconcileId = logicalId(small.stack, small.convoy.functions.reconcile);
    expect(varsOf(byType(small.template, 'AWS::Lambda::Function'), reconcileId)).toMatchObject({
      CONVOY_MAX_RENDER_OBJECTS: '2500',
      CONVOY_MAX_RENDER_BYTES: '1000000',
    });
    for (const bad of [0, 1.5])
      expect(() => synth({ maxRenderObjects: bad })).toThrow(
        /maxRenderObjects is .*whole number of at least 1/,
      );
    expect(() => synth({ maxRenderBytes: -1 })).toThrow(/maxRenderBytes is -1/);
    expect(() => synth({ maxRenderObjects: 0 })).toThrow(ConvoyConfigError);
  });

  it('OCI artifact size limit: maxOciArtifactBytes reaches the reconcile function as CONVOY_OCI_MAX_ARTIFACT_BYTES (unset = the function default); a bad value fails synth naming the prop', () => {
    const functions = byType(main.template, 'AWS::Lambda::Function');
    const varsOf = (fns: typeof functions, id: string) =>
      (fns[id]?.Properties['Environment'] as { Variables: Record<string, unknown> }).Variables;
    expect(varsOf(functions, fnId('reconcile'))['CONVOY_OCI_MAX_ARTIFACT_BYTES']).toBeUndefined();
    const small = synth({ maxOciArtifactBytes: 5_000_000 });
    const reconcileId = logicalId(small.stack, small.convoy.functions.reconcile);
    expect(varsOf(byType(small.template, 'AWS::Lambda::Function'), reconcileId)).toMatchObject({
      CONVOY_OCI_MAX_ARTIFACT_BYTES: '5000000',
    });
    expect(() => synth({ maxOciArtifactBytes: 0 })).toThrow(/maxOciArtifactBytes is 0/);
  });

  it("hint key: one generated secret (the construct's KMS key, kept like the store) whose ARN the three Release functions get and may read (not fleet: it neither seals nor reads hints); no key material in the template", () => {
    const secrets = main.template.findResources('AWS::SecretsManager::Secret') as Record<
      string,
      Resource & { DeletionPolicy?: string }
    >;
    const secretId = logicalId(main.stack, main.convoy.hintKeySecret);
    expect(Object.keys(secrets)).toEqual([secretId]);
    const secret = secrets[secretId];
    expect(secret?.Properties['GenerateSecretString']).toMatchObject({
      PasswordLength: 64,
      ExcludePunctuation: true,
    });
    expect(secret?.Properties['KmsKeyId']).toEqual({
      'Fn::GetAtt': [logicalId(main.stack, main.convoy.key), 'Arn'],
    });
    expect(secret?.DeletionPolicy).toBe('Retain');
    const functions = byType(main.template, 'AWS::Lambda::Function');
    for (const loop of LOOPS) {
      const vars = (functions[fnId(loop)].Properties['Environment'] as { Variables: Record<string, unknown> })
        .Variables;
      // The same secret for the three: a hint the reconcile seals verifies in drift and health.
      expect(vars['CONVOY_HINT_KEY_SECRET_ARN']).toEqual({ Ref: secretId });
      expect(vars['CONVOY_HINT_KEY']).toBeUndefined();
      const reads = statementsOf(main.template, roleIdOf(main.template, fnId(loop))).filter((s) =>
        actionsOf([s]).includes('secretsmanager:GetSecretValue'),
      );
      expect(reads.map((s) => s.Resource)).toEqual([{ Ref: secretId }]);
    }
    const fleetVars = (
      functions[fnId('fleet')].Properties['Environment'] as { Variables: Record<string, unknown> }
    ).Variables;
    expect(fleetVars['CONVOY_HINT_KEY_SECRET_ARN']).toBeUndefined();
    expect(actionsOf(statementsOf(main.template, roleIdOf(main.template, fnId('fleet'))))).not.toContain(
      'secretsmanager:GetSecretValue',
    );
    // Generated by Secrets Manager and read at init: no value, no dynamic reference anywhere.
    const text = JSON.stringify(main.template.toJSON());
    expect(text).not.toMatch(/"SecretString"/);
    expect(text).not.toContain('{{resolve:');
  });

  it('outputs: queue URLs, bucket name, relay role ARN and the relay manifests (without CRDs)', () => {
    const outputs = main.template.findOutputs('*') as Record<string, { Value: unknown }>;
    const find = (prefix: string) =>
      Object.entries(outputs).find(([id]) => id.startsWith(`Convoy${prefix}`))?.[1];
    for (const loop of QUEUE_LOOPS)
      expect(find(`${loop[0].toUpperCase()}${loop.slice(1)}QueueUrl`)?.Value).toEqual({ Ref: queueId(loop) });
    expect(find('RenderBucketName')?.Value).toEqual({ Ref: logicalId(main.stack, main.convoy.renderBucket) });
    expect(find('RelayRoleArn')?.Value).toEqual({
      'Fn::GetAtt': [logicalId(main.stack, main.convoy.relayRole), 'Arn'],
    });
    const manifests = JSON.stringify(find('RelayManifests')?.Value);
    for (const kind of [
      'Namespace',
      'ServiceAccount',
      'ClusterRole',
      'ClusterRoleBinding',
      'Role',
      'RoleBinding',
      'Deployment',
      'Service',
    ]) {
      expect(manifests).toContain(`\\"kind\\":\\"${kind}\\"`);
    }
    expect(manifests).not.toContain('CustomResourceDefinition');
    expect(manifests).toContain(queueId('drift'));
    // The relay sends ReleaseSet messages to the fleet queue (CONVOY_FLEET_QUEUE_URL in its environment).
    expect(manifests).toMatch(new RegExp(`CONVOY_FLEET_QUEUE_URL[^}]*${queueId('fleet')}`));
  });

  it('fleet function, least privilege: logs to its own group; consumes and sends only to the fleet queue; reads the render store; no hint key, no EKS target, no other queue', () => {
    const roleId = roleIdOf(main.template, fnId('fleet'));
    const statements = statementsOf(main.template, roleId);
    const queueArn = { 'Fn::GetAtt': [queueId('fleet'), 'Arn'] };
    const bucketId = logicalId(main.stack, main.convoy.renderBucket);
    const keyArn = { 'Fn::GetAtt': [logicalId(main.stack, main.convoy.key), 'Arn'] };
    const granted = [
      ...new Set(
        statements.flatMap((s) => actionsOf([s]).map((action) => `${action} ${JSON.stringify(s.Resource)}`)),
      ),
    ].sort();
    expect(granted).toEqual(
      [
        ...[
          'sqs:ReceiveMessage',
          'sqs:ChangeMessageVisibility',
          'sqs:GetQueueUrl',
          'sqs:DeleteMessage',
          'sqs:GetQueueAttributes',
          'sqs:SendMessage',
        ].map((a) => `${a} ${JSON.stringify(queueArn)}`),
        // A message that can never succeed is copied to its dead-letter queue at its first receive.
        ...['sqs:SendMessage', 'sqs:GetQueueUrl', 'sqs:GetQueueAttributes'].map(
          (a) => `${a} ${JSON.stringify({ 'Fn::GetAtt': [dlqId('fleet'), 'Arn'] })}`,
        ),
        `s3:GetObject ${JSON.stringify({ 'Fn::Join': ['', [{ 'Fn::GetAtt': [bucketId, 'Arn'] }, '/renders/*']] })}`,
        `s3:ListBucket ${JSON.stringify({ 'Fn::GetAtt': [bucketId, 'Arn'] })}`,
        `kms:Decrypt ${JSON.stringify(keyArn)}`,
      ].sort(),
    );
    // The execution policy (customer-managed): its own log group only.
    const managedIds = (
      byType(main.template, 'AWS::IAM::Role')[roleId].Properties['ManagedPolicyArns'] as { Ref: string }[]
    ).map((r) => r.Ref);
    expect(managedIds).toHaveLength(1);
    const logStatements = (
      byType(main.template, 'AWS::IAM::ManagedPolicy')[managedIds[0]].Properties['PolicyDocument'] as {
        Statement: Statement[];
      }
    ).Statement;
    const fleetFn = byType(main.template, 'AWS::Lambda::Function')[fnId('fleet')].Properties;
    const logGroupId = (fleetFn['LoggingConfig'] as { LogGroup: { Ref: string } }).LogGroup.Ref;
    expect(logStatements).toEqual([
      expect.objectContaining({
        Action: ['logs:CreateLogStream', 'logs:PutLogEvents'],
        Resource: { 'Fn::GetAtt': [logGroupId, 'Arn'] },
      }),
    ]);
  });
});

describe('Convoy construct, prop variants (bundling skipped)', () => {
  it('kubeconfigSecret: only its ARN (CONVOY_KUBECONFIG_SECRET_ARN) is in the environment, read at run time; the environment encrypted with the key', () => {
    const { template, stack, convoy } = synth({ secretName: 'convoy/kubeconfig' });
    for (const fn of Object.values(byType(template, 'AWS::Lambda::Function'))) {
      const vars = (fn.Properties['Environment'] as { Variables: Record<string, unknown> }).Variables;
      expect(vars['CONVOY_KUBECONFIG']).toBeUndefined();
      expect(JSON.stringify(vars)).not.toContain('{{resolve:secretsmanager:');
      expect(JSON.stringify(vars['CONVOY_KUBECONFIG_SECRET_ARN'])).toContain('convoy/kubeconfig');
      expect(vars['CONVOY_KUBECONFIG_PATH']).toBeUndefined();
      expect(fn.Properties['KmsKeyArn']).toEqual({ 'Fn::GetAtt': [logicalId(stack, convoy.key), 'Arn'] });
    }
  });

  it('no kubeconfig: a synth warning says the functions cannot reach the management cluster', () => {
    const { stack } = synth();
    Annotations.fromStack(stack).hasWarning(
      '/Test/Convoy',
      Match.stringLikeRegexp('neither kubeconfigSecret nor kubeconfigPath'),
    );
  });

  it('managementClusterName: a Pod Identity association for the relay ServiceAccount, and the trust pinned to that cluster', () => {
    const { template, stack, convoy } = synth({
      managementClusterName: 'mgmt',
      installationNamespace: 'convoy',
      kubeconfigPath: '/k',
    });
    const roleId = logicalId(stack, convoy.relayRole);
    template.hasResourceProperties('AWS::EKS::PodIdentityAssociation', {
      ClusterName: 'mgmt',
      Namespace: 'convoy',
      ServiceAccount: 'convoy-relay',
      RoleArn: { 'Fn::GetAtt': [roleId, 'Arn'] },
    });
    template.hasResourceProperties('AWS::IAM::Role', {
      AssumeRolePolicyDocument: {
        Statement: [
          Match.objectLike({
            Condition: {
              StringEquals: Match.objectLike({
                'aws:RequestTag/eks-cluster-name': 'mgmt',
                'aws:RequestTag/kubernetes-namespace': 'convoy',
              }),
            },
          }),
        ],
      },
    });
    template.hasResourceProperties('AWS::Lambda::Function', {
      Environment: { Variables: Match.objectLike({ CONVOY_NAMESPACE: 'convoy' }) },
    });
  });

  it('functionTimeout, maxConcurrency per loop, maxReceiveCount and the render expiry backstop are honoured', () => {
    const { template } = synth({
      kubeconfigPath: '/k',
      functionTimeout: Duration.minutes(5),
      maxConcurrency: { reconcile: 50, fleet: 4 },
      maxReceiveCount: 200,
      retention: { expireRendersAfter: Duration.days(400) },
    });
    template.allResourcesProperties('AWS::Lambda::Function', { Timeout: 300 });
    const queues = Object.values(byType(template, 'AWS::SQS::Queue'))
      .map((q) => q.Properties)
      .filter((q) => q['RedrivePolicy'] !== undefined);
    expect(
      queues.map((q) => [
        q['VisibilityTimeout'],
        (q['RedrivePolicy'] as { maxReceiveCount: number }).maxReceiveCount,
      ]),
    ).toEqual([
      [1800, 200],
      [1800, 200],
      [1800, 200],
      [1800, 200],
    ]);
    const concurrency = Object.values(byType(template, 'AWS::Lambda::EventSourceMapping')).map(
      (m) => (m.Properties['ScalingConfig'] as { MaximumConcurrency: number }).MaximumConcurrency,
    );
    expect(concurrency.sort((a, b) => a - b)).toEqual([4, 10, 10, 50]);
    template.hasResourceProperties('AWS::S3::Bucket', {
      LifecycleConfiguration: {
        Rules: Match.arrayWith([
          { Id: 'expire-old-renders', Prefix: 'renders/', ExpirationInDays: 400, Status: 'Enabled' },
        ]),
      },
    });
  });

  it('invalid props fail at synth with a message naming the prop', () => {
    expect(() => synth({ maxConcurrency: 1 })).toThrow(ConvoyConfigError);
    expect(() => synth({ maxConcurrency: 1 })).toThrow(/maxConcurrency for reconcile is 1/);
    expect(() => synth({ functionTimeout: Duration.minutes(16) })).toThrow(/functionTimeout/);
    expect(() => synth({ entries: { drift: '/nonexistent/handler.ts' } })).toThrow(
      /drift function's entry \/nonexistent\/handler.ts does not exist/,
    );
    expect(() => synth({ kubeconfigPath: '/k', secretName: 's' })).toThrow(/not both/);
    expect(() => synth({ entries: { fleet: '/nonexistent/fleet.ts' } })).toThrow(
      /fleet function's entry \/nonexistent\/fleet.ts does not exist/,
    );
    expect(() => synth({ maxConcurrency: { fleet: 1 } })).toThrow(/maxConcurrency for fleet is 1/);
    for (const bad of [0, 11, 2.5]) {
      expect(() => synth({ fleetBatchSize: bad })).toThrow(ConvoyConfigError);
      expect(() => synth({ fleetBatchSize: bad })).toThrow(
        new RegExp(`fleetBatchSize is ${bad}; give a whole number from 1 to 10`),
      );
    }
  });

  it('fleet props: memorySize.fleet and fleetBatchSize tune the fleet function and its mapping only', () => {
    const { template, stack, convoy } = synth({
      kubeconfigPath: '/k',
      memorySize: { fleet: 512 },
      fleetBatchSize: 5,
    });
    const fleetId = logicalId(stack, convoy.functions.fleet);
    const functions = byType(template, 'AWS::Lambda::Function');
    expect(functions[fleetId].Properties['MemorySize']).toBe(512);
    expect(functions[logicalId(stack, convoy.functions.drift)].Properties['MemorySize']).toBe(256);
    const batch = Object.fromEntries(
      Object.values(byType(template, 'AWS::Lambda::EventSourceMapping')).map((m) => [
        (m.Properties['FunctionName'] as { Ref: string }).Ref,
        m.Properties['BatchSize'],
      ]),
    );
    expect(batch).toEqual({
      [fleetId]: 5,
      [logicalId(stack, convoy.functions.reconcile)]: 10,
      [logicalId(stack, convoy.functions.drift)]: 10,
      [logicalId(stack, convoy.functions.health)]: 10,
    });
  });

  it('fleet with cluster, kubeconfigSecret or eksTargets: an access entry and the secret like the other functions, never an EKS target grant', () => {
    const eksTargets = {
      clusterArns: ['arn:aws:eks:eu-west-1:111111111111:cluster/target'],
      roleArns: ['arn:aws:iam::111111111111:role/deployer'],
    };
    const withSecret = synth({ secretName: 'convoy/kubeconfig', eksTargets });
    const actions = (loop: QueueLoop) =>
      actionsOf(
        statementsOf(
          withSecret.template,
          roleIdOf(withSecret.template, logicalId(withSecret.stack, withSecret.convoy.functions[loop])),
        ),
      );
    expect(actions('fleet')).toContain('secretsmanager:GetSecretValue');
    expect(actions('fleet')).not.toContain('eks:DescribeCluster');
    expect(actions('fleet')).not.toContain('sts:AssumeRole');
    for (const loop of LOOPS)
      expect(actions(loop)).toEqual(expect.arrayContaining(['eks:DescribeCluster', 'sts:AssumeRole']));
  });

  it('timings are derived from domain/runtime/timings.ts: visibility 6 × functionTimeout, maxReceiveCount from maxWaveTimeout; no CONVOY_LEASE_SECONDS', () => {
    const { template } = synth({
      kubeconfigPath: '/k',
      functionTimeout: Duration.minutes(2),
      maxWaveTimeout: Duration.hours(1),
    });
    template.allResourcesProperties('AWS::Lambda::Function', { Timeout: 120 });
    const queues = Object.values(byType(template, 'AWS::SQS::Queue'))
      .map((q) => q.Properties)
      .filter((q) => q['RedrivePolicy'] !== undefined);
    expect(
      queues.map((q) => [
        q['VisibilityTimeout'],
        (q['RedrivePolicy'] as { maxReceiveCount: number }).maxReceiveCount,
      ]),
    ).toEqual([
      [720, 370],
      [720, 370],
      [720, 370],
      [720, 370],
    ]);
    for (const fn of Object.values(byType(template, 'AWS::Lambda::Function'))) {
      expect(
        (fn.Properties['Environment'] as { Variables: Record<string, unknown> }).Variables,
      ).not.toHaveProperty('CONVOY_LEASE_SECONDS');
    }
  });

  it('timings: a queueVisibilityTimeout under 6 × functionTimeout fails synth naming both props and the AWS rule', () => {
    const attempt = () =>
      synth({
        kubeconfigPath: '/k',
        functionTimeout: Duration.minutes(10),
        queueVisibilityTimeout: Duration.minutes(30),
      });
    expect(attempt).toThrow(ConvoyConfigError);
    expect(attempt).toThrow(
      /queueVisibilityTimeout and functionTimeout: visibility 1800 s is less than 6 × the function timeout \(3600 s\)/,
    );
  });

  it("timings: a functionTimeout whose killed invocation's Lease outlives the visibility fails synth naming both props", () => {
    // 6 × 10 s = 60 s satisfies AWS's rule, but the Lease (60 s) would still be held when the batch comes back.
    const attempt = () => synth({ kubeconfigPath: '/k', functionTimeout: Duration.seconds(10) });
    expect(attempt).toThrow(ConvoyConfigError);
    expect(attempt).toThrow(
      /queueVisibilityTimeout and functionTimeout: a killed invocation's Lease expires up to 70 s after its batch was received/,
    );
    expect(() =>
      synth({
        kubeconfigPath: '/k',
        functionTimeout: Duration.seconds(10),
        queueVisibilityTimeout: Duration.seconds(71),
      }),
    ).not.toThrow();
  });

  it('timings: a maxReceiveCount a wave wait of maxWaveTimeout at 10-s rechecks would reach fails synth naming both props', () => {
    const attempt = () => synth({ kubeconfigPath: '/k', maxReceiveCount: 100 });
    expect(attempt).toThrow(ConvoyConfigError);
    expect(attempt).toThrow(
      /maxReceiveCount and maxWaveTimeout: a wait of maxWaveTimeout 1800 s rechecked every 10 s spends up to 190 receives/,
    );
    expect(() =>
      synth({ kubeconfigPath: '/k', maxReceiveCount: 100, maxWaveTimeout: Duration.minutes(15) }),
    ).not.toThrow();
  });

  it("timings: SQS's and Lambda's own limits fail synth naming the prop (visibility 12 h, 1000 receives, 15-min timeout)", () => {
    expect(() => synth({ kubeconfigPath: '/k', queueVisibilityTimeout: Duration.hours(13) })).toThrow(
      /queueVisibilityTimeout: is 46800 s; SQS accepts whole seconds up to 43200/,
    );
    expect(() => synth({ kubeconfigPath: '/k', maxWaveTimeout: Duration.hours(3) })).toThrow(
      /maxReceiveCount and maxWaveTimeout: maxReceiveCount is 1090; SQS accepts an integer from 1 to 1000/,
    );
    expect(() => synth({ kubeconfigPath: '/k', functionTimeout: Duration.minutes(16) })).toThrow(
      /functionTimeout: is 960 s; Lambda accepts whole seconds from 1 to 900/,
    );
  });

  it('ConvoyStack: the construct plus an alarms topic, wired to every alarm', () => {
    const app = new App({ outdir, context: testContext(false) });
    const stack = new ConvoyStack(app, 'Convoy', { kubeconfigSecretName: 'convoy/kubeconfig' });
    const template = Template.fromStack(stack);
    const topicId = stack.getLogicalId(stack.node.findChild('Alarms').node.defaultChild as never);
    template.resourceCountIs('AWS::SNS::Topic', 1);
    template.allResourcesProperties('AWS::CloudWatch::Alarm', {
      AlarmActions: [{ Ref: topicId }],
      OKActions: [{ Ref: topicId }],
    });
    template.hasResourceProperties('AWS::Lambda::Function', {
      Environment: { Variables: Match.objectLike({ CONVOY_KUBECONFIG_SECRET_ARN: Match.anyValue() }) },
    });
  });
});
