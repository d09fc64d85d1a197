// Following a rebalance in the CLI, without a server: the progress bar on a terminal, one line per change
// elsewhere, the end it reports, and a stop (Ctrl-C) that leaves the rebalance running.

import { Writable } from 'node:stream';
import type { Rebalance } from '../src/commands';
import { formatDuration, formatRebalance, rebalanceOutcome } from '../src/cli/format';
import { settled, watchRebalance } from '../src/cli/rebalance-watch';

const base: Rebalance = {
  id: 'rebalance-1-0a1b2c3d',
  status: 'running',
  change: { join: [4], leave: [] },
  rateKeysPerSecond: 2_000,
  startedAt: '2026-11-25T10:00:00.000Z',
  updatedAt: '2026-11-25T10:00:00.000Z',
  ranges: { total: 4, planned: 4, moving: 0, moved: 0, cleaned: 0 },
  keysCopied: 0,
  keysPerSecond: 0,
  progress: 0,
  revision: 1,
};

/** The rebalance with `moved` of its four ranges moved. */
const at = (moved: number, extra: Partial<Rebalance> = {}): Rebalance => ({
  ...base,
  ranges: { total: 4, planned: 4 - moved, moving: 0, moved, cleaned: 0 },
  keysCopied: moved * 1_000,
  keysPerSecond: moved * 100,
  progress: moved / 4,
  ...(moved > 0 && moved < 4 ? { etaSeconds: (4 - moved) * 10 } : {}),
  ...extra,
});

const done = at(0, {
  status: 'done',
  ranges: { total: 4, planned: 0, moving: 0, moved: 0, cleaned: 4 },
  keysCopied: 4_000,
  progress: 1,
  finishedAt: '2026-11-25T10:03:10.000Z',
});

/** A writable that keeps what it is given, a terminal or not. */
function capture(tty: boolean): { out: Writable & { isTTY?: boolean; columns?: number }; text: () => string } {
  const chunks: string[] = [];
  const out = new Writable({
    write(chunk: Buffer | string, _encoding, callback) {
      chunks.push(chunk.toString());
      callback();
    },
  }) as Writable & { isTTY?: boolean; columns?: number };
  if (tty) Object.assign(out, { isTTY: true, columns: 160 });
  return { out, text: () => chunks.join('') };
}

/** Reads that answer these statuses in turn. */
function reads(...answers: Rebalance[]) {
  const queue = [...answers];
  const read = jest.fn(async () => {
    const next = queue.shift();
    if (next === undefined) throw new Error('read more often than scripted');
    return next;
  });
  return read;
}

