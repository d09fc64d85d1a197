import { forEachBounded } from '../../lambdas/core/bounded';

const tick = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('forEachBounded', () => {
  it('runs every item, never more than the limit at once', async () => {
    let inFlight = 0;
    let peak = 0;
    const seen: number[] = [];
    const all = await forEachBounded(
      Array.from({ length: 20 }, (_, i) => i),
      3,
      async (item) => {
        inFlight += 1;
        peak = Math.max(peak, inFlight);
        await tick();
        seen.push(item);
        inFlight -= 1;
        return 'continue';
      },
    );
    expect(all).toBe(true);
    expect(peak).toBe(3);
    expect([...seen].sort((a, b) => a - b)).toEqual(Array.from({ length: 20 }, (_, i) => i));
  });

  it('starts nothing new after a stop, and lets the calls in flight finish', async () => {
    const started: number[] = [];
    const finished: number[] = [];
    const all = await forEachBounded(
      Array.from({ length: 10 }, (_, i) => i),
      2,
      async (item) => {
        started.push(item);
        await tick();
        finished.push(item);
        return item === 0 ? 'stop' : 'continue';
      },
    );
    expect(all).toBe(false);
    expect(started).toEqual([0, 1]);
    expect([...finished].sort()).toEqual([0, 1]);
  });

  it('rethrows the first failure after the calls in flight end', async () => {
    const finished: number[] = [];
    const run = forEachBounded([0, 1, 2, 3], 2, async (item) => {
      await tick();
      if (item === 0) throw new Error('boom');
      finished.push(item);
      return 'continue';
    });
    await expect(run).rejects.toThrow('boom');
    expect(finished).toEqual([1]);
  });

  it('handles no items', async () => {
    await expect(forEachBounded([], 4, async () => 'continue')).resolves.toBe(true);
  });
});
