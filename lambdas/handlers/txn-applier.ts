// The transaction table's stream -> intents applied: an eventual transaction is answered at its decision,
// and this handler makes each committed transaction's intents its keys' values (readers meeting one
// first roll it forward themselves). Idempotent: a record delivered twice finds nothing left to apply.
import type { Logger } from '@aws-lambda-powertools/logger';
import middy from '@middy/core';
import type { DynamoDBBatchResponse, DynamoDBStreamEvent } from 'aws-lambda';
import { commitsOf } from '../adapters/dynamodb-txn-stream';
import type { TransactionService } from '../core/transactions';

export interface TxnApplierDeps {
  txns: TransactionService;
  logger: Logger;
}

export function txnApplierHandler({ txns, logger }: TxnApplierDeps) {
  return middy<DynamoDBStreamEvent, DynamoDBBatchResponse>().handler(async (event) => {
    const commits = commitsOf(event.Records);
    // A failure throws: the whole batch is retried (and bisected), which finishing twice makes harmless.
    const finished = await txns.finishDecided(commits);
    if (finished.rolledForward > 0) logger.debug('applied committed transactions', { transactions: commits.length, ...finished });
    return { batchItemFailures: [] };
  });
}
