// Reads DynamoDB stream records of the shard tables as owner changes for the replicator.
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import type { DynamoDBRecord } from 'aws-lambda';
import type { OwnerChange } from '../core/replication';
import { storedItemOfImage } from './dynamodb-item-codec';

/** `arn:aws:dynamodb:<region>:<account>:table/<name>/stream/<label>` -> `<name>`. */
export function tableOfStreamArn(arn: string): string | undefined {
  return /:table\/([^/]+)\/stream\//.exec(arn)?.[1];
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
    changes.push({
      sourceTable,
      item: storedItemOfImage(image as Record<string, AttributeValue>),
      ...(previousVersion === undefined ? {} : { previousVersion }),
    });
    sequenceNumbers.push(record.dynamodb?.SequenceNumber ?? '');
  }
  return { changes, sequenceNumbers };
}
