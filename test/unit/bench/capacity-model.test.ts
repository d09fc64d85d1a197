// The capacity model (bench/capacity/model.ts): the first limit for a few deployments, and the
// arithmetic its ceilings rest on.
import { awsLimits, capacityReport, unitsPerOperation } from '../../../bench/capacity/model';
import { operationCosts } from '../../../bench/capacity/operation-costs';
import { shardSchema } from '../../../schemas/topology';

const traffic = { valueBytes: 100, busiestNamespaceShare: 1, cacheHitRatio: 0 };

describe('capacity model', () => {
  it('prices an eventual PUT of a small value as the test counts it: 3 copies, 3 token entries, 1 listing entry, 1 feed entry', () => {
    const units = unitsPerOperation(operationCosts['put eventual, overwrite'], 100, 3);

    expect(units).toMatchObject({ shardTableWrites: 3, tokenIndexWrites: 3, listingIndexWrites: 1, feedWrites: 1, writeUnits: 8 });
    // The feed's entry carries a large value by reference only: one unit whatever the value's size.
    expect(unitsPerOperation(operationCosts['put eventual, overwrite'], 100_000, 3).feedWrites).toBe(1);
  });

  it('scales replica copies with RF and base-table units with the item size, never the index entries', () => {
    expect(unitsPerOperation(operationCosts['put eventual, overwrite'], 100, 5)).toMatchObject({
      shardTableWrites: 5,
      tokenIndexWrites: 5,
    });
    expect(unitsPerOperation(operationCosts['put eventual, overwrite'], 2_500, 3)).toMatchObject({
      shardTableWrites: 9,
      tokenIndexWrites: 3,
      listingIndexWrites: 1,
    });
    // A strong write's replicator copies are refused (billed at the item's size).
    expect(unitsPerOperation(operationCosts['put strong, overwrite'], 100, 3).shardTableWrites).toBe(5);
  });

  it('names API Gateway as the first limit of a read-heavy mix on the default ring', () => {
    const report = capacityReport(
      { shards: 4, replicationFactor: 3 },
      { ...traffic, opsPerSecond: 5_000, mix: { getEventual: 0.9, putEventual: 0.1 } },
    );

    expect(report.bottleneck.limit).toMatch(/API Gateway/);
    expect(report.bottleneck.ceilingOpsPerSecond).toBeCloseTo(awsLimits.apiRequestsPerSecond);
  });

  it("finds the shard tables' write quota first for a write-only mix on one shard, and more shards lift it", () => {
    const writes = { ...traffic, opsPerSecond: 1_000, mix: { putEventual: 1 } };
    const small = capacityReport({ shards: 1, replicationFactor: 1 }, writes);
    const large = capacityReport({ shards: 8, replicationFactor: 3 }, writes);
    const tableLimit = (report: typeof small) => report.limits.find((entry) => entry.limit.startsWith('shard table write'))!;

    // One shard, RF 1: one base write per PUT, so the table quota is the ceiling: 40,000 PUTs/s...
    expect(tableLimit(small).ceilingOpsPerSecond).toBeCloseTo(awsLimits.tableWriteUnits);
    // ...but the busiest namespace's listing partitions (8 buckets x 1,000 units) come first.
    expect(small.bottleneck.limit).toMatch(/listing index partition/);
    expect(small.bottleneck.ceilingOpsPerSecond).toBeCloseTo(shardSchema.keyIndex.buckets * awsLimits.partitionWriteUnits);
    // Eight shards at RF 3: 3 copies over 8 tables.
    expect(tableLimit(large).ceilingOpsPerSecond).toBeCloseTo((awsLimits.tableWriteUnits * 8) / 3);
  });

  it('caps multi-shard transactions by Express starts before the deadline index, now that it is bucketed', () => {
    const report = capacityReport({ shards: 24, replicationFactor: 3 }, { ...traffic, opsPerSecond: 1_000, mix: { txn3Shards: 1 } });
    const deadline = report.limits.find((entry) => entry.limit.startsWith('transaction deadline index'))!;
    const starts = report.limits.find((entry) => entry.limit.startsWith('Express'))!;

    expect(deadline.ceilingOpsPerSecond).toBeGreaterThan(starts.ceilingOpsPerSecond);
  });

  it('refuses a mix with nothing in it', () => {
    expect(() => capacityReport({ shards: 4, replicationFactor: 3 }, { ...traffic, opsPerSecond: 1, mix: {} })).toThrow(/no operation/);
  });
});
