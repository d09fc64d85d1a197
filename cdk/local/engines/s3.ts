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
import { createHash, randomUUID } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir, rename, unlink, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
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
/** An object as s3rver's controllers hand it to the store. */
interface StoreObject {
  bucket: string;
  key: string;
  content: Buffer | Readable;
  metadata: Record<string, string>;
}
/** The part of s3rver's filesystem store the stand-in patches. */
interface FilesystemStore {
  getResourcePath(bucket: string, key: string, resource: string): string;
  putMetadata(bucket: string, key: string, metadata: Record<string, string>, md5?: string): Promise<void>;
  putObject(object: StoreObject): Promise<{ size: number; md5: string }>;
  getObject(bucket: string, key: string, options?: unknown): Promise<unknown>;
  copyObject(srcBucket: string, srcKey: string, destBucket: string, destKey: string, replacementMetadata?: unknown): Promise<unknown>;
  deleteObject(bucket: string, key: string): Promise<void>;
}
interface S3rverInstance {
  middleware: KoaMiddleware[];
  /** Its request logger (winston). */
  logger: { silent: boolean };
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

const S3rver = require('s3rver') as S3rverCtor;
const S3Error = require('s3rver/lib/models/error') as S3ErrorCtor;
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
 * Runs the calls given one name one at a time, in order; calls on different names run freely. Written
 * here rather than taken from a mutex library: it is a promise chain per name, dropped once idle.
 */
function oneAtATimePerName(): <T>(name: string, call: () => Promise<T>) => Promise<T> {
  const tails = new Map<string, Promise<unknown>>();
  return async (name, call) => {
    const run = (tails.get(name) ?? Promise.resolve()).then(call, call);
    const tail = run.catch(() => undefined);
    tails.set(name, tail);
    try {
      return await run;
    } finally {
      if (tails.get(name) === tail) tails.delete(name);
    }
  };
}

/** A file's content written beside it and renamed over it, so a reader sees the old file or the new one. */
async function replaceFile(path: string, content: string): Promise<void> {
  const temporary = `${path}.${randomUUID()}.tmp`;
  await writeFile(temporary, content);
  await rename(temporary, path);
}

/**
 * Makes s3rver's objects read-after-write consistent, as S3's are. s3rver answers a PUT once the body
 * has entered its write stream, not once the file is written, and writes the file in place: a GET (or
 * the object-created event's reader) right after the answer could read an empty or cut object. The DR
 * appliers did, and took a sound value for a corrupt one. Here the body is written to a file beside the
 * object, flushed, and renamed over it; the metadata goes first, so an object that exists has its own.
 * A put, get, copy or delete of one object runs alone, so a reader never pairs the metadata of one
 * version with the bytes of another (a get holds the turn only until its file is open).
 *
 * s3rver's delete also removes the object's parent directories once they are empty, while a concurrent
 * upload to the same prefix may have created the directory and be about to open its file: the upload
 * then fails with ENOENT. Deletes here leave the directories; empty folders cost nothing locally, and
 * S3 has no directories to remove.
 */
function consistentObjects(store: FilesystemStore): void {
  const oneAtATime = oneAtATimePerName();
  const nameOf = (bucket: string, key: string) => store.getResourcePath(bucket, key, 'object');
  const getObject = store.getObject.bind(store);
  const copyObject = store.copyObject.bind(store);
  store.putObject = async (object) => {
    const objectPath = nameOf(object.bucket, object.key);
    await mkdir(dirname(objectPath), { recursive: true });
    const temporary = `${objectPath}.${randomUUID()}.tmp`;
    const md5 = createHash('md5');
    let size = 0;
    const counted = new Transform({
      transform(chunk: Buffer, _encoding, done) {
        md5.update(chunk);
        size += chunk.length;
        done(null, chunk);
      },
    });
    try {
      const source = Buffer.isBuffer(object.content) ? Readable.from([object.content]) : object.content;
      await pipeline(source, counted, createWriteStream(temporary));
      const digest = md5.digest('hex');
      await oneAtATime(objectPath, async () => {
        await store.putMetadata(object.bucket, object.key, object.metadata);
        await replaceFile(`${objectPath}.md5`, digest);
        await rename(temporary, objectPath);
      });
      return { size, md5: digest };
    } finally {
      await unlink(temporary).catch(() => undefined);
    }
  };
  store.getObject = (bucket, key, options) => oneAtATime(nameOf(bucket, key), () => getObject(bucket, key, options));
  store.copyObject = (srcBucket, srcKey, destBucket, destKey, replacementMetadata) =>
    oneAtATime(nameOf(destBucket, destKey), () => copyObject(srcBucket, srcKey, destBucket, destKey, replacementMetadata));
  store.deleteObject = (bucket, key) =>
    oneAtATime(nameOf(bucket, key), async () => {
      await Promise.all(
        ['object', 'object.md5', 'metadata.json'].map((resource) =>
          unlink(store.getResourcePath(bucket, key, resource)).catch((error: unknown) => {
            if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
          }),
        ),
      );
    });
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
  // Silent as a whole, not only its console transport: a request cut short by stop() (a disaster in the fault
  // suites) is otherwise reported on stderr by winston's "Attempt to write logs with no transports".
  server.logger.silent = true;
  server.middleware.unshift(parityGuard);
  consistentObjects(server.store);
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
