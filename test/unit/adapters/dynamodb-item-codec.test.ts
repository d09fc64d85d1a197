// The item codec: a stored item survives the trip to table attributes and back through a raw image,
// and an image the entity would not read is refused rather than passed on.
import { marshall } from '@aws-sdk/util-dynamodb';
import fc from 'fast-check';
import { partitionKeyOf, storedItemOfImage, toCopiedAttributes } from '../../../lambdas/adapters/dynamodb-item-codec';
import { tokenBucket, tokenSpace } from '../../../lambdas/core/ring';
import type { StoredItem } from '../../../lambdas/ports';

const storedItem: fc.Arbitrary<StoredItem> = fc.record(
  {
    namespace: fc.string({ minLength: 1 }),
    key: fc.string({ minLength: 1 }),
    version: fc.nat(),
    token: fc.integer({ min: 0, max: tokenSpace - 1 }),
    contentType: fc.string(),
    size: fc.nat(),
    sha256: fc.string(),
    tombstone: fc.boolean(),
    expiresAtSeconds: fc.nat(),
    value: fc.uint8Array({ maxLength: 16 }),
    blob: fc.record({ objectKey: fc.string({ minLength: 1 }) }),
    modifiedAtMs: fc.nat(),
  },
  { requiredKeys: ['namespace', 'key', 'version', 'token', 'contentType', 'size', 'sha256', 'tombstone'] },
);

/** The image a shard table's stream carries for an item written from these attributes. */
function imageOf(item: StoredItem, extra: Record<string, unknown> = {}) {
  const attributes = { pk: partitionKeyOf(item.namespace, item.key), tb: tokenBucket(item.token), ...toCopiedAttributes(item), ...extra };
  return marshall(attributes, { removeUndefinedValues: true });
}

describe('item codec', () => {
  it('reads back from a raw image every stored item it writes', () => {
    fc.assert(
      fc.property(storedItem, (item) => {
        // Act
        const decoded = storedItemOfImage(imageOf(item));
        // Assess
        expect(decoded).toEqual(item);
      }),
    );
  });

  it('reads the intent kept beside the committed content', () => {
    // Prepare
    const item: StoredItem = {
      namespace: 'ns',
      key: 'k',
      version: 3,
      token: 7,
      contentType: 'a/b',
      size: 1,
      sha256: 's',
      tombstone: false,
    };
    // Act
    const decoded = storedItemOfImage(imageOf(item, { itx: 't1', iop: 'delete', ict: '', isize: 0, isha: '', its: 1700 }));
    // Assess
    expect(decoded.intent).toEqual({ txid: 't1', kind: 'delete', contentType: '', size: 0, sha256: '', placedAtMs: 1700 });
  });

  it('refuses an image whose attributes do not have the entity’s types', () => {
    // Prepare
    const item: StoredItem = {
      namespace: 'ns',
      key: 'k',
      version: 3,
      token: 7,
      contentType: 'a/b',
      size: 1,
      sha256: 's',
      tombstone: false,
    };
    // Act, Assess
    expect(() => storedItemOfImage(imageOf(item, { v: '3' }))).toThrow();
    expect(() => storedItemOfImage(imageOf(item, { iop: 'rename' }))).toThrow();
  });
});
