// The conditions of the shard store's writes (a client's precondition, an intent's expectation, what a failed
// check means) and the attributes an owner write sets.
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { $remove, type Condition } from 'dynamodb-toolbox';
import { createHash } from 'node:crypto';
import { invariant } from '../core/errors';
import { tombstoneRetentionSeconds } from '../core/item';
import { tokenBucket } from '../core/ring';
import type { IntentPlacement, ItemWrite, KeyLocked, PreconditionFailed, WritePrecondition } from '../ports';
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

/**
 * What a write whose condition did not hold met, from the item as it stood (`image`, in DynamoDB's wire format,
 * as returnValuesOnConditionFalse or a cancellation reason gives it): another transaction's intent, or its
 * own condition failing (absent image: no item). `ownTxid`: an intent of this transaction is no lock.
 */
export function failedCondition(image: Record<string, AttributeValue> | undefined, ownTxid?: string): PreconditionFailed | KeyLocked {
  const current = image ? storedItemOfImage(image) : undefined;
  const intent = current?.intent;
  if (current && intent && intent.txid !== ownTxid) return { outcome: 'locked', current: { ...current, intent } };
  return current ? { outcome: 'preconditionFailed', current } : { outcome: 'preconditionFailed' };
}

/** A conditional write's failure: its condition not holding is an outcome; anything else is a fault, translated and thrown. */
export function failedConditionOf(error: unknown, what: string, ownTxid?: string): PreconditionFailed | KeyLocked {
  if (!isConditionalCheckFailure(error)) throw translateAwsError(error, what);
  // lib-dynamodb leaves errors as they are: the item is still in the wire format.
  return failedCondition(error.Item, ownTxid);
}
