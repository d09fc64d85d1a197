// Reads DynamoDB stream records of the shard tables as owner changes for the replicator.
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import type { AttributeValue as LambdaAttributeValue, DynamoDBRecord } from 'aws-lambda';
import type { OwnerChange } from '../core/replication';
import type { FeedChange } from '../core/watch';
import { isCopyImage, storedItemOfImage } from './dynamodb-item-codec';

/** `arn:aws:dynamodb:<region>:<account>:table/<name>/stream/<label>` -> `<name>`. */
export function tableOfStreamArn(arn: string): string | undefined {
  return /:table\/([^/]+)\/stream\//.exec(arn)?.[1];
}

/**
 * A stream image as the SDK types it, from the image a Lambda event carries. The event is JSON, so
 * binary attributes (`B`, `BS`: a value kept inline, an intent's value) arrive base64-encoded; the
 * stored item needs their bytes.
 */
export function sdkImageOf(image: Record<string, LambdaAttributeValue>): Record<string, AttributeValue> {
  return Object.fromEntries(Object.entries(image).map(([name, value]) => [name, sdkValueOf(value)]));
}

/** Plain bytes (not a Buffer view), as the SDK's own unmarshalling gives them. */
const bytesOfBase64 = (base64: string) => new Uint8Array(Buffer.from(base64, 'base64'));

function sdkValueOf(value: LambdaAttributeValue): AttributeValue {
  if (value.B !== undefined) return { B: bytesOfBase64(value.B) };
  if (value.BS !== undefined) return { BS: value.BS.map(bytesOfBase64) };
  if (value.M !== undefined) return { M: sdkImageOf(value.M) };
  if (value.L !== undefined) return { L: value.L.map(sdkValueOf) };
  // S, N, BOOL, NULL, SS and NS are the same JSON in both shapes; only the two type libraries differ.
  return value;
}

/**
 * The image a Lambda event carries for an SDK image (binary attributes base64-encoded): the local
 * event source mapping builds its events with it, and tests build records the way AWS sends them.
 */
export function lambdaImageOf(image: Record<string, AttributeValue>): Record<string, LambdaAttributeValue> {
  return Object.fromEntries(Object.entries(image).map(([name, value]) => [name, lambdaValueOf(value)]));
}

function lambdaValueOf(value: AttributeValue): LambdaAttributeValue {
  if (value.B !== undefined) return { B: Buffer.from(value.B).toString('base64') };
  if (value.BS !== undefined) return { BS: value.BS.map((b) => Buffer.from(b).toString('base64')) };
  if (value.M !== undefined) return { M: lambdaImageOf(value.M) };
  if (value.L !== undefined) return { L: value.L.map(lambdaValueOf) };
  // S, N, BOOL, NULL, SS and NS are the same JSON in both shapes; only the two type libraries differ.
  return value as LambdaAttributeValue;
}

/** Each record that carries a new image (and the old version, if any), with the sequence number to report if it fails. */
export function ownerChangesOf(records: readonly DynamoDBRecord[]): { changes: OwnerChange[]; sequenceNumbers: string[] } {
  const changes: OwnerChange[] = [];
  const sequenceNumbers: string[] = [];
  for (const record of records) {
    // REMOVE records are TTL expiry or cleanup: every replica expires its own copy by the same ttl.
    const image = record.dynamodb?.NewImage;
    const sourceTable = tableOfStreamArn(record.eventSourceARN ?? '');
    if (record.eventName === 'REMOVE' || !image || !sourceTable) continue;
    const oldVersion = record.dynamodb?.OldImage?.v?.N;
    const previousVersion = oldVersion === undefined ? undefined : Number(oldVersion);
    const sdkImage = sdkImageOf(image);
    changes.push({
      sourceTable,
      item: storedItemOfImage(sdkImage),
      ...(previousVersion === undefined ? {} : { previousVersion }),
      ...(isCopyImage(sdkImage) ? { copied: true } : {}),
    });
    sequenceNumbers.push(record.dynamodb?.SequenceNumber ?? '');
  }
  return { changes, sequenceNumbers };
}

/** DynamoDB's own deletion of an expired item (TTL): a REMOVE record whose identity is the service's. */
function isTtlRemoval(record: DynamoDBRecord): boolean {
  const identity = (record as { userIdentity?: { type?: string; principalId?: string } }).userIdentity;
  return record.eventName === 'REMOVE' && identity?.type === 'Service' && identity.principalId === 'dynamodb.amazonaws.com';
}

/**
 * Each record as the change feed sees it (lambdas/core/watch.ts): a new image, copy or not, and TTL removals with
 * their old image; other removals (a move's cleanup, a rejoin's reset) are no change of the key.
 */
export function feedChangesOf(records: readonly DynamoDBRecord[]): { changes: FeedChange[]; sequenceNumbers: string[] } {
  const changes: FeedChange[] = [];
  const sequenceNumbers: string[] = [];
  for (const record of records) {
    const image = isTtlRemoval(record) ? record.dynamodb?.OldImage : record.eventName === 'REMOVE' ? undefined : record.dynamodb?.NewImage;
    const sourceTable = tableOfStreamArn(record.eventSourceARN ?? '');
    if (!image || !sourceTable) continue;
    const sdkImage = sdkImageOf(image);
    const oldVersion = record.dynamodb?.OldImage?.v?.N;
    changes.push({
      sourceTable,
      item: storedItemOfImage(sdkImage),
      copied: isCopyImage(sdkImage),
      ...(record.eventName === 'REMOVE' ? { expired: true } : {}),
      ...(record.eventName !== 'REMOVE' && oldVersion !== undefined ? { previousVersion: Number(oldVersion) } : {}),
    });
    sequenceNumbers.push(record.dynamodb?.SequenceNumber ?? '');
  }
  return { changes, sequenceNumbers };
}
