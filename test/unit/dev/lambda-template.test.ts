// Reading the functions' settings from a CloudFormation template (dev/lambda/template.ts) and
// resolving its Ref / Fn::GetAtt values to local stand-ins (dev/lambda/resolve.ts).
import { describe, expect, it } from 'vitest';
import { resolveEnvironment, ResolveError } from '../../../dev/lambda/resolve.ts';
import { readFunctionSettings, TemplateError, type CfnTemplate } from '../../../dev/lambda/template.ts';

const loops = ['reconcile', 'drift', 'health', 'fleet'] as const;
const cap = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);

function template(
  overrides: { mapping?: Record<string, unknown>; fn?: Record<string, unknown> } = {},
): CfnTemplate {
  const resources: Record<string, CfnTemplate['Resources'][string]> = {
    Bucket: { Type: 'AWS::S3::Bucket' },
    Secret: { Type: 'AWS::SecretsManager::Secret' },
    Layer: { Type: 'AWS::Lambda::LayerVersion', Metadata: { 'aws:asset:path': 'asset.layer.zip' } },
  };
  for (const loop of loops) {
    resources[`${cap(loop)}Dlq`] = { Type: 'AWS::SQS::Queue', Properties: {} };
    resources[`${cap(loop)}Queue`] = {
      Type: 'AWS::SQS::Queue',
      Properties: {
        VisibilityTimeout: 330,
        RedrivePolicy: {
          deadLetterTargetArn: { 'Fn::GetAtt': [`${cap(loop)}Dlq`, 'Arn'] },
          maxReceiveCount: 100,
        },
      },
    };
  }
  for (const loop of loops) {
    resources[`${cap(loop)}Function`] = {
      Type: 'AWS::Lambda::Function',
      Properties: {
        Handler: 'index.handler',
        Runtime: 'nodejs24.x',
        MemorySize: loop === 'reconcile' ? 1024 : 512,
        Timeout: 300,
        Layers: loop === 'reconcile' ? [{ Ref: 'Layer' }] : [],
        Environment: {
          Variables: {
            CONVOY_RECONCILE_QUEUE_URL: { Ref: 'ReconcileQueue' },
            CONVOY_DRIFT_QUEUE_URL: { Ref: 'DriftQueue' },
            CONVOY_HEALTH_QUEUE_URL: { Ref: 'HealthQueue' },
            CONVOY_RENDER_BUCKET: { Ref: 'Bucket' },
            CONVOY_CACHE_DIR: '/tmp/convoy',
            // As the construct writes them: the hint key for the Release functions, the fleet queue for the fleet function.
            ...(loop === 'fleet'
              ? { CONVOY_FLEET_QUEUE_URL: { Ref: 'FleetQueue' } }
              : { CONVOY_HINT_KEY_SECRET_ARN: { Ref: 'Secret' } }),
          },
        },
        ...(overrides.fn ?? {}),
      },
      Metadata: { 'aws:asset:path': `asset.${loop}` },
    };
    resources[`${cap(loop)}Mapping`] = {
      Type: 'AWS::Lambda::EventSourceMapping',
      Properties: {
        BatchSize: 10,
        EventSourceArn: { 'Fn::GetAtt': [`${cap(loop)}Queue`, 'Arn'] },
        FunctionName: { Ref: `${cap(loop)}Function` },
        FunctionResponseTypes: ['ReportBatchItemFailures'],
        ScalingConfig: { MaximumConcurrency: 10 },
        ...(overrides.mapping ?? {}),
      },
    };
  }
  return { Resources: resources };
}

