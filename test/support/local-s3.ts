// A local S3 engine (s3rver with Ringstore's changes) for one test file: started before its tests with
// one bucket, stopped and removed after them.
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { s3ClientOptions } from '../../cdk/local/engines';
import { freePort } from '../../cdk/local/engines/free-port';
import { startS3, type StartedS3 } from '../../cdk/local/engines/s3';

export interface LocalS3 {
  s3: StartedS3;
  client: S3Client;
  dataDir: string;
}

/**
 * Registers the engine's start and stop with jest; its fields are set once beforeAll has run.
 *
 * @example
 * const engine = useLocalS3('my-bucket');
 * it('stores', async () => engine.client.send(new PutObjectCommand({ Bucket: 'my-bucket', Key: 'k', Body: 'v' })));
 */
export function useLocalS3(bucket: string): LocalS3 {
  const engine = {} as LocalS3;
  beforeAll(async () => {
    engine.dataDir = mkdtempSync(join(tmpdir(), `ringstore-s3-${bucket}-`));
    engine.s3 = await startS3({ dataDir: engine.dataDir, port: await freePort(), log: () => undefined });
    engine.client = new S3Client(s3ClientOptions(engine.s3.endpoint));
    await engine.client.send(new CreateBucketCommand({ Bucket: bucket }));
  });
  afterAll(async () => {
    engine.client?.destroy();
    await engine.s3?.stop();
    if (engine.dataDir) rmSync(engine.dataDir, { recursive: true, force: true });
  });
  return engine;
}
