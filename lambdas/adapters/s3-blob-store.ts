// BlobStore on S3: values over the inline limit, and the presigned URLs of the large-value flow.
import { createHash } from 'node:crypto';
import type { Readable } from 'node:stream';
import {
  CopyObjectCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  HeadObjectCommand,
  PutObjectCommand,
  type S3Client,
} from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import type { BlobStore } from '../ports';
import { awsCall, translateAwsError } from './aws-errors';

/** When `put` sends a value as a multipart upload: from this size, in parts of `partBytes`, `concurrency` at once. */
export interface MultipartOptions {
  fromBytes: number;
  partBytes: number;
  concurrency: number;
}

export class S3BlobStore implements BlobStore {
  /**
   * @param client the S3 client used for I/O.
   * @param presignClient the client whose endpoint the presigned URLs carry: in AWS the same client;
   *   locally one whose endpoint the user's machine can reach.
   * @param multipart large values as multipart uploads (the DR shipper's link to the backup region); none: one PUT.
   */
  constructor(
    private readonly client: S3Client,
    private readonly bucket: string,
    private readonly presignClient: S3Client = client,
    private readonly multipart?: MultipartOptions,
  ) {}

  async put(objectKey: string, bytes: Uint8Array, contentType: string): Promise<void> {
    const params = { Bucket: this.bucket, Key: objectKey, Body: bytes, ContentType: contentType };
    const multipart = this.multipart;
    if (multipart && bytes.length >= multipart.fromBytes) {
      // lib-storage's Upload: parts in parallel, retried one by one, the upload aborted if it fails.
      const { Upload } = await import('@aws-sdk/lib-storage');
      const upload = new Upload({ client: this.client, params, partSize: multipart.partBytes, queueSize: multipart.concurrency });
      await awsCall(`multipart upload of ${objectKey}`, () => upload.done());
      return;
    }
    await awsCall(`upload of ${objectKey}`, () => this.client.send(new PutObjectCommand(params)));
  }

  async get(objectKey: string): Promise<Uint8Array> {
    const response = await awsCall(`download of ${objectKey}`, () =>
      this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key: objectKey })),
    );
    if (!response.Body) throw translateAwsError(new Error('empty body'), `download of ${objectKey}`);
    return response.Body.transformToByteArray();
  }

  async size(objectKey: string): Promise<number | undefined> {
    try {
      const head = await this.client.send(new HeadObjectCommand({ Bucket: this.bucket, Key: objectKey }));
      return head.ContentLength ?? 0;
    } catch (error) {
      const name = (error as { name?: string }).name;
      if (name === 'NotFound' || name === 'NoSuchKey') return undefined;
      throw translateAwsError(error, `size of ${objectKey}`);
    }
  }

  async sha256(objectKey: string): Promise<string> {
    const response = await awsCall(`download of ${objectKey}`, () =>
      this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key: objectKey })),
    );
    const hash = createHash('sha256');
    // Streamed so a 10 MiB upload is hashed without holding a second copy in memory.
    for await (const chunk of response.Body as Readable) hash.update(chunk as Buffer);
    return hash.digest('hex');
  }

  async copy(fromKey: string, toKey: string): Promise<void> {
    await awsCall(`copy of ${fromKey}`, () =>
      this.client.send(new CopyObjectCommand({ Bucket: this.bucket, Key: toKey, CopySource: `${this.bucket}/${fromKey}` })),
    );
  }

  async delete(objectKey: string): Promise<void> {
    await awsCall(`delete of ${objectKey}`, () => this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: objectKey })));
  }

  async presignPut(objectKey: string, options: { contentType: string; expiresInSeconds: number }) {
    const url = await getSignedUrl(
      this.presignClient,
      new PutObjectCommand({ Bucket: this.bucket, Key: objectKey, ContentType: options.contentType }),
      { expiresIn: options.expiresInSeconds, signableHeaders: new Set(['content-type']) },
    );
    return { url, headers: { 'content-type': options.contentType } };
  }

  async presignGet(objectKey: string, options: { expiresInSeconds: number }): Promise<string> {
    return getSignedUrl(this.presignClient, new GetObjectCommand({ Bucket: this.bucket, Key: objectKey }), {
      expiresIn: options.expiresInSeconds,
    });
  }
}