describe('readFunctionSettings', () => {
  it("reads each function's handler, memory, timeout, code, layers and mapping, by the queue it reads", () => {
    const settings = readFunctionSettings(template());
    expect(settings.reconcile).toMatchObject({
      logicalId: 'ReconcileFunction',
      handler: 'index.handler',
      runtime: 'nodejs24.x',
      memorySize: 1024,
      timeoutSeconds: 300,
      codeAsset: 'asset.reconcile',
      layerAssets: ['asset.layer.zip'],
      eventSource: {
        batchSize: 10,
        maximumBatchingWindowInSeconds: 0,
        maximumConcurrency: 10,
        reportBatchItemFailures: true,
        queue: {
          logicalId: 'ReconcileQueue',
          visibilityTimeoutSeconds: 330,
          redrive: { deadLetterLogicalId: 'ReconcileDlq', maxReceiveCount: 100 },
        },
      },
    });
    expect(settings.health.memorySize).toBe(512);
    expect(settings.drift.layerAssets).toEqual([]);
    // The fleet function is the one whose mapping reads the queue its CONVOY_FLEET_QUEUE_URL names,
    // though it also carries the three Release queues' URLs.
    expect(settings.fleet).toMatchObject({
      logicalId: 'FleetFunction',
      codeAsset: 'asset.fleet',
      eventSource: { queue: { logicalId: 'FleetQueue' } },
    });
  });

  it('takes the batching window and the response types as the mapping sets them; defaults otherwise', () => {
    const settings = readFunctionSettings(
      template({
        mapping: {
          MaximumBatchingWindowInSeconds: 5,
          FunctionResponseTypes: undefined,
          ScalingConfig: undefined,
          BatchSize: undefined,
        },
      }),
    );
    expect(settings.drift.eventSource).toMatchObject({
      maximumBatchingWindowInSeconds: 5,
      reportBatchItemFailures: false,
      maximumConcurrency: undefined,
      batchSize: 10,
    });
  });

  it('a template without a mapping for a loop, or a function without its code asset, is refused naming it', () => {
    const t = template();
    delete (t.Resources as Record<string, unknown>)['HealthMapping'];
    expect(() => readFunctionSettings(t)).toThrow(TemplateError);
    expect(() => readFunctionSettings(t)).toThrow(/health queue/);
    const noFleet = template();
    delete (noFleet.Resources as Record<string, unknown>)['FleetMapping'];
    expect(() => readFunctionSettings(noFleet)).toThrow(/no function fed by the fleet queue/);
    const noAsset = template();
    (noAsset.Resources['DriftFunction'] as { Metadata?: unknown }).Metadata = {};
    expect(() => readFunctionSettings(noAsset)).toThrow(/DriftFunction has no aws:asset:path/);
  });
});

describe('resolveEnvironment', () => {
  const resources = {
    ReconcileQueue: { ref: 'http://127.0.0.1:1/q/r', attributes: { Arn: 'arn:aws:sqs:us-east-1:0:r' } },
    DriftQueue: { ref: 'http://127.0.0.1:1/q/d' },
    HealthQueue: { ref: 'http://127.0.0.1:1/q/h' },
    Bucket: { ref: 'convoy-renders' },
    Secret: { ref: 'arn:aws:secretsmanager:us-east-1:0:secret:hint' },
  };

  it('maps Ref and Fn::GetAtt to the local stand-ins by logical id; plain strings stay', () => {
    const env = resolveEnvironment(readFunctionSettings(template()).reconcile.environment, resources);
    expect(env).toEqual({
      CONVOY_RECONCILE_QUEUE_URL: 'http://127.0.0.1:1/q/r',
      CONVOY_DRIFT_QUEUE_URL: 'http://127.0.0.1:1/q/d',
      CONVOY_HEALTH_QUEUE_URL: 'http://127.0.0.1:1/q/h',
      CONVOY_RENDER_BUCKET: 'convoy-renders',
      CONVOY_HINT_KEY_SECRET_ARN: 'arn:aws:secretsmanager:us-east-1:0:secret:hint',
      CONVOY_CACHE_DIR: '/tmp/convoy',
    });
    expect(
      resolveEnvironment(
        {
          A: { 'Fn::GetAtt': ['ReconcileQueue', 'Arn'] },
          B: { 'Fn::Join': [':', ['x', { Ref: 'Bucket' }]] },
        },
        resources,
      ),
    ).toEqual({ A: 'arn:aws:sqs:us-east-1:0:r', B: 'x:convoy-renders' });
  });

  it('a value with no stand-in fails naming the variable', () => {
    expect(() => resolveEnvironment({ CONVOY_X: { Ref: 'Nope' } }, resources)).toThrow(ResolveError);
    expect(() => resolveEnvironment({ CONVOY_X: { Ref: 'Nope' } }, resources)).toThrow(
      /CONVOY_X: \{ Ref: Nope \}/,
    );
  });
});
