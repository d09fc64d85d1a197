// Items of the shard schema for the engine probes (bench:engine-hold, bench:copy-shape): key `k-<n>` in
// `namespace`, a value of `valueBytes`, version 1, as a shard table stores an owner's copy.
import { PutItemCommand } from 'dynamodb-toolbox';
import { kvEntity, partitionKeyOf, shardTable, toCopiedAttributes } from '../lambdas/adapters/dynamodb-item-codec';
import { tokenBucket, tokenOf } from '../lambdas/core/ring';

export function shardItemOf(namespace: string, n: number, valueBytes = 1024): Record<string, unknown> {
  const key = `k-${n}`;
  const token = tokenOf(namespace, key);
  const stored = {
    namespace,
    key,
    token,
    version: 1,
    contentType: 'application/octet-stream',
    size: valueBytes,
    sha256: '0'.repeat(64),
    tombstone: false,
    value: new Uint8Array(valueBytes).fill(n % 251),
    modifiedAtMs: Date.now(),
  };
  return kvEntity(shardTable())
    .build(PutItemCommand)
    .item({ pk: partitionKeyOf(namespace, key), tb: tokenBucket(token), ...toCopiedAttributes(stored) })
    .params().Item as Record<string, unknown>;
}
