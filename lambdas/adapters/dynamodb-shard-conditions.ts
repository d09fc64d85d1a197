// The conditions of the shard store's writes (a client's precondition, an intent's expectation, what a failed
// check means) and the attributes an owner write sets.
import { $remove, type Condition } from 'dynamodb-toolbox';
import { createHash } from 'node:crypto';
import { IntentConflictError, PreconditionFailedError, RingstoreError, invariant } from '../core/errors';
import { tombstoneRetentionSeconds } from '../core/item';
import { tokenBucket } from '../core/ring';
import type { IntentPlacement, ItemWrite, StoredItem, WritePrecondition } from '../ports';
import { limits } from '../../schemas/topology';
import { isConditionalCheckFailure, translateAwsError } from './aws-errors';
import { type KvEntity, listingPartitionOf, partitionKeyOf, storedItemOfImage } from './dynamodb-item-codec';

function liveCondition(nowSeconds: number): Condition<KvEntity> {
  return {
    and: [
      { attr: 'pk', exists: true },
      { attr: 'tomb', eq: false },
      {
        or: [
          { attr: 'ttl', exists: false },
          { attr: 'ttl', gt: nowSeconds },
        ],
      },
    ],
  };
}

function absentCondition(nowSeconds: number): Condition<KvEntity> {
  return {
    or: [
      { attr: 'pk', exists: false },
      { attr: 'tomb', eq: true },
      { attr: 'ttl', lte: nowSeconds },
    ],
  };
}

/** `v IN (…)`: DynamoDB refuses an empty list and one over 100 operands; the core bounds it far below. */
function versionsOperand(versions: readonly number[]): Condition<KvEntity> {
  invariant(
    versions.length >= 1 && versions.length <= limits.entityTagsMax,
    `a version list has 1 to ${limits.entityTagsMax} entries (got ${versions.length})`,
  );
  return { attr: 'v', in: [...versions] };
}

export function conditionFor(precondition: WritePrecondition, nowSeconds: number): Condition<KvEntity> | undefined {
  switch (precondition.kind) {
    case 'none':
      return undefined;
    case 'live': {
      const except = precondition.exceptVersions ?? [];
      return except.length === 0 ? liveCondition(nowSeconds) : { and: [liveCondition(nowSeconds), { not: versionsOperand(except) }] };
    }
    case 'versionIn':
      return { and: [versionsOperand(precondition.versions), liveCondition(nowSeconds)] };
    case 'absent':
      return absentCondition(nowSeconds);
    case 'versionNotIn':
      // Not live, or live at another version: `NOT v IN (…)` alone covers the live case, since live is not absent.
      return { or: [absentCondition(nowSeconds), { not: versionsOperand(precondition.versions) }] };
  }
}

/** The key attributes an owner write sets on every item it writes. */
export function ownerItemIdentity(namespace: string, key: string, token: number, modifiedAtMs: number) {
  return { pk: partitionKeyOf(namespace, key), ns: namespace, k: key, tok: token, tb: tokenBucket(token), mt: modifiedAtMs };
}

/** The content an owner write leaves: a value, or a tombstone (absent content) kept for the retention period. */
export function ownerContent(namespace: string, token: number, content: ItemWrite['content'], nowSeconds: number) {
  return content
    ? {
        ct: content.contentType,
        size: content.size,
        sha: content.sha256,
        tomb: false,
        ttl: content.expiresAtSeconds ?? $remove(),
        val: content.value ?? $remove(),
        blob: content.blob?.objectKey ?? $remove(),
        // Owner writes are the listed copies; a delete takes the key out of the listing index.
        lp: listingPartitionOf(namespace, token),
      }
    : {
        ct: '',
        size: 0,
        sha: '',
        tomb: true,
        ttl: nowSeconds + tombstoneRetentionSeconds,
        val: $remove(),
        blob: $remove(),
        lp: $remove(),
      };
}

/** DynamoDB's ClientRequestToken is at most 36 characters: a digest of the transaction id. */
export function idempotencyTokenOf(id: string): string {
  return createHash('sha256').update(id).digest('base64url').slice(0, 36);
}

/** What a placement expects of the key's committed content, as a condition. */
export function expectationOf(input: IntentPlacement): Condition<KvEntity> | undefined {
  if (input.expectVersion === 0) return conditionFor({ kind: 'absent' }, input.nowSeconds);
  if (input.expectVersion !== undefined) return conditionFor({ kind: 'versionIn', versions: [input.expectVersion] }, input.nowSeconds);
  return input.mustBeLive ? conditionFor({ kind: 'live' }, input.nowSeconds) : undefined;
}

/** A failed condition: a transaction's intent is in the way, or the write's own condition did not hold. */
export function conditionFailure(error: unknown, key: string, what: string, ownTxid?: string): RingstoreError {
  if (!isConditionalCheckFailure(error)) return translateAwsError(error, what);
  // The item as it stood (returnValuesOnConditionFalse), in DynamoDB's wire format: lib-dynamodb leaves errors as they are.
  const current = error.Item ? storedItemOfImage(error.Item) : undefined;
  if (current?.intent && current.intent.txid !== ownTxid) {
    return new IntentConflictError<StoredItem>(`key ${key} is locked by transaction ${current.intent.txid}`, current);
  }
  return new PreconditionFailedError<StoredItem>(`condition failed for ${key}`, current);
}
