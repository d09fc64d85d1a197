// The hand-built owner write is the request dynamodb-toolbox builds from the `kv` entity, clause for clause.
import fc from 'fast-check';
import { $add, UpdateItemCommand } from 'dynamodb-toolbox';
import { kvEntity, shardTable } from '../../../lambdas/adapters/dynamodb-item-codec';
import { ownerWriteParams } from '../../../lambdas/adapters/dynamodb-owner-write';
import { conditionFor, ownerContent, ownerItemIdentity } from '../../../lambdas/adapters/dynamodb-shard-conditions';
import type { ItemWrite, WritePrecondition } from '../../../lambdas/ports';

interface Params {
  UpdateExpression?: string;
  ConditionExpression?: string;
  ExpressionAttributeNames?: Record<string, string>;
  ExpressionAttributeValues?: Record<string, unknown>;
}

/** An expression with its placeholders replaced by the names and values they stand for. */
function substituted(expression: string, params: Params): string {
  return expression.replace(/[#:][A-Za-z0-9_]+/g, (placeholder) =>
    placeholder.startsWith('#')
      ? params.ExpressionAttributeNames![placeholder]!
      : JSON.stringify(params.ExpressionAttributeValues![placeholder], (_, value: unknown) =>
          value instanceof Uint8Array ? `bytes:${Buffer.from(value).toString('hex')}` : value,
        ),
  );
}

/** What a request does, independent of placeholder names and clause order. */
function meaning(params: Params) {
  const update = substituted(params.UpdateExpression!, params);
  const clauses: Record<string, string[]> = {};
  for (const match of update.matchAll(/(SET|REMOVE|ADD) (.*?)(?= (?:SET|REMOVE|ADD) |$)/g)) {
    clauses[match[1]!] = match[2]!.split(', ').sort();
  }
  return { clauses, condition: substituted(params.ConditionExpression!, params) };
}

const versions = fc.uniqueArray(fc.integer({ min: 1, max: 9 }), { minLength: 1, maxLength: 3 });
const precondition: fc.Arbitrary<WritePrecondition> = fc.oneof(
  fc.constant({ kind: 'none' as const }),
  fc.constant({ kind: 'absent' as const }),
  fc.constant({ kind: 'live' as const }),
  versions.map((except) => ({ kind: 'live' as const, exceptVersions: except })),
  versions.map((list) => ({ kind: 'versionIn' as const, versions: list })),
  versions.map((list) => ({ kind: 'versionNotIn' as const, versions: list })),
);
const content = fc.option(
  fc.record(
    {
      contentType: fc.constantFrom('application/json', 'text/plain'),
      size: fc.nat(1_000),
      sha256: fc.string({ minLength: 4, maxLength: 8 }),
      expiresAtSeconds: fc.integer({ min: 1, max: 2_000_000_000 }),
      value: fc.uint8Array({ maxLength: 8 }),
      blob: fc.record({ objectKey: fc.string({ minLength: 1, maxLength: 8 }) }),
    },
    { requiredKeys: ['contentType', 'size', 'sha256'] },
  ),
  { nil: undefined },
);
const write: fc.Arbitrary<ItemWrite> = fc.record({
  namespace: fc.constantFrom('ns', 'team-a'),
  key: fc.string({ minLength: 1, maxLength: 12 }),
  token: fc.nat(2 ** 32 - 1),
  content,
  precondition,
  nowSeconds: fc.integer({ min: 1, max: 2_000_000_000 }),
  modifiedAtMs: fc.nat(),
});

describe('ownerWriteParams', () => {
  const entity = kvEntity(shardTable());

  it('is the UpdateItem dynamodb-toolbox builds for the same write, for every content and precondition', () => {
    fc.assert(
      fc.property(write, (input) => {
        const unlocked = { attr: 'itx' as const, exists: false };
        const precondition = conditionFor(input.precondition, input.nowSeconds);
        const condition = precondition ? { and: [unlocked, precondition] } : unlocked;
        const toolbox = entity
          .build(UpdateItemCommand)
          .item({
            ...ownerItemIdentity(input.namespace, input.key, input.token, input.modifiedAtMs),
            ...ownerContent(input.namespace, input.token, input.content, input.nowSeconds),
            v: $add(1),
          })
          .options({ tableName: 'shard-1', returnValues: 'ALL_OLD', returnValuesOnConditionFalse: 'ALL_OLD', condition })
          .params();
        const handBuilt = ownerWriteParams('shard-1', input, condition);
        expect(meaning(handBuilt)).toEqual(meaning(toolbox));
        expect(handBuilt).toMatchObject({
          TableName: toolbox.TableName,
          Key: toolbox.Key,
          ReturnValues: 'ALL_OLD',
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        });
      }),
      { numRuns: 500 },
    );
  });

  it('refuses a condition operator it does not render', () => {
    const input: ItemWrite = {
      namespace: 'ns',
      key: 'k',
      token: 1,
      precondition: { kind: 'none' },
      nowSeconds: 1,
      modifiedAtMs: 1,
    };
    expect(() => ownerWriteParams('t', input, { attr: 'v', between: [1, 2] })).toThrow(/not supported/);
  });
});