describe('watchRebalance', () => {
  it('draws a progress bar on a terminal with ranges moved, keys copied, keys/s and the ETA, until done', async () => {
    // Prepare
    const { out, text } = capture(true);
    const read = reads(at(1), at(2), done);
    // Act: reads far enough apart for the bar to redraw at each (it redraws at most every 200 ms).
    const result = await watchRebalance(at(0), { read, out, intervalMs: 250 });
    // Assess
    const written = text();
    expect(result).toEqual({ last: done, stopped: false });
    expect(read).toHaveBeenCalledTimes(3);
    expect(written).toMatch(/\d+% \| ranges 1\/4 \| 1,000 keys copied \| 100 keys\/s \| ETA 30s \| running/);
    expect(written).toContain('100% | ranges 4/4 | 4,000 keys copied');
    expect(written).toMatch(/[\u2588\u2591]{24}/);
    expect(written).toContain('rebalance rebalance-1-0a1b2c3d done: 4 ranges moved, 4,000 keys copied in 3m 10s\n');
  });

  it('prints one line per change when the output is no terminal', async () => {
    const { out, text } = capture(false);

    await watchRebalance(at(0), { read: reads(at(0), at(1), at(1), at(3), done), out, intervalMs: 1 });

    expect(text().split('\n')).toEqual([
      'running: 0/4 ranges moved, 0 keys copied, 0 keys/s, 0%',
      'running: 1/4 ranges moved, 1,000 keys copied, 100 keys/s, 25%, ETA 30s',
      'running: 3/4 ranges moved, 3,000 keys copied, 300 keys/s, 75%, ETA 10s',
      'done: 4/4 ranges moved, 4,000 keys copied, 0 keys/s, 100%',
      'rebalance rebalance-1-0a1b2c3d done: 4 ranges moved, 4,000 keys copied in 3m 10s',
      '',
    ]);
  });

  it('ends at a pause, saying why and how to go on, without reading again', async () => {
    const { out, text } = capture(false);
    const read = reads();
    const paused = at(2, { status: 'paused', message: 'shard 3 did not answer for 5 minutes' });

    const result = await watchRebalance(paused, { read, out, intervalMs: 1 });

    expect(result.stopped).toBe(false);
    expect(read).not.toHaveBeenCalled();
    expect(text()).toContain(
      'rebalance rebalance-1-0a1b2c3d paused at 2/4 ranges: shard 3 did not answer for 5 minutes; go on with: ringstore rebalance resume\n',
    );
  });

  it('stops on an interrupt, between reads or during one, and says that the rebalance goes on', async () => {
    // Prepare: the interrupt fires during the second read, which then fails as an aborted request does.
    const { out, text } = capture(false);
    let interrupt = (): void => undefined;
    const unsubscribe = jest.fn();
    let calls = 0;
    const read = jest.fn(async (signal: AbortSignal) => {
      calls += 1;
      if (calls === 1) return at(1);
      interrupt();
      expect(signal.aborted).toBe(true);
      throw new Error('This operation was aborted');
    });
    // Act
    const result = await watchRebalance(at(0), {
      read,
      out,
      intervalMs: 1,
      onInterrupt: (stop) => {
        interrupt = stop;
        return unsubscribe;
      },
    });
    // Assess
    expect(result).toEqual({ last: at(1), stopped: true });
    expect(unsubscribe).toHaveBeenCalledTimes(1);
    expect(text()).toMatch(/stopped watching; rebalance rebalance-1-0a1b2c3d goes on \(.*pause or cancel stop it\)\n$/);
  });

  it("stops when the session's signal aborts (Ctrl-C in the interactive CLI)", async () => {
    const { out, text } = capture(true);
    const session = new AbortController();
    const read = jest.fn(async () => {
      session.abort();
      return at(1);
    });

    const result = await watchRebalance(at(0), { read, out, signal: session.signal, intervalMs: 1 });

    expect(result.stopped).toBe(true);
    expect(read).toHaveBeenCalledTimes(1);
    expect(text()).toContain('stopped watching; rebalance rebalance-1-0a1b2c3d goes on');
  });

  it('passes on a read that fails for another reason, with the bar stopped', async () => {
    const { out, text } = capture(true);
    const read = jest.fn(async () => {
      throw new Error('connection refused');
    });

    await expect(watchRebalance(at(0), { read, out, intervalMs: 1 })).rejects.toThrow('connection refused');
    expect(text()).toContain('\u001b[?25h'); // the cursor shown again
  });
});

describe('rebalance text', () => {
  it.each([
    [0, '0s'],
    [45.4, '45s'],
    [190, '3m 10s'],
    [3_600 + 5 * 60 + 59, '1h 05m'],
  ])('formats %d seconds as %s', (seconds, text) => {
    expect(formatDuration(seconds)).toBe(text);
  });

  it('counts moved and cleaned ranges alike, and says what a cancel left', () => {
    const cancelled = at(0, {
      status: 'cancelled',
      change: { join: [], leave: [2, 3] },
      cancelledFrom: { ranges: 4, moved: 1 },
      ranges: { total: 1, planned: 0, moving: 0, moved: 0, cleaned: 1 },
      finishedAt: '2026-11-25T10:00:40.000Z',
    });

    expect(settled(cancelled)).toBe(true);
    expect(settled(at(1, { status: 'cancelling' }))).toBe(false);
    expect(rebalanceOutcome(cancelled)).toBe(
      'rebalance rebalance-1-0a1b2c3d cancelled in 40s: the ring is as it began (1 of its 4 ranges had moved and were moved back)',
    );
    expect(formatRebalance(cancelled).split('\n').slice(0, 2)).toEqual([
      'rebalance rebalance-1-0a1b2c3d: cancelled, remove shards 2, 3',
      'ranges:   1/1 moved (0 moving, 0 planned, 1 cleaned)',
    ]);
    expect(formatRebalance(at(1, { requested: 'pause', rateKeysPerSecond: 0 }))).toContain(
      'running (pause requested), add shard 4\nranges:   1/4 moved (0 moving, 3 planned, 0 cleaned)\nkeys:     1,000 copied, 100 keys/s; rate limit none\nprogress: 25%, ETA 30s',
    );
  });
});
