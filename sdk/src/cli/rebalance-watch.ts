// Following a rebalance from the CLI: a live progress bar on a terminal, one line per change otherwise,
// polling its status until it is done, cancelled or paused. Stopping the watch never stops the rebalance.

import { Presets, SingleBar } from 'cli-progress';
import type { Rebalance } from '../commands';
import { formatDuration, rangesMoved, rebalanceLine, rebalanceOutcome } from './format';

/**
 * How often the status is read while watching.
 *
 * @example
 * ```ts
 * setTimeout(poll, REBALANCE_POLL_MS);
 * ```
 */
export const REBALANCE_POLL_MS = 1_000;

/** The bar's resolution: a percentage with one more digit than it shows, so small progress still moves it. */
const BAR_STEPS = 1_000;

/**
 * What a watch needs: the status read (with the watch's own abort signal), where to write, and what
 * stops it (the session's Ctrl-C in the interactive CLI, or the process's SIGINT).
 *
 * @example
 * ```ts
 * const options: WatchOptions = { read: (signal) => admin.describeRebalance({}, { abortSignal: signal }), out: process.stdout };
 * ```
 */
export interface WatchOptions {
  read(signal: AbortSignal): Promise<Rebalance>;
  /** Where the bar or the lines go; a bar only when it is a terminal (`isTTY`). */
  out: { write(chunk: string): unknown; isTTY?: boolean; columns?: number };
  /** Aborted: the watch stops (the interactive session's Ctrl-C). */
  signal?: AbortSignal;
  /** Subscribes to an interrupt (Ctrl-C) and returns the unsubscribe; the CLI's one-shot mode passes SIGINT's. */
  onInterrupt?: (stop: () => void) => () => void;
  intervalMs?: number;
}

/**
 * How a watch ended: the last status read, and whether it was stopped (Ctrl-C) before the rebalance settled.
 *
 * @example
 * ```ts
 * const { last, stopped }: WatchResult = await watchRebalance(started, options);
 * ```
 */
export interface WatchResult {
  last: Rebalance;
  stopped: boolean;
}

/**
 * Whether a watch is over: the rebalance ended, or stopped until someone resumes it.
 *
 * @example
 * ```ts
 * settled({ ...rebalance, status: 'paused' }); // true
 * ```
 */
export function settled(rebalance: Pick<Rebalance, 'status'>): boolean {
  return rebalance.status === 'done' || rebalance.status === 'cancelled' || rebalance.status === 'paused';
}

/** Waits `ms`, or less when `signal` aborts. */
function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) {
      resolve();
      return;
    }
    const timer = setTimeout(done, ms);
    function done(): void {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done);
  });
}

/** The live bar on a terminal: percentage, ranges moved of the total, keys copied, keys/s and the server's ETA. */
function terminalBar(out: WatchOptions['out']) {
  const bar = new SingleBar(
    {
      // cli-progress only needs a writable that says whether it is a terminal.
      stream: out as NodeJS.WritableStream,
      format: '{bar} {percentage}% | ranges {moved}/{total_ranges} | {keys} keys copied | {rate} keys/s | ETA {eta_text} | {state}',
      hideCursor: true,
      barsize: 24,
    },
    Presets.shades_classic,
  );
  const payload = (rebalance: Rebalance) => ({
    moved: rangesMoved(rebalance),
    total_ranges: rebalance.ranges.total,
    keys: rebalance.keysCopied.toLocaleString('en-US'),
    rate: rebalance.keysPerSecond.toLocaleString('en-US'),
    eta_text: rebalance.etaSeconds === undefined ? '-' : formatDuration(rebalance.etaSeconds),
    state: rebalance.requested === undefined ? rebalance.status : `${rebalance.status}, ${rebalance.requested} requested`,
  });
  const value = (rebalance: Rebalance) => Math.round(rebalance.progress * BAR_STEPS);
  let started = false;
  return {
    show(rebalance: Rebalance): void {
      if (started) bar.update(value(rebalance), payload(rebalance));
      else bar.start(BAR_STEPS, value(rebalance), payload(rebalance));
      started = true;
    },
    stop(): void {
      if (started) bar.stop();
    },
  };
}

/** One line per change of the status, for logs and pipes. */
function lineWriter(out: WatchOptions['out']) {
  let previous = '';
  return {
    show(rebalance: Rebalance): void {
      const line = rebalanceLine(rebalance);
      if (line !== previous) out.write(`${line}\n`);
      previous = line;
    },
    stop(): void {},
  };
}

/**
 * Shows `first`, then reads the status every {@link REBALANCE_POLL_MS} and shows each change, until the
 * rebalance is done, cancelled or paused, or the watch is stopped; then says how it stands. A stopped
 * watch leaves the rebalance running, and says so.
 *
 * @example
 * ```ts
 * const read = (signal: AbortSignal) => admin.describeRebalance({}, { abortSignal: signal });
 * await watchRebalance(await admin.startRebalance({ add: 1 }), { read, out: process.stdout });
 * ```
 */
export async function watchRebalance(first: Rebalance, options: WatchOptions): Promise<WatchResult> {
  const stop = new AbortController();
  const halt = (): void => stop.abort();
  options.signal?.addEventListener('abort', halt);
  if (options.signal?.aborted === true) halt();
  const unsubscribe = options.onInterrupt?.(halt);
  const view = options.out.isTTY === true ? terminalBar(options.out) : lineWriter(options.out);
  let last = first;
  try {
    view.show(last);
    while (!settled(last) && !stop.signal.aborted) {
      await pause(options.intervalMs ?? REBALANCE_POLL_MS, stop.signal);
      if (stop.signal.aborted) break;
      try {
        last = await options.read(stop.signal);
      } catch (error) {
        if (stop.signal.aborted) break;
        throw error;
      }
      view.show(last);
    }
  } finally {
    view.stop();
    options.signal?.removeEventListener('abort', halt);
    unsubscribe?.();
  }
  const stopped = !settled(last);
  options.out.write(
    stopped
      ? `stopped watching; rebalance ${last.id} goes on (ringstore rebalance status --watch follows it again; pause or cancel stop it)\n`
      : `${rebalanceOutcome(last)}\n`,
  );
  return { last, stopped };
}
