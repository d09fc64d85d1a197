// S3 stand-in: s3rver in this process, objects persisted under the data directory.
//
// Client options every S3Client in Ringstore must use (see s3ClientOptions below):
// - forcePathStyle: true — s3rver serves buckets at http://127.0.0.1:<port>/<bucket>; no vhost DNS.
// - requestChecksumCalculation: 'WHEN_REQUIRED' — since @aws-sdk/client-s3 3.729 the default
//   ('WHEN_SUPPORTED') (a) sends stream bodies as aws-chunked with a CRC32 trailer, which s3rver
//   does not decode and would store framing and all, and (b) bakes the CRC32 of an *empty* body
//   (x-amz-checksum-crc32=AAAAAA==) into presigned PutObject URLs, which real S3 then rejects for
//   any non-empty upload. So this setting is needed on AWS too for the presigned-upload path.
// - responseChecksumValidation: 'WHEN_REQUIRED' — s3rver returns no checksum headers; this keeps
//   the SDK from expecting them.
// - credentials localCredentials: s3rver only knows its own key pair, so we register ours with it.
// Requests that would be silently mangled (aws-chunked bodies, presigned uploads carrying the
// empty-body CRC32) are refused here with a 400 that names the fix, instead of passing locally and
// failing on AWS. Never set ChecksumAlgorithm together with a stream Body (that is aws-chunked again).
import type { S3ClientConfig } from '@aws-sdk/client-s3';
import type { S3Event } from 'aws-lambda';
import type { IncomingHttpHeaders, Server } from 'node:http';
import { mkdir, unlink } from 'node:fs/promises';
import { localCredentials, localRegion } from './aws';
import { LOCAL_HOST } from './free-port';
import type { StartedEngine } from './types';

/**
 * The S3 client config for a local endpoint, or for AWS when `endpoint` is undefined (then only
 * the checksum settings apply; credentials and region come from the environment).
 *
 * @example
 * const s3 = new S3Client(s3ClientOptions(engines.s3Endpoint));
 */
export function s3ClientOptions(endpoint?: string): S3ClientConfig {
  const checksums = { requestChecksumCalculation: 'WHEN_REQUIRED', responseChecksumValidation: 'WHEN_REQUIRED' } as const;
  if (endpoint === undefined) return { ...checksums };
  return { ...checksums, endpoint, region: localRegion, credentials: { ...localCredentials }, forcePathStyle: true };
}

/** The empty-payload CRC32 the SDK signs into presigned PutObject URLs by default. */
const EMPTY_BODY_CRC32 = 'AAAAAA==';

// Minimal typing of the parts of s3rver (untyped CommonJS) used here.
interface KoaContext {
  method: string;
  headers: IncomingHttpHeaders;
  query: Record<string, string | string[] | undefined>;
}
type KoaMiddleware = (ctx: KoaContext, next: () => Promise<unknown>) => Promise<unknown>;
/** The part of s3rver's filesystem store the stand-in patches. */
interface FilesystemStore {
  getResourcePath(bucket: string, key: string, resource: string): string;
  deleteObject(bucket: string, key: string): Promise<void>;
}
interface S3rverInstance {
  middleware: KoaMiddleware[];
  store: FilesystemStore;
  httpServer?: Server;
  run(): Promise<{ port: number; address: string }>;
  close(): Promise<void>;
  on(event: 'event', listener: (event: S3Event) => void): void;
}
type S3rverCtor = new (options: Record<string, unknown>) => S3rverInstance;
type S3ErrorCtor = new (code: string, message: string, detail?: Record<string, string>) => Error;
interface AwsAccountModule {
  DUMMY_ACCOUNT: { createKeyPair(accessKeyId: string, secretAccessKey: string): void };
}

// eslint-disable-next-line @typescript-eslint/no-require-imports
const S3rver = require('s3rver') as S3rverCtor;
// eslint-disable-next-line @typescript-eslint/no-require-imports
const S3Error = require('s3rver/lib/models/error') as S3ErrorCtor;
// eslint-disable-next-line @typescript-eslint/no-require-imports
const AwsAccount = require('s3rver/lib/models/account') as AwsAccountModule;

// s3rver checks the access key id against a process-wide registry (it skips SigV4 verification).
AwsAccount.DUMMY_ACCOUNT.createKeyPair(localCredentials.accessKeyId, localCredentials.secretAccessKey);

