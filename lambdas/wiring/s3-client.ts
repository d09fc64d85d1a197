// The S3 client of an instance set. Its own module, loaded on first use (see blobStore in data.ts): the
// S3 SDK is the largest package a KV handler bundles and most requests never touch it.
import { S3Client } from '@aws-sdk/client-s3';
import { clientOptions, withoutRequestLogging } from './clients';
import { traced } from './observability';
import type { Wiring } from './wiring';

export function s3Client(wiring: Wiring): S3Client {
  return wiring.shared('s3', () =>
    traced(
      wiring,
      withoutRequestLogging(
        new S3Client({
          ...clientOptions(wiring, wiring.config.s3Endpoint),
          // Local S3 engines address buckets by path; AWS accepts both.
          forcePathStyle: Boolean(wiring.config.s3Endpoint),
          requestChecksumCalculation: 'WHEN_REQUIRED',
          responseChecksumValidation: 'WHEN_REQUIRED',
        }),
      ),
    ),
  );
}
