// The S3 bucket for values too large to inline in a shard item (over 350 KB: docs/api.md, "Large values"), and its access-log bucket.
import { Duration, RemovalPolicy } from 'aws-cdk-lib';
import type { IKey } from 'aws-cdk-lib/aws-kms';
import { BlockPublicAccess, Bucket, BucketEncryption, HttpMethods, ObjectOwnership } from 'aws-cdk-lib/aws-s3';
import { Construct } from 'constructs';
import { drPrefixes, limits, type Names } from '../../schemas/topology';
import { blobPrefixes } from './data-refs';
import { pitrRetentionDays } from './tables';

/** How long S3 keeps an access log. */
export const accessLogRetentionDays = 90;
/** An upload not committed within this many days is garbage (presigned URLs live 15 minutes). */
export const uncommittedUploadDays = 1;

/**
 * Default of CDK context `blobNoncurrentVersionDays`: how long a replaced or deleted blob stays recoverable
 * as a noncurrent version. As long as PITR reaches back (a shard table restored to any point in its window
 * finds the blobs its items point at); a shorter window saves storage and gives up restores older than it.
 */
export const defaultNoncurrentBlobDays = pitrRetentionDays;

export interface BlobBucketProps {
  names: Names;
  /** Days a noncurrent version of a blob is kept (CDK context `blobNoncurrentVersionDays`). */
  noncurrentVersionDays?: number;
  /** A customer-managed key (CDK context `kmsKey=customer`); absent: S3-managed keys (SSE-S3). */
  encryptionKey?: IKey;
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
      // An explicit bucket policy: every request not sent over TLS is denied, on the bucket and its objects.
      enforceSSL: true,
      ...(props.encryptionKey
        ? // A bucket key: S3 asks KMS for a data key per bucket and period, not per object.
          { encryption: BucketEncryption.KMS, encryptionKey: props.encryptionKey, bucketKeyEnabled: true }
        : { encryption: BucketEncryption.S3_MANAGED }),
      objectOwnership: ObjectOwnership.BUCKET_OWNER_ENFORCED,
      serverAccessLogsBucket: this.accessLogs,
      serverAccessLogsPrefix: 'blob-bucket/',
      // Versioning on, for restores: a value replaced or deleted by mistake, and a shard table restored
      // with PITR (up to 35 days back) that points at blobs deleted since, find them as noncurrent
      // versions for noncurrentVersionDays (by default as long as PITR reaches). Live blobs are written
      // once under a new key, so versioning costs nothing until a blob is deleted.
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
        ...[blobPrefixes.blobs, drPrefixes.values].map((prefix) => ({
          // dr/values/ holds a DR backup's large values as blobs, and values its appliers inlined and removed.
          id: prefix === blobPrefixes.blobs ? 'expire-deleted-blobs' : 'expire-deleted-dr-values',
          prefix,
          noncurrentVersionExpiration: Duration.days(props.noncurrentVersionDays ?? defaultNoncurrentBlobDays),
          expiredObjectDeleteMarker: true,
        })),
      ],
      removalPolicy: RemovalPolicy.RETAIN,
    });
  }
}
