// Each namespace's request-rate bucket in the control table: one item per namespace holding its theoretical
// arrival time (TAT), moved forward by conditional writes so that every instance shares one bucket.
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { $add, Entity, UpdateItemCommand, item, number, string } from 'dynamodb-toolbox';
import { rateBucketPartitionPrefix } from '../../schemas/topology';
import type { RateLimitStore, RateTake } from '../ports';
import { isConditionalCheckFailure, translateAwsError } from './aws-errors';
import { controlEntityOptions, controlTable } from './dynamodb-control-table';

/**
 * A partition per namespace, not one for every bucket: a busy namespace's takes (at most about
 * `rateLeasesPerSecond` a second at its full rate) must not share a partition's throughput with the others.
 */
const bucketPartitionOf = (namespace: string) => `${rateBucketPartitionPrefix}${namespace}`;
const bucketSortKey = 'bucket';

/**
 * Writes one take may send: a take that finds the bucket idle (TAT in the past) restarts it with a second
 * write, which another instance's take can beat; the next attempt then finds the TAT current.
 */
const takeAttemptsMax = 3;

function bucketEntity(tableName: string, documentClient: DynamoDBDocumentClient) {
  return new Entity({
    name: 'rateBucket',
    table: controlTable(tableName, documentClient),
    ...controlEntityOptions,
    schema: item({ pk: string().key(), sk: string().key(), tat: number() }),
  });
}

/** The TAT of a refused write's item as it stood (DynamoDB's wire format), or undefined when there was none. */
function tatOf(error: unknown): number | undefined {
  const stored = (error as { Item?: { tat?: { N?: string } } }).Item?.tat?.N;
  return stored === undefined ? undefined : Number(stored);
}

export class DynamoRateLimitStore implements RateLimitStore {
  private readonly buckets: ReturnType<typeof bucketEntity>;

  constructor(documentClient: DynamoDBDocumentClient, tableName: string) {
    this.buckets = bucketEntity(tableName, documentClient);
  }

  async take(namespace: string, request: { nowMs: number; costMs: number; toleranceMs: number }): Promise<RateTake> {
    const { nowMs, costMs, toleranceMs } = request;
    const key = { pk: bucketPartitionOf(namespace), sk: bucketSortKey };
    let tatMs: number | undefined;
    for (let attempt = 1; attempt <= takeAttemptsMax; attempt += 1) {
      try {
        // A bucket in use (TAT now or later): grant while the new TAT stays within the tolerance.
        await this.send(
          this.buckets
            .build(UpdateItemCommand)
            .item({ ...key, tat: $add(costMs) })
            .options({
              condition: {
                and: [
                  { attr: 'tat', gte: nowMs },
                  { attr: 'tat', lte: nowMs + toleranceMs - costMs },
                ],
              },
              returnValuesOnConditionFalse: 'ALL_OLD',
            }),
        );
        return { granted: true };
      } catch (error) {
        if (!isConditionalCheckFailure(error)) throw error;
        tatMs = tatOf(error);
        if (tatMs !== undefined && tatMs >= nowMs) return { granted: false, tatMs };
      }
      try {
        // An idle bucket (no TAT yet, or one in the past) restarts from now; the cost is within the
        // tolerance, since a lease never takes more than the burst.
        await this.send(
          this.buckets
            .build(UpdateItemCommand)
            .item({ ...key, tat: nowMs + costMs })
            .options({
              condition: {
                or: [
                  { attr: 'tat', exists: false },
                  { attr: 'tat', lt: nowMs },
                ],
              },
            }),
        );
        return { granted: true };
      } catch (error) {
        if (!isConditionalCheckFailure(error)) throw error;
      }
    }
    // Every attempt lost a race to other instances' takes: the bucket is busy, so this one waits a cost.
    return { granted: false, tatMs: Math.max(tatMs ?? nowMs, nowMs) + toleranceMs };
  }

  /** Sends a conditional write, translating every failure but its condition's. */
  private async send(command: { send(): Promise<unknown> }): Promise<void> {
    try {
      await command.send();
    } catch (error) {
      throw isConditionalCheckFailure(error) ? error : translateAwsError(error, 'rate bucket write');
    }
  }
}
