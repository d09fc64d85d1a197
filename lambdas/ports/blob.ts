// Values over the inline limit, kept in S3.

export interface BlobStore {
  put(objectKey: string, bytes: Uint8Array, contentType: string): Promise<void>;
  get(objectKey: string): Promise<Uint8Array>;
  /** Size of an object, or undefined when it does not exist. */
  size(objectKey: string): Promise<number | undefined>;
  /** Lowercase hex sha256 of an object's bytes, computed by streaming. */
  sha256(objectKey: string): Promise<string>;
  copy(fromKey: string, toKey: string): Promise<void>;
  delete(objectKey: string): Promise<void>;
  presignPut(
    objectKey: string,
    options: { contentType: string; expiresInSeconds: number },
  ): Promise<{ url: string; headers: Record<string, string> }>;
  presignGet(objectKey: string, options: { expiresInSeconds: number }): Promise<string>;
}