function first(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

/** Refuses requests that s3rver would accept but store wrongly, or that AWS would reject. */
const parityGuard: KoaMiddleware = async (ctx, next) => {
  const sha = first(ctx.headers['x-amz-content-sha256']) ?? '';
  const encoding = first(ctx.headers['content-encoding']) ?? '';
  if (sha.startsWith('STREAMING-') || encoding.split(',').some((e) => e.trim() === 'aws-chunked')) {
    throw new S3Error(
      'InvalidRequest',
      'The local S3 (s3rver) cannot decode aws-chunked bodies; create the S3Client with s3ClientOptions() from cdk/local/engines/s3 (requestChecksumCalculation: WHEN_REQUIRED)',
    );
  }
  const presignedCrc = first(ctx.query['x-amz-checksum-crc32'] ?? ctx.query['X-Amz-Checksum-Crc32']);
  const length = Number(first(ctx.headers['content-length']) ?? '0');
  if (ctx.method === 'PUT' && presignedCrc === EMPTY_BODY_CRC32 && length > 0) {
    throw new S3Error(
      'BadDigest',
      'The CRC32 you specified did not match the calculated checksum (the URL was presigned with the empty-body CRC32; presign with s3ClientOptions(), requestChecksumCalculation: WHEN_REQUIRED)',
    );
  }
  return next();
};

/**
 * s3rver's delete removes the object's parent directories once they are empty, while a concurrent
 * upload to the same prefix may have created the directory and be about to open its file: the upload's
 * write stream then fails with ENOENT and, having no error listener, crashes the process. Concurrent
 * uploads of one key (two writers, the presigned flow) hit it. Deletes here leave the directories;
 * empty folders cost nothing locally, and S3 has no directories to remove.
 */
function keepEmptyDirectories(store: FilesystemStore): void {
  store.deleteObject = async (bucket, key) => {
    await Promise.all(
      ['object', 'object.md5', 'metadata.json'].map((resource) =>
        unlink(store.getResourcePath(bucket, key, resource)).catch((error: unknown) => {
          if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
        }),
      ),
    );
  };
}

/** S3 event notifications encode keys like a form (space as '+'); s3rver reports them raw. */
export function encodeEventKey(key: string): string {
  return key
    .split('/')
    .map((segment) => encodeURIComponent(segment).replace(/%20/g, '+'))
    .join('/');
}

export interface StartedS3 extends StartedEngine {
  /** Subscribes to object-created/removed notifications, delivered asynchronously. Returns an unsubscribe. */
  onEvent(listener: (event: S3Event) => void): () => void;
}

export interface S3StartOptions {
  dataDir: string;
  port: number;
  log: (line: string) => void;
}

/**
 * Starts s3rver on 127.0.0.1:`port`, persisting objects under `dataDir`. Buckets are created by the
 * caller with CreateBucket.
 *
 * @example
 * const s3 = await startS3({ dataDir: '.ringstore/data/s3', port: 4568, log: console.log });
 * const client = new S3Client(s3ClientOptions(s3.endpoint));
 */
export async function startS3(opts: S3StartOptions): Promise<StartedS3> {
  await mkdir(opts.dataDir, { recursive: true });
  const server = new S3rver({
    address: LOCAL_HOST,
    port: opts.port,
    directory: opts.dataDir,
    silent: true,
    vhostBuckets: false,
  });
  server.middleware.unshift(parityGuard);
  keepEmptyDirectories(server.store);
  const listeners = new Set<(event: S3Event) => void>();
  server.on('event', (event) => {
    const normalized: S3Event = {
      Records: event.Records.map((r) => ({ ...r, s3: { ...r.s3, object: { ...r.s3.object, key: encodeEventKey(r.s3.object.key) } } })),
    };
    // Like S3 notifications, listeners run after the response, and their failures are theirs.
    setImmediate(() => {
      for (const listener of listeners) {
        try {
          listener(normalized);
        } catch (e) {
          opts.log(`S3 event listener failed: ${e instanceof Error ? e.message : String(e)}`);
        }
      }
    });
  });
  await server.run();
  const endpoint = `http://${LOCAL_HOST}:${opts.port}`;
  let stopping: Promise<void> | undefined;
  return {
    name: 's3',
    endpoint,
    onEvent(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    stop() {
      stopping ??= (async () => {
        listeners.clear();
        const closed = server.close();
        // close() waits for keep-alive sockets of SDK clients; cut them so stop is bounded.
        server.httpServer?.closeAllConnections();
        await closed;
      })();
      return stopping;
    },
  };
}
