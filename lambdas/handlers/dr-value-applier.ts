// Backup region: values arriving in the bucket -> the region's shards (docs/dr.md). Each value is
// verified against its key message's sha256 and applied version-guarded, then its key stops being pending.
import type { Logger } from '@aws-lambda-powertools/logger';
import middy from '@middy/core';
import type { S3Event } from 'aws-lambda';
import type { BackupApplier } from '../core/dr-applier';
import { flushMetrics, type MetricsSink } from '../http/metrics';

/** S3 event keys are form-encoded (a space arrives as `+`). */
const objectKeyOf = (encoded: string) => decodeURIComponent(encoded.replace(/\+/g, ' '));

export interface DrValueApplierDeps {
  applier: BackupApplier;
  /** The DR metrics (values' lag, corrupt values), flushed after every event. */
  metrics: MetricsSink;
  logger: Logger;
}

export function drValueApplierHandler({ applier, metrics, logger }: DrValueApplierDeps) {
  return middy<S3Event>()
    .use(flushMetrics(metrics))
    .handler(async (event) => {
      // A failure throws: the asynchronous invocation is retried, and applying a value twice is harmless.
      const outcomes = await Promise.all(event.Records.map((record) => applier.receiveValue(objectKeyOf(record.s3.object.key))));
      if (outcomes.includes('corrupt')) logger.warn('DR values not applied: sha256 mismatch', { outcomes });
    });
}
