import { Stack, type StackProps } from 'aws-cdk-lib';
import * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import * as sns from 'aws-cdk-lib/aws-sns';
import type { Construct } from 'constructs';
import { Convoy, type ConvoyProps } from './convoy-construct.ts';

export interface ConvoyStackProps extends StackProps {
  /** Passed to the Convoy construct; alarmsTopic defaults to a topic of this stack. */
  readonly convoy?: ConvoyProps;
  /** Name of an existing Secrets Manager secret with the management kubeconfig (instead of convoy.kubeconfigSecret). */
  readonly kubeconfigSecretName?: string;
}

/** One convoy installation: the Convoy construct and an SNS topic for its alarms. */
export class ConvoyStack extends Stack {
  readonly convoy: Convoy;
  readonly alarmsTopic: sns.ITopic;

  constructor(scope: Construct, id: string, props: ConvoyStackProps = {}) {
    super(scope, id, props);
    this.alarmsTopic =
      props.convoy?.alarmsTopic ??
      new sns.Topic(this, 'Alarms', { displayName: 'convoy alarms', enforceSSL: true });
    const kubeconfigSecret =
      props.convoy?.kubeconfigSecret ??
      (props.kubeconfigSecretName === undefined
        ? undefined
        : secretsmanager.Secret.fromSecretNameV2(this, 'Kubeconfig', props.kubeconfigSecretName));
    this.convoy = new Convoy(this, 'Convoy', {
      ...props.convoy,
      alarmsTopic: this.alarmsTopic,
      ...(kubeconfigSecret === undefined ? {} : { kubeconfigSecret }),
    });
  }
}
