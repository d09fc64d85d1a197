// The owner's UpdateItem of a plain write (PUT or DELETE), built by hand. Every write of every
// consistency sends exactly this one request on its critical path, so it is built without
// dynamodb-toolbox, whose builder would nearly double the CPU of the SDK's own send of the request
// (bench/results/history.md, "KV overhead"). The request is fully determined by a few attributes
// this adapter alone writes; a unit test checks that it is the same request, clause for clause, as the
// toolbox would build from the `kv` entity, so the entity stays the one definition of the item.
import type { UpdateCommandInput } from '@aws-sdk/lib-dynamodb';
import type { Condition } from 'dynamodb-toolbox';
import { invariant } from '../core/errors';
import { tombstoneRetentionSeconds } from '../core/item';
import { tokenBucket } from '../core/ring';
import type { ItemWrite } from '../ports';
import { type KvEntity, listingPartitionOf, partitionKeyOf } from './dynamodb-item-codec';

/** An expression's placeholders, each attribute name and value once. */
class ExpressionValues {
  readonly names: Record<string, string> = {};
  readonly values: Record<string, unknown> = {};
  private valueCount = 0;

  name(attribute: string): string {
    const placeholder = `#${attribute}`;
    this.names[placeholder] = attribute;
    return placeholder;
  }

  value(value: unknown): string {
    const placeholder = `:v${++this.valueCount}`;
    this.values[placeholder] = value;
    return placeholder;
  }
}

type ConditionNode = Condition<KvEntity>;

/**
 * A condition as DynamoDB's ConditionExpression, for the operators the shard store's preconditions use
 * (and, or, not, exists, eq, gt, lte, in). Any other operator is a programming error, refused loudly.
 */
export function renderCondition(condition: ConditionNode, expression: ExpressionValues): string {
  const node = condition as unknown as Record<string, unknown>;
  const group = (parts: unknown, joiner: string) =>
    (parts as ConditionNode[]).map((part) => `(${renderCondition(part, expression)})`).join(joiner);
  if ('and' in node) return group(node.and, ' AND ');
  if ('or' in node) return group(node.or, ' OR ');
  if ('not' in node) return `NOT (${renderCondition(node.not as ConditionNode, expression)})`;
  invariant(typeof node.attr === 'string', `a condition names an attribute: ${JSON.stringify(node)}`);
  const name = expression.name(node.attr);
  if ('exists' in node) return node.exists ? `attribute_exists(${name})` : `attribute_not_exists(${name})`;
  if ('eq' in node) return `${name} = ${expression.value(node.eq)}`;
  if ('gt' in node) return `${name} > ${expression.value(node.gt)}`;
  if ('lte' in node) return `${name} <= ${expression.value(node.lte)}`;
  if ('in' in node) return `${name} IN (${(node.in as unknown[]).map((operand) => expression.value(operand)).join(', ')})`;
  throw new Error(`condition operator not supported by the owner write: ${JSON.stringify(node)}`);
}

/** The attributes an owner write sets, and those it removes (absent content, or a tombstone's). */
function ownerAttributes(write: ItemWrite): { set: Record<string, unknown>; remove: string[] } {
  const { namespace, key, token, content } = write;
  const identity = {
    tb: tokenBucket(token),
    ns: namespace,
    k: key,
    tok: token,
    mt: write.modifiedAtMs,
    ...(write.writeId === undefined ? {} : { wid: write.writeId }),
  };
  if (!content) {
    // A tombstone, kept for the retention period; a delete takes the key out of the listing index.
    return {
      set: { ...identity, ct: '', size: 0, sha: '', tomb: true, ttl: write.nowSeconds + tombstoneRetentionSeconds },
      remove: ['lp', 'val', 'blob'],
    };
  }
  const set: Record<string, unknown> = {
    ...identity,
    // Owner writes are the listed copies (topology: shardSchema.keyIndex).
    lp: listingPartitionOf(namespace, token),
    ct: content.contentType,
    size: content.size,
    sha: content.sha256,
    tomb: false,
  };
  const remove: string[] = [];
  for (const [attribute, value] of [
    ['ttl', content.expiresAtSeconds],
    ['val', content.value],
    ['blob', content.blob?.objectKey],
  ] as const) {
    if (value === undefined) remove.push(attribute);
    else set[attribute] = value;
  }
  return { set, remove };
}

/**
 * The owner's UpdateItem of a plain write: sets the content, removes what the content lacks, assigns the
 * version by `ADD v 1` (a new key starts at 1) and returns the item as it stood, also when the
 * condition fails. `condition` is the precondition's, already joined with the "no intent" lock check.
 */
export function ownerWriteParams(tableName: string, write: ItemWrite, condition: ConditionNode): UpdateCommandInput {
  const expression = new ExpressionValues();
  const { set, remove } = ownerAttributes(write);
  const assignments = Object.entries(set).map(([attribute, value]) => `${expression.name(attribute)} = ${expression.value(value)}`);
  const removals = remove.map((attribute) => expression.name(attribute));
  const updateExpression = [
    `SET ${assignments.join(', ')}`,
    ...(removals.length === 0 ? [] : [`REMOVE ${removals.join(', ')}`]),
    `ADD ${expression.name('v')} ${expression.value(1)}`,
  ].join(' ');
  const conditionExpression = renderCondition(condition, expression);
  return {
    TableName: tableName,
    Key: { pk: partitionKeyOf(write.namespace, write.key) },
    UpdateExpression: updateExpression,
    ConditionExpression: conditionExpression,
    ExpressionAttributeNames: expression.names,
    ExpressionAttributeValues: expression.values,
    ReturnValues: 'ALL_OLD',
    ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
  };
}
