// Runs one operation a fixed number of times at a fixed concurrency and summarises its latencies.
// Latency is wall time around each awaited call (performance.now), so it includes the client's own work.
import { performance } from 'node:perf_hooks';

/** One call of the operation under test; `i` picks the key and value (see workload.ts). */
export type Operation = (i: number) => Promise<void>;

export interface RunSettings {
  ops: number;
  concurrency: number;
  /** Offset of `i`, so that successive runs touch the keys in a different order. */
  firstIndex?: number;
  /** Awaited before each call and not timed: an isolated call starts on an idle engine. */
  settle?: () => Promise<void>;
}

export interface RunStats {
  ops: number;
  concurrency: number;
  p50Ms: number;
  p99Ms: number;
  meanMs: number;
  maxMs: number;
  opsPerSecond: number;
  elapsedMs: number;
}

/** Nearest-rank percentile of an ascending array (p in 0..100). */
export function percentile(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) throw new Error('percentile of no samples');
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1]!;
}

export function median(values: readonly number[]): number {
  if (values.length === 0) throw new Error('median of no values');
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

/** The latencies of one block of calls and how long the block took. */
export interface Block {
  latenciesMs: Float64Array;
  elapsedMs: number;
  concurrency: number;
}

/**
 * `concurrency` workers take the next index until `ops` calls have been made. The first failure
 * stops the block and is rethrown: a benchmark of failing calls measures nothing.
 *
 * @example
 * const block = await measureBlock((i) => client.send(new GetItemCommand(inputs[i % inputs.length])), { ops: 100, concurrency: 8 });
 */
export async function measureBlock(operation: Operation, settings: RunSettings): Promise<Block> {
  const { ops, concurrency } = settings;
  const firstIndex = settings.firstIndex ?? 0;
  const latencies = new Float64Array(ops);
  let next = 0;
  let failure: unknown;
  const worker = async (): Promise<void> => {
    while (failure === undefined) {
      const n = next++;
      if (n >= ops) return;
      if (settings.settle) await settings.settle();
      const started = performance.now();
      try {
        await operation(firstIndex + n);
      } catch (error) {
        failure ??= error;
        return;
      }
      latencies[n] = performance.now() - started;
    }
  };
  const started = performance.now();
  await Promise.all(Array.from({ length: Math.min(concurrency, ops) }, worker));
  const elapsedMs = performance.now() - started;
  if (failure !== undefined) throw failure instanceof Error ? failure : new Error(JSON.stringify(failure));
  return { latenciesMs: latencies, elapsedMs, concurrency };
}

/** One run's statistics from its blocks: percentiles over all their calls, throughput over their summed time. */
export function statsOf(blocks: Block[]): RunStats {
  if (blocks.length === 0) throw new Error('statistics of no blocks');
  const ops = blocks.reduce((n, b) => n + b.latenciesMs.length, 0);
  const all = new Float64Array(ops);
  let offset = 0;
  for (const block of blocks) {
    all.set(block.latenciesMs, offset);
    offset += block.latenciesMs.length;
  }
  all.sort();
  let total = 0;
  for (const value of all) total += value;
  const elapsedMs = blocks.reduce((t, b) => t + b.elapsedMs, 0);
  return {
    ops,
    concurrency: blocks[0]!.concurrency,
    p50Ms: percentile(all, 50),
    p99Ms: percentile(all, 99),
    meanMs: total / ops,
    maxMs: all[ops - 1]!,
    opsPerSecond: (ops / elapsedMs) * 1000,
    elapsedMs,
  };
}

/** A single block's statistics (warm-up, profiling). */
export async function measure(operation: Operation, settings: RunSettings): Promise<RunStats> {
  return statsOf([await measureBlock(operation, settings)]);
}
