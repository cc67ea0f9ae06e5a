// The construct's notifications prop under cdk-nag AwsSolutionsChecks: the bus created, named or
// given, and the functions' one grant on it — events:PutEvents on that bus's ARN, nothing wider.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App, Stack, Validations } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import * as events from 'aws-cdk-lib/aws-events';
import * as sns from 'aws-cdk-lib/aws-sns';
import { AwsSolutionsChecks } from 'cdk-nag';
import { afterAll, describe, expect, it } from 'vitest';
import { Convoy, type ConvoyProps } from '../../../infra/convoy-construct.ts';
import { EVENT_BUS_VARIABLE } from '../../../infra/notifications.ts';
import { checkTemplate, type CfnTemplate } from '../../package/template-checks.ts';

const outdir = mkdtempSync(join(tmpdir(), 'convoy-notify-nag-'));
afterAll(() => rmSync(outdir, { recursive: true, force: true }));

type Statement = { Action: unknown; Resource: unknown; Effect: string };
type Resources = Record<string, { Properties: Record<string, unknown> }>;

function synth(notifications: (stack: Stack) => ConvoyProps['notifications']) {
  const app = new App({
    outdir,
    context: { 'aws:cdk:disable-asset-staging': true, 'aws:cdk:bundling-stacks': [] },
  });
  const stack = new Stack(app, 'User', { env: { account: '111111111111', region: 'eu-west-1' } });
  const convoy = new Convoy(stack, 'Convoy', {
    kubeconfigPath: '/opt/kubeconfig',
    alarmsTopic: new sns.Topic(stack, 'Alarms', { enforceSSL: true }),
    notifications: notifications(stack),
  });
  Validations.of(app).addPlugins(new AwsSolutionsChecks(app, { writeSuppressionsToCloudFormation: true }));
  app.synth();
  const template = Template.fromStack(stack);
  const statements = Object.values(template.findResources('AWS::IAM::Policy') as Resources).flatMap(
    (p) => (p.Properties['PolicyDocument'] as { Statement: Statement[] }).Statement,
  );
  const putEvents = statements.filter((s) => JSON.stringify(s.Action).includes('events:'));
  const functions = Object.values(template.findResources('AWS::Lambda::Function') as Resources)
    .map((f) => f.Properties)
    .filter((f) => String(f['Description']).startsWith('convoy '));
  return { convoy, template, putEvents, functions };
}

describe('notifications on AWS: one bus, PutEvents on it only', { timeout: 120_000 }, () => {
  it('notifications: {} creates a bus; every function may PutEvents on that bus and nothing else; cdk-nag clean', () => {
    const { template, putEvents, functions, convoy } = synth(() => ({}));
    expect(checkTemplate(template.toJSON() as CfnTemplate)).toEqual([]);
    template.resourceCountIs('AWS::Events::EventBus', 1);
    const busId = Object.keys(template.findResources('AWS::Events::EventBus'))[0];
    expect(putEvents).toHaveLength(4);
    for (const s of putEvents) {
      expect(s).toEqual({
        Action: 'events:PutEvents',
        Effect: 'Allow',
        Resource: { 'Fn::GetAtt': [busId, 'Arn'] },
      });
    }
    expect(functions).toHaveLength(4);
    for (const f of functions) {
      expect(
        (f['Environment'] as { Variables: Record<string, unknown> }).Variables[EVENT_BUS_VARIABLE],
      ).toEqual({ Ref: busId });
    }
    expect(convoy.notificationBus).toBeDefined();
  });

  it('busName names an existing bus: no bus created, the grant on its ARN', () => {
    const { template, putEvents } = synth(() => ({ busName: 'platform-events' }));
    template.resourceCountIs('AWS::Events::EventBus', 0);
    expect(JSON.stringify(putEvents[0]?.Resource)).toContain(':event-bus/platform-events');
    expect(() => synth(() => ({ busName: 'has space' }))).toThrow(
      /notifications\.busName: "has space" is not an EventBridge bus name/,
    );
  });

  it('eventBus gives a bus of the app; without notifications nothing is created or granted', () => {
    const { putEvents } = synth((stack) => ({
      eventBus: new events.EventBus(stack, 'Shared', { eventBusName: 'shared' }),
    }));
    expect(putEvents).toHaveLength(4);
    const none = synth(() => undefined);
    none.template.resourceCountIs('AWS::Events::EventBus', 0);
    expect(none.putEvents).toEqual([]);
    expect(none.convoy.notificationBus).toBeUndefined();
  });
});
