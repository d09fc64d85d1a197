import fc from 'fast-check';
import { Ring, initialRingState, tokenOf, tokenSpace } from '../../../lambdas/core/ring';

const ringOf = (shardCount: number, replicationFactor = 3, vnodesPerShard = 16) =>
  new Ring(initialRingState({ shardCount, replicationFactor, vnodesPerShard, tableName: (id) => `shard-${id}` }));

describe('tokenOf', () => {
  it('is the documented hash: first 32 bits of MD5(namespace NUL key)', () => {
    // Computed independently (Python: int.from_bytes(md5(b'ns\x00k').digest()[:4], 'big')) and pinned,
    // so the token stored with every item can never change silently.
    expect(tokenOf('ns', 'k')).toBe(0xf8bb5fa2);
    expect(tokenOf('ns', 'k')).toBe(4173029282);
  });

  it('separates namespaces: the same key in two namespaces has independent tokens', () => {
    expect(tokenOf('a', 'key')).not.toBe(tokenOf('b', 'key'));
    expect(tokenOf('ab', 'c')).not.toBe(tokenOf('a', 'bc'));
  });
});

describe('Ring', () => {
  it('covers the whole token space exactly once, for any shard count', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 12 }), fc.integer({ min: 1, max: 32 }), (shards, vnodes) => {
        const ranges = ringOf(shards, 3, vnodes).ranges();
        let covered = 0;
        for (const range of ranges) covered += range.end > range.start ? range.end - range.start : tokenSpace - range.start + range.end;
        expect(covered).toBe(tokenSpace);
        expect(ranges).toHaveLength(shards * vnodes);
      }),
    );
  });

  it('gives every token RF distinct replicas, owner first, and agrees with its ranges', () => {
    const ring = ringOf(4, 3);
    const ranges = ring.ranges();
    fc.assert(
      fc.property(fc.integer({ min: 0, max: tokenSpace - 1 }), (token) => {
        const replicas = ring.replicasOf(token).map((shard) => shard.id);
        expect(new Set(replicas).size).toBe(3);
        expect(replicas[0]).toBe(ring.ownerOf(token).id);
        const range = ranges.find((r) => (r.start < r.end ? token > r.start && token <= r.end : token > r.start || token <= r.end));
        expect(range?.owner).toBe(replicas[0]);
        expect(range?.replicas).toEqual(replicas);
      }),
    );
  });

  it('caps the replica set at the number of shards', () => {
    expect(ringOf(2, 3).replicasOf(123)).toHaveLength(2);
  });

  it('spreads keys over shards roughly evenly with 16 vnodes each', () => {
    const ring = ringOf(4);
    const counts = [0, 0, 0, 0];
    for (let i = 0; i < 20_000; i += 1) counts[ring.ownerOf(tokenOf('ns', `key-${i}`)).id]! += 1;
    for (const count of counts) expect(count).toBeGreaterThan(20_000 / 4 / 2);
  });

  it('refuses tokens outside the ring and invalid states', () => {
    const ring = ringOf(3);
    expect(() => ring.ownerOf(-1)).toThrow(/outside the ring/);
    expect(() => ring.ownerOf(tokenSpace)).toThrow(/outside the ring/);
    expect(() => initialRingState({ shardCount: 0, replicationFactor: 3, vnodesPerShard: 1, tableName: String })).toThrow();
  });
});
