// POST /v1/txn: plans the transaction; one whose keys live on one shard commits here in one atomic write,
// any other runs the state machine synchronously. The outcome is the answer.
import type { Logger } from '@aws-lambda-powertools/logger';
import middy from '@middy/core';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { TxnBody, TxnQuery } from '../../schemas/api';
import type { TransactionService } from '../core/transactions';
import { txnAbortError } from '../core/txn-errors';
import type { Clock, Orchestrator, TxnOutcome } from '../ports';
import { httpErrors } from '../http/errors';
import { jsonBody, parseWith, principalOf } from '../http/request';
import { json } from '../http/response';
import { router } from '../http/router';
import { callerAndQuotas, type RequestGuardDeps } from './request-guards';

/** What a transaction reports to the metrics: its outcome, how it ran, and how long it took. */
export interface TxnOutcomeMetrics {
  ended(outcome: TxnOutcome, path: 'oneShard' | 'stateMachine', durationMs: number): void;
}

export interface TxnDeps {
  txns: TransactionService;
  /** Runs the state machine of a transaction on more than one shard. */
  transactions: Orchestrator;
  stats: TxnOutcomeMetrics;
  guards: RequestGuardDeps;
  clock: Clock;
  logger: Logger;
}

export function txnHandler({ txns, transactions, stats, guards, clock, logger }: TxnDeps) {
  return middy<APIGatewayProxyEvent, APIGatewayProxyResult>()
    .use(httpErrors(logger))
    .use(callerAndQuotas(guards))
    .handler(
      router('txn', {
        transact: async (event) => {
          const body = parseWith(TxnBody, jsonBody(event), 'body');
          const { consistency } = parseWith(TxnQuery, event.queryStringParameters, 'query');
          const principal = principalOf(event);
          const ops = body.ops.map((op) =>
            op.op === 'put' ? { ...op, value: new Uint8Array(Buffer.from(op.value, op.encoding === 'base64' ? 'base64' : 'utf8')) } : op,
          );
          const execution = await txns.plan(principal.namespace, ops, {
            consistency: consistency ?? principal.writeConsistency,
            ...(body.timeoutMs === undefined ? {} : { timeoutMs: body.timeoutMs }),
            ...(principal.storage ? { storageQuota: principal.storage } : {}),
          });
          const started = clock.monotonicMs();
          const oneShard = await txns.commitOnOneShard(execution);
          const outcome = oneShard ?? (await transactions.run(execution));
          stats.ended(outcome, oneShard ? 'oneShard' : 'stateMachine', clock.monotonicMs() - started);
          if (outcome.status === 'aborted') throw txnAbortError(outcome);
          // What the hooks require before the answer: a DR primary answers once its backup knows of the writes, and
          // within its lease (docs/dr.md).
          await txns.decided(execution, outcome, principal.drMode);
          await txns.assertAcknowledgeable();
          const reads = outcome.reads.map(({ valueBase64, ...read }) => ({
            ...read,
            ...(valueBase64 === undefined ? {} : { value: valueBase64 }),
          }));
          return json(200, { ...outcome, reads });
        },
      }),
    );
}
