// `npm run capacity -- --shards 8 --rate 20000 --mix getEventual=0.9,putEventual=0.1`: the capacity
// model (model.ts) for a deployment and a traffic mix: the load on every limit, the first one reached
// and at what rate, and the cost per million operations next to DynamoDB alone.
import { parseArgs } from 'node:util';
import { defaults } from '../../schemas/topology';
import { type MixOperation, type Traffic, capacityReport, mixOperations } from './model';

const usage = `usage: npm run capacity -- [options]
  --shards N            shard tables in the ring (default ${defaults.shardCount})
  --rf N                replication factor (default ${defaults.replicationFactor})
  --rate N              operations per second (default 5000)
  --mix op=share,...    traffic mix over ${Object.keys(mixOperations).join(', ')}
                        (default getEventual=0.9,putEventual=0.1)
  --value-bytes N       bytes per value (default 1000)
  --namespace-share X   share of the traffic the busiest namespace sends, 0..1 (default 1)
  --cache-hit X         share of eventual GETs the cache answers, 0..1 (default 0.8)`;

function numberOption(value: string | undefined, name: string, fallback: number, range: { min: number; max?: number }): number {
  if (value === undefined) return fallback;
  const parsed = Number(value);
  if (!Number.isFinite(parsed) || parsed < range.min || (range.max !== undefined && parsed > range.max)) {
    throw new Error(`--${name} must be a number from ${range.min}${range.max === undefined ? '' : ` to ${range.max}`} (got ${value})`);
  }
  return parsed;
}

function mixOption(value: string | undefined): Traffic['mix'] {
  if (value === undefined) return { getEventual: 0.9, putEventual: 0.1 };
  const mix: Traffic['mix'] = {};
  for (const part of value.split(',')) {
    const [name, share] = part.split('=');
    if (!name || !(name in mixOperations))
      throw new Error(`--mix: unknown operation "${name ?? ''}" (one of ${Object.keys(mixOperations).join(', ')})`);
    mix[name as MixOperation] = numberOption(share, `mix ${name}`, Number.NaN, { min: 0 });
  }
  return mix;
}

const fixed = (value: number, digits = 0) =>
  Number.isFinite(value) ? value.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits }) : '∞';

function main(): void {
  const { values } = parseArgs({
    options: {
      shards: { type: 'string' },
      rf: { type: 'string' },
      rate: { type: 'string' },
      mix: { type: 'string' },
      'value-bytes': { type: 'string' },
      'namespace-share': { type: 'string' },
      'cache-hit': { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) {
    console.log(usage);
    return;
  }
  const shards = numberOption(values.shards, 'shards', defaults.shardCount, { min: 1 });
  const replicationFactor = numberOption(values.rf, 'rf', defaults.replicationFactor, { min: 1, max: shards });
  const traffic: Traffic = {
    opsPerSecond: numberOption(values.rate, 'rate', 5_000, { min: 1 }),
    mix: mixOption(values.mix),
    valueBytes: numberOption(values['value-bytes'], 'value-bytes', 1_000, { min: 0 }),
    busiestNamespaceShare: numberOption(values['namespace-share'], 'namespace-share', 1, { min: 0, max: 1 }),
    cacheHitRatio: numberOption(values['cache-hit'], 'cache-hit', 0.8, { min: 0, max: 1 }),
  };
  const report = capacityReport({ shards, replicationFactor }, traffic);
  console.log(
    `Ringstore, ${shards} shards, RF ${replicationFactor}, ${fixed(traffic.opsPerSecond)} ops/s, ${fixed(traffic.valueBytes)}-byte values, ` +
      `mix ${Object.entries(traffic.mix)
        .map(([name, share]) => `${name}=${share}`)
        .join(',')}\n`,
  );
  console.log('| limit | load | capacity | used | ceiling (ops/s) |');
  console.log('|---|---:|---:|---:|---:|');
  for (const entry of [...report.limits].sort((a, b) => b.utilisation - a.utilisation)) {
    console.log(
      `| ${entry.limit} | ${fixed(entry.load, 1)} ${entry.unit} | ${fixed(entry.capacity)} | ${fixed(entry.utilisation * 100, 1)} % | ${fixed(entry.ceilingOpsPerSecond)} |`,
    );
  }
  const { bottleneck } = report;
  console.log(
    `\nFirst limit reached: ${bottleneck.limit}, at ${fixed(bottleneck.ceilingOpsPerSecond)} ops/s of this mix. ` +
      `To go past it: ${bottleneck.remedy}.`,
  );
  console.log(`\nCost per million operations of this mix: $${fixed(report.mixUsdPerMillion, 2)}\n`);
  console.log('| operation | Ringstore $/M | DynamoDB alone $/M | ratio |');
  console.log('|---|---:|---:|---:|');
  for (const entry of report.perOperation) {
    console.log(
      `| ${entry.operation} | ${fixed(entry.ringstoreUsdPerMillion, 2)} | ${fixed(entry.dynamodbUsdPerMillion, 3)} | ${fixed(entry.ratio, 1)}x |`,
    );
  }
}

try {
  main();
} catch (error) {
  console.error(error instanceof Error ? error.message : String(error));
  console.error(usage);
  process.exitCode = 2;
}
