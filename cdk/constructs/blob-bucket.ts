// The S3 bucket for values too large to inline in a shard item (over 350 KB: docs/api.md, "Large values"), and its access-log bucket.
import { Duration, RemovalPolicy } from 'aws-cdk-lib';
import { BlockPublicAccess, Bucket, BucketEncryption, HttpMethods, ObjectOwnership } from 'aws-cdk-lib/aws-s3';
import { Construct } from 'constructs';
import { limits, type Names } from '../../schemas/topology';
import { blobPrefixes } from './data-refs';
import { pitrRetentionDays } from './tables';

/** How long S3 keeps an access log. */
export const accessLogRetentionDays = 90;
/** An upload not committed within this many days is garbage (presigned URLs live 15 minutes). */
export const uncommittedUploadDays = 1;

export interface BlobBucketProps {
  names: Names;
}

export class BlobBucket extends Construct {
  readonly bucket: Bucket;
  readonly accessLogs: Bucket;

  constructor(scope: Construct, id: string, props: BlobBucketProps) {
    super(scope, id);

    this.accessLogs = new Bucket(this, 'AccessLogs', {
      blockPublicAccess: BlockPublicAccess.BLOCK_ALL,
      enforceSSL: true,
      // S3 server access logging can only deliver to SSE-S3 buckets.
      encryption: BucketEncryption.S3_MANAGED,
      objectOwnership: ObjectOwnership.BUCKET_OWNER_ENFORCED,
      lifecycleRules: [{ id: 'expire-logs', expiration: Duration.days(accessLogRetentionDays) }],
      removalPolicy: RemovalPolicy.RETAIN,
    });

    this.bucket = new Bucket(this, 'Bucket', {
      bucketName: props.names.blobBucket,
      blockPublicAccess: BlockPublicAccess.BLOCK_ALL,
      enforceSSL: true,
      encryption: BucketEncryption.S3_MANAGED,
      objectOwnership: ObjectOwnership.BUCKET_OWNER_ENFORCED,
      serverAccessLogsBucket: this.accessLogs,
      serverAccessLogsPrefix: 'blob-bucket/',
      // Versioning on, for restores: a shard table restored with PITR (up to 35 days back) may point
      // at blobs deleted since. Keeping noncurrent versions as long as PITR reaches keeps every
      // restorable item's blob restorable too. Live blobs are written once under a new key, so
      // versioning costs nothing until a blob is deleted.
      versioned: true,
      // Presigned URLs are used from browsers as well as the SDK and CLI.
      cors: [
        {
          allowedMethods: [HttpMethods.PUT, HttpMethods.GET, HttpMethods.HEAD],
          allowedOrigins: ['*'],
          allowedHeaders: ['*'],
          exposedHeaders: ['ETag', 'Content-Length', 'x-amz-checksum-sha256'],
          maxAge: limits.presignedUrlTtlSeconds,
        },
      ],
      lifecycleRules: [
        { id: 'abort-incomplete-multipart', abortIncompleteMultipartUploadAfter: Duration.days(1) },
        {
          id: 'expire-uncommitted-uploads',
          prefix: blobPrefixes.uploads,
          expiration: Duration.days(uncommittedUploadDays),
          noncurrentVersionExpiration: Duration.days(uncommittedUploadDays),
        },
        { id: 'clean-upload-delete-markers', prefix: blobPrefixes.uploads, expiredObjectDeleteMarker: true },
        {
          id: 'expire-deleted-blobs',
          prefix: blobPrefixes.blobs,
          noncurrentVersionExpiration: Duration.days(pitrRetentionDays),
          expiredObjectDeleteMarker: true,
        },
      ],
      removalPolicy: RemovalPolicy.RETAIN,
    });
  }
}
