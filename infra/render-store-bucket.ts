/**
 * The render store's bucket (the Convoy construct's `renderBucket`): KMS with a bucket key,
 * versioning off, public access blocked, TLS 1.2 only, objects owned by the bucket; lifecycle
 * rules abort incomplete uploads and, with `retention.expireRendersAfter`, expire old renders.
 * Server access logs go to `serverAccessLogsBucket` when given; otherwise cdk-nag's S1 is
 * acknowledged with its reason.
 */
import { Duration, type RemovalPolicy } from 'aws-cdk-lib';
import type * as kms from 'aws-cdk-lib/aws-kms';
import * as s3 from 'aws-cdk-lib/aws-s3';
import type { Construct } from 'constructs';
import type { ConvoyProps } from './convoy-props.ts';
import { acknowledge } from './function-iam.ts';

/** The bucket `RenderStore` of `scope`, encrypted with `key`. */
export function renderStoreBucket(
  scope: Construct,
  props: Pick<ConvoyProps, 'retention' | 'serverAccessLogsBucket'> & {
    key: kms.IKey;
    removalPolicy: RemovalPolicy;
  },
): s3.Bucket {
  const lifecycleRules: s3.LifecycleRule[] = [
    {
      id: 'abort-incomplete-uploads-and-noncurrent-versions',
      abortIncompleteMultipartUploadAfter: Duration.days(1),
      // Versioning is off; this only matters if someone turns it on, so old versions do not pile up.
      noncurrentVersionExpiration: Duration.days(1),
    },
  ];
  if (props.retention?.expireRendersAfter !== undefined) {
    lifecycleRules.push({
      id: 'expire-old-renders',
      prefix: 'renders/',
      expiration: props.retention.expireRendersAfter,
    });
  }
  const bucket = new s3.Bucket(scope, 'RenderStore', {
    encryption: s3.BucketEncryption.KMS,
    encryptionKey: props.key,
    bucketKeyEnabled: true,
    versioned: false,
    blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL,
    enforceSSL: true,
    minimumTLSVersion: 1.2,
    objectOwnership: s3.ObjectOwnership.BUCKET_OWNER_ENFORCED,
    lifecycleRules,
    removalPolicy: props.removalPolicy,
    ...(props.serverAccessLogsBucket !== undefined
      ? {
          serverAccessLogsBucket: props.serverAccessLogsBucket,
          serverAccessLogsPrefix: 'convoy-render-store/',
        }
      : {}),
  });
  if (props.serverAccessLogsBucket === undefined) {
    acknowledge(
      bucket,
      'AwsSolutions-S1',
      "Only convoy's functions and relay read and write the render store, through IAM scoped to its renders/ prefix; pass serverAccessLogsBucket for access logs, or turn on CloudTrail data events.",
    );
  }
  return bucket;
}
