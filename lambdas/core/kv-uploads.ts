// The large-value flow (docs/api.md, "Large values"): a presigned PUT the client sends the bytes to, then a
// commit that verifies them and makes them the key's value, versioned like any write.
import { type Conditions, planWrite } from './conditions';
import { RingstoreError } from './errors';
import type { BlobStore, Clock, IdSource } from '../ports';
import { sha256Hex } from './digest';
import { guardOf, type KvWriter, type WriteAck } from './kv-writes';
import { validateKey } from './validation';
import type { WriteHooks, WriteSettings } from './write-hooks';
import { blobPrefixes } from '../../schemas/topology';

export interface KvUploadLimits {
  keyBytesMax: number;
  valueBytesMax: number;
  inlineValueBytesMax: number;
  presignedUrlTtlSeconds: number;
  entityTagsMax: number;
}

export interface KvUploadDeps {
  writer: Pick<KvWriter, 'writeContent' | 'expiresAt' | 'blobKey'>;
  hooks: Pick<WriteHooks, 'assertWritable'>;
  blobs: BlobStore;
  clock: Pick<Clock, 'nowMs'>;
  ids: IdSource;
  limits: KvUploadLimits;
}

export interface UploadTicket {
  uploadId: string;
  url: string;
  method: 'PUT';
  headers: Record<string, string>;
  expiresAt: string;
}

export interface CommitInput extends Conditions, WriteSettings {
  sha256: string;
  contentType: string;
  ttlSeconds?: number;
}

const uploadIdPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

export class KvUploads {
  constructor(private readonly deps: KvUploadDeps) {}

  /** Step 1: a presigned PUT the client sends the bytes to. */
  async create(namespace: string, key: string, input: { contentType: string; size?: number }): Promise<UploadTicket> {
    validateKey(key, this.deps.limits);
    await this.deps.hooks.assertWritable();
    if (input.size !== undefined && input.size > this.deps.limits.valueBytesMax) {
      throw tooLarge(input.size, this.deps.limits.valueBytesMax);
    }
    const uploadId = this.deps.ids.newId();
    const expiresInSeconds = this.deps.limits.presignedUrlTtlSeconds;
    const { url, headers } = await this.deps.blobs.presignPut(uploadKey(namespace, key, uploadId), {
      contentType: input.contentType,
      expiresInSeconds,
    });
    const expiresAt = new Date(this.deps.clock.nowMs() + expiresInSeconds * 1000).toISOString();
    return { uploadId, url, method: 'PUT', headers, expiresAt };
  }

  /** Step 2: verify the uploaded bytes and make them the key's value, versioned like any write. */
  async commit(namespace: string, key: string, uploadId: string, input: CommitInput): Promise<WriteAck> {
    validateKey(key, this.deps.limits);
    await this.deps.hooks.assertWritable();
    const { blobs, limits, writer } = this.deps;
    const plan = planWrite(key, input, 'put', limits.entityTagsMax);
    const expiresAtSeconds = writer.expiresAt(input.ttlSeconds);
    if (!uploadIdPattern.test(uploadId)) {
      throw new RingstoreError('kv.uploadNotFound', `upload ${uploadId} does not exist for key ${key}`);
    }
    const uploadObject = uploadKey(namespace, key, uploadId);
    const size = await blobs.size(uploadObject);
    if (size === undefined) {
      throw new RingstoreError('kv.uploadNotFound', `upload ${uploadId} for key ${key} has no bytes: PUT them to the upload URL first`);
    }
    if (size > limits.valueBytesMax) {
      await blobs.delete(uploadObject);
      throw tooLarge(size, limits.valueBytesMax);
    }
    const sha256 = await blobs.sha256(uploadObject);
    if (sha256 !== input.sha256.toLowerCase()) {
      throw new RingstoreError('kv.checksumMismatch', `uploaded bytes have sha256 ${sha256}, not ${input.sha256}`, {
        details: { field: 'sha256', actual: sha256 },
      });
    }
    // Refused only now: a missing or bad upload answers as it would without conditions (RFC 9110 §13.2.1).
    // The upload is kept, so the client may commit it again with other conditions.
    const guard = guardOf(plan, input, 'put');
    const content = { contentType: input.contentType, size, sha256, expiresAtSeconds };
    let ack: WriteAck;
    if (size <= limits.inlineValueBytesMax) {
      ack = await writer.writeContent(namespace, key, guard, { ...content, value: await blobs.get(uploadObject) }, input);
    } else {
      // Uploads expire by a lifecycle rule; committed bytes move under blobs/ where they stay.
      const objectKey = writer.blobKey(namespace);
      await blobs.copy(uploadObject, objectKey);
      ack = await writer.writeContent(namespace, key, guard, { ...content, blob: { objectKey } }, input);
    }
    await blobs.delete(uploadObject);
    return ack;
  }
}

/** Uploads are addressed by namespace, key and id, so one namespace can never commit another's bytes. */
export function uploadKey(namespace: string, key: string, uploadId: string): string {
  return `${blobPrefixes.uploads}${namespace}/${sha256Hex(key).slice(0, 32)}/${uploadId}`;
}

export function tooLarge(size: number, limit: number): RingstoreError {
  return new RingstoreError('kv.valueTooLarge', `value is ${size} bytes; the limit is ${limit}`, { details: { size, limit } });
}
