// Stream records as the replicator reads them: the source table from the ARN, new images as items.
import { marshall } from '@aws-sdk/util-dynamodb';
import type { DynamoDBRecord } from 'aws-lambda';
import { feedChangesOf, lambdaImageOf, ownerChangesOf, tableOfStreamArn } from '../../../lambdas/adapters/dynamodb-stream';
import { toCopiedAttributes, toStoredItem } from '../../../lambdas/adapters/dynamodb-item-codec';
import { commitsOf } from '../../../lambdas/adapters/dynamodb-txn-stream';

const arn = 'arn:aws:dynamodb:us-east-1:123456789012:table/ringstore-dev-shard-2/stream/2026-11-22T00:00:00.000';

function record(
  eventName: DynamoDBRecord['eventName'],
  image: Record<string, unknown> | undefined,
  sequence: string,
  oldImage?: Record<string, unknown>,
  userIdentity?: { type: string; principalId: string },
): DynamoDBRecord {
  // As Lambda delivers a record: JSON, binary attributes base64-encoded.
  const marshalled = (item: Record<string, unknown>) => lambdaImageOf(marshall(item, { removeUndefinedValues: true }));
  return {
    eventName,
    eventSourceARN: arn,
    dynamodb: {
      SequenceNumber: sequence,
      ...(image ? { NewImage: marshalled(image) } : {}),
      ...(oldImage ? { OldImage: marshalled(oldImage) } : {}),
    },
    ...(userIdentity ? { userIdentity } : {}),
  };
}

describe('stream records', () => {
  it('names the table of a stream ARN, and nothing for a foreign ARN', () => {
    expect(tableOfStreamArn(arn)).toBe('ringstore-dev-shard-2');
    expect(tableOfStreamArn('arn:aws:sqs:us-east-1:1:queue')).toBeUndefined();
  });

  it('turns inserts and modifies into owner changes with their sequence numbers, and skips removals', () => {
    const image = {
      pk: 'ns#k',
      ns: 'ns',
      k: 'k',
      v: 4,
      tok: 99,
      tb: 0,
      ct: 'text/plain',
      size: 1,
      sha: 'ab',
      tomb: false,
      val: new Uint8Array([120]),
      mt: 1700,
    };
    const { changes, sequenceNumbers } = ownerChangesOf([
      record('INSERT', image, '1'),
      record('REMOVE', undefined, '2'),
      record('MODIFY', { ...image, v: 5, tomb: true, val: undefined, ttl: 1800 }, '3'),
    ]);
    expect(sequenceNumbers).toEqual(['1', '3']);
    expect(changes[0]).toEqual({
      sourceTable: 'ringstore-dev-shard-2',
      item: {
        namespace: 'ns',
        key: 'k',
        version: 4,
        token: 99,
        contentType: 'text/plain',
        size: 1,
        sha256: 'ab',
        tombstone: false,
        value: new Uint8Array([120]),
        modifiedAtMs: 1700,
      },
    });
    expect(changes[1]!.item).toMatchObject({ version: 5, tombstone: true, expiresAtSeconds: 1800 });
    expect(changes[1]!.item.value).toBeUndefined();
  });

  it('carries the old version when the record has the old image', () => {
    const image = { pk: 'ns#k', ns: 'ns', k: 'k', v: 4, tok: 99, tb: 0, ct: 'text/plain', size: 1, sha: 'ab', tomb: false };
    const { changes } = ownerChangesOf([record('MODIFY', { ...image, itx: 't1' }, '1', image), record('INSERT', image, '2')]);
    expect(changes.map((change) => change.previousVersion)).toEqual([4, undefined]);
  });
});

describe('transaction table stream records', () => {
  const txnRecord = (status: string) => ({
    txid: '0abc-1',
    status,
    createdAtMs: 1,
    dl: 5_000,
    db: '0#3',
    keys: [{ table: 'ringstore-dev-shard-1', namespace: 'ns', key: 'a', kind: 'put' }],
    ttl: 99,
  });

  it('yields the transactions a record shows going from pending to committed, as records', () => {
    const commits = commitsOf([
      record('INSERT', txnRecord('pending'), '1'),
      record('MODIFY', txnRecord('committed'), '2', txnRecord('pending')),
      record('MODIFY', txnRecord('aborted'), '3', txnRecord('pending')),
      record('REMOVE', undefined, '4', txnRecord('committed')),
    ]);

    expect(commits).toEqual([
      {
        txid: '0abc-1',
        status: 'committed',
        createdAtMs: 1,
        deadlineMs: 5_000,
        keys: [{ table: 'ringstore-dev-shard-1', namespace: 'ns', key: 'a', kind: 'put' }],
      },
    ]);
  });
});

describe('stream records as the change feed reads them', () => {
  const owner = { pk: 'ns#k', ns: 'ns', k: 'k', v: 4, tok: 99, tb: 0, ct: 'text/plain', size: 1, sha: 'ab', tomb: false, mt: 1700 };
  const ttlService = { type: 'Service', principalId: 'dynamodb.amazonaws.com' };

  it('tells the owner’s writes from copies: a copy carries the version it was copied at, an owner write moves past it', () => {
    const copy = { pk: 'ns#k', tb: 0, ...toCopiedAttributes(toStoredItem(owner)) };
    expect(copy.cpv).toBe(4);
    const { changes, sequenceNumbers } = feedChangesOf([
      record('INSERT', owner, '1'),
      record('INSERT', copy, '2'),
      // The copy's shard became the owner (a failover, a move) and wrote the next version over it.
      record('MODIFY', { ...copy, v: 5 }, '3', copy),
    ]);
    expect(sequenceNumbers).toEqual(['1', '2', '3']);
    expect(changes.map((change) => [change.item.version, change.copied, change.previousVersion])).toEqual([
      [4, false, undefined],
      [4, true, undefined],
      [5, false, 4],
    ]);
  });

  it('reads a TTL removal by the service as an expiry of its old image, and skips every other removal', () => {
    const { changes, sequenceNumbers } = feedChangesOf([
      record('REMOVE', undefined, '1', owner, ttlService),
      record('REMOVE', undefined, '2', owner),
      record('REMOVE', undefined, '3', owner, { type: 'Service', principalId: 'someone.else' }),
    ]);
    expect(sequenceNumbers).toEqual(['1']);
    expect(changes).toEqual([
      { sourceTable: tableOfStreamArn(arn), item: expect.objectContaining({ key: 'k', version: 4 }), copied: false, expired: true },
    ]);
  });
});
