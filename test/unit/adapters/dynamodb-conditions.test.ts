// The DynamoDB condition of each write precondition means what the port says it means.
import fc from 'fast-check';
import { $add, UpdateItemCommand } from 'dynamodb-toolbox';
import { kvEntity, partitionKeyOf, shardTable, toCopiedAttributes } from '../../../lambdas/adapters/dynamodb-item-codec';
import { conditionFor } from '../../../lambdas/adapters/dynamodb-shard-conditions';
import { preconditionHolds } from '../../../lambdas/core/conditions';
import { type StoredItem, type WritePrecondition } from '../../../lambdas/ports';

type Node = Record<string, unknown>;

/** DynamoDB's semantics for the operators the shard store uses; a missing attribute compares false. */
function evaluate(condition: Node, item: Record<string, unknown> | undefined): boolean {
  if ('and' in condition) return (condition.and as Node[]).every((c) => evaluate(c, item));
  if ('or' in condition) return (condition.or as Node[]).some((c) => evaluate(c, item));
  if ('not' in condition) return !evaluate(condition.not as Node, item);
  const value = item?.[condition.attr as string];
  if ('exists' in condition) return (value !== undefined) === condition.exists;
  if (value === undefined) return false;
  if ('eq' in condition) return value === condition.eq;
  if ('gt' in condition) return (value as number) > (condition.gt as number);
  if ('lte' in condition) return (value as number) <= (condition.lte as number);
  if ('in' in condition) return (condition.in as unknown[]).includes(value);
  throw new Error(`operator not modelled: ${JSON.stringify(condition)}`);
}

const nowSeconds = 1_000;
const versions = fc.uniqueArray(fc.integer({ min: 1, max: 6 }), { minLength: 1, maxLength: 4 });
const precondition: fc.Arbitrary<WritePrecondition> = fc.oneof(
  fc.constant({ kind: 'none' as const }),
  fc.constant({ kind: 'absent' as const }),
  fc
    .option(versions, { nil: undefined })
    .map((except) => (except ? { kind: 'live' as const, exceptVersions: except } : { kind: 'live' as const })),
  versions.map((list) => ({ kind: 'versionIn' as const, versions: list })),
  versions.map((list) => ({ kind: 'versionNotIn' as const, versions: list })),
);
const item: fc.Arbitrary<StoredItem | undefined> = fc.option(
  fc
    .record({
      version: fc.integer({ min: 0, max: 6 }),
      tombstone: fc.boolean(),
      expiresAtSeconds: fc.option(fc.integer({ min: nowSeconds - 2, max: nowSeconds + 2 }), { nil: undefined }),
    })
    .map(({ version, tombstone, expiresAtSeconds }) => ({
      namespace: 'ns',
      key: 'k',
      token: 1,
      version,
      tombstone,
      contentType: 'a/b',
      size: 0,
      sha256: '',
      ...(expiresAtSeconds === undefined ? {} : { expiresAtSeconds }),
    })),
  { nil: undefined },
);

describe('conditionFor', () => {
  it('holds exactly when the precondition holds, for every item a key can have', () => {
    fc.assert(
      fc.property(precondition, item, (pre, stored) => {
        const condition = conditionFor(pre, nowSeconds);
        const holds =
          condition === undefined ||
          evaluate(condition, stored ? { pk: partitionKeyOf(stored.namespace, stored.key), ...toCopiedAttributes(stored) } : undefined);
        expect(holds).toBe(preconditionHolds(pre, stored, nowSeconds));
      }),
      { numRuns: 2_000 },
    );
  });

  it('becomes a condition expression DynamoDB accepts, versions as IN operands', () => {
    const entity = kvEntity(shardTable());
    const paramsOf = (pre: WritePrecondition) =>
      entity
        .build(UpdateItemCommand)
        .item({ pk: 'ns#k', v: $add(1) })
        .options({ tableName: 't', condition: conditionFor(pre, nowSeconds)! })
        .params();
    expect(paramsOf({ kind: 'versionIn', versions: [3, 5] }).ConditionExpression).toMatch(/^\(#c_1 IN \(:c_1, :c_2\)\) AND /);
    expect(paramsOf({ kind: 'versionNotIn', versions: [3] }).ConditionExpression).toContain('OR (NOT (#c_4 IN (:c_3)))');
    expect(paramsOf({ kind: 'live', exceptVersions: [4] }).ConditionExpression).toContain('AND (NOT (#c_4 IN (:c_3)))');
  });

  it('refuses an empty version list, which DynamoDB could not express', () => {
    expect(() => conditionFor({ kind: 'versionIn', versions: [] }, nowSeconds)).toThrow(/invariant/);
  });
});
