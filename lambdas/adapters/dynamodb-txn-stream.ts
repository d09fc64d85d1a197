// Reads the transaction table's stream records as decisions for the applier. Apart from the shard
// streams' reader so the replicator's bundle does not load the transaction store at start-up.
import type { DynamoDBRecord } from 'aws-lambda';
import type { TxnRecord } from '../ports';
import { sdkImageOf } from './dynamodb-stream';
import { txnRecordOfImage } from './dynamodb-txn-store';

/**
 * The transactions the records show being committed (pending before, committed after): what the applier
 * finishes. The record's own write (pending), an abort (its workflow clears the intents) and its TTL
 * removal are not.
 */
export function commitsOf(records: readonly DynamoDBRecord[]): TxnRecord[] {
  return records.flatMap((record) => {
    const { NewImage, OldImage } = record.dynamodb ?? {};
    if (record.eventName !== 'MODIFY' || !NewImage || NewImage.status?.S !== 'committed' || OldImage?.status?.S !== 'pending') return [];
    return [txnRecordOfImage(sdkImageOf(NewImage))];
  });
}
