// Bounded parallelism for the core's per-key work (a transaction's intents on one shard, stream records,
// hint replay).
// Hand-written rather than p-limit/p-map: those are ESM-only, which the CommonJS Lambda bundles and
// jest transform do not load, and what is needed here is a dozen lines: stop starting work once one
// item says stop or fails, let what is in flight finish, then report.

/**
 * Calls `work` for each item, at most `limit` at a time, in item order. Once a call answers 'stop' or
 * throws, no further item is started; the calls in flight finish, then the first error (if any) is
 * rethrown. Returns whether every item ran to 'continue'.
 *
 * @example
 * const all = await forEachBounded(keys, 16, async (key) => ((await lock(key)) ? 'continue' : 'stop'));
 */
export async function forEachBounded<T>(
  items: readonly T[],
  limit: number,
  work: (item: T, index: number) => Promise<'continue' | 'stop'>,
): Promise<boolean> {
  let next = 0;
  let stopped = false;
  let failure: { error: unknown } | undefined;
  const worker = async (): Promise<void> => {
    while (!stopped && next < items.length) {
      const index = next++;
      try {
        if ((await work(items[index]!, index)) === 'stop') stopped = true;
      } catch (error) {
        failure ??= { error };
        stopped = true;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, worker));
  if (failure) throw failure.error;
  return !stopped;
}

/**
 * Calls `work` for every item, at most `limit` at a time, in item order. A failure stops new items from
 * starting (a crashed process starts nothing more either); it is rethrown once the calls in flight finish.
 *
 * @example
 * await forAllBounded(hints, 8, async (hint) => replay(hint));
 */
export async function forAllBounded<T>(items: readonly T[], limit: number, work: (item: T) => Promise<void>): Promise<void> {
  await forEachBounded(items, limit, async (item) => {
    await work(item);
    return 'continue';
  });
}

/**
 * At most `count` holders at once; the others wait their turn in the order they asked.
 *
 * @example
 * const permits = new Permits(2);
 * const release = await permits.acquire();
 * try { await send(); } finally { release(); }
 */
export class Permits {
  private free: number;
  private readonly waiting: Array<() => void> = [];

  constructor(count: number) {
    this.free = Math.max(1, count);
  }

  async acquire(): Promise<() => void> {
    if (this.free > 0) this.free -= 1;
    else await new Promise<void>((resolve) => this.waiting.push(resolve));
    let released = false;
    return () => {
      if (released) return;
      released = true;
      // A waiter takes the permit over; with none waiting, it is free again.
      const next = this.waiting.shift();
      if (next) next();
      else this.free += 1;
    };
  }
}
