// The two sides of `npm run bench:watch` (bench/watch.ts), both over HTTP through the local cloud's gateway as a
// client calls them: writers that PUT at a fixed rate and note when each write was acknowledged, and watchers that
// long-poll GET /v1/watch from a cursor and note when each change reached them.
import { performance } from 'node:perf_hooks';
import { decodeCursor, msOfPosition } from '../lambdas/core/watch';

export interface Endpoint {
  url: string;
  apiKey: string;
}

/** A long poll's wait: the API's longest, so a watcher waits in the service, not in a loop of its own. */
export const waitSeconds = 20;
/** Each request is bounded, so a stuck handler ends the run with an error instead of hanging it. */
const writeTimeoutMs = 10_000;
const pollTimeoutMs = (waitSeconds + 10) * 1000;
/** Changes per answer: the API's largest, so a watcher that fell behind catches up in few requests. */
const pageLimit = 1000;

export interface Ack {
  key: string;
  version: number;
  /** Date.now() once the PUT's answer was read: the acknowledgement as the writer sees it. */
  ackAtMs: number;
}

/** A change as the watchers name it: the same key and version is the same change (a repeat). */
export const changeIdOf = (change: { key: string; version: number }): string => `${change.key}@${change.version}`;

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** One eventual PUT; its acknowledgement, or undefined when it was not acknowledged. */
export async function put(endpoint: Endpoint, key: string, value: Uint8Array): Promise<Ack | undefined> {
  try {
    const response = await fetch(`${endpoint.url}/v1/kv/${encodeURIComponent(key)}`, {
      method: 'PUT',
      headers: { 'x-api-key': endpoint.apiKey, 'content-type': 'application/octet-stream' },
      body: value,
      signal: AbortSignal.timeout(writeTimeoutMs),
    });
    if (response.status !== 200) {
      await response.arrayBuffer();
      return undefined;
    }
    const { version } = (await response.json()) as { version: number };
    return { key, version, ackAtMs: Date.now() };
  } catch {
    return undefined;
  }
}

export interface WritePlan {
  count: number;
  /** Writes a second over all the writers. */
  rate: number;
  writers: number;
  keyOf: (n: number) => string;
  value: Uint8Array;
}

export interface WriteRun {
  acks: Ack[];
  failed: number;
  /** How far behind its schedule the latest write was sent (ms): near 0 when the writers kept the rate. */
  lateMsMax: number;
  elapsedMs: number;
}

/**
 * An open loop: write n is due at n / rate seconds after the start, whichever writer is free takes it, and a slow
 * answer does not slow the schedule (up to `writers` writes in flight at once).
 */
export async function writeAtRate(endpoint: Endpoint, plan: WritePlan): Promise<WriteRun> {
  const acks: Ack[] = [];
  let failed = 0;
  let lateMsMax = 0;
  let next = 0;
  const startedAt = performance.now();
  const writer = async () => {
    for (let n = next++; n < plan.count; n = next++) {
      const waitMs = startedAt + (n * 1000) / plan.rate - performance.now();
      if (waitMs > 0) await sleep(waitMs);
      else lateMsMax = Math.max(lateMsMax, -waitMs);
      const ack = await put(endpoint, plan.keyOf(n), plan.value);
      if (ack) acks.push(ack);
      else failed += 1;
    }
  };
  await Promise.all(Array.from({ length: plan.writers }, writer));
  return { acks, failed, lateMsMax: Math.round(lateMsMax), elapsedMs: performance.now() - startedAt };
}

export type WatcherKind = 'prefix' | 'namespace';

export interface Delivery {
  /** Date.now() once the watch answer that carried the change was read. */
  deliveredAtMs: number;
  /** When the appender stamped the entry (its position's millisecond, read from the change's own cursor). */
  stampedAtMs: number;
}

export interface Watcher {
  kind: WatcherKind;
  prefix: string;
  /** The first delivery of each change, by changeIdOf. */
  deliveries: Map<string, Delivery>;
  /** Deliveries of a change this watcher already had (the feed is at least once), by changeIdOf; the counts leave the warm-up out. */
  repeats: Map<string, number>;
  requests: number;
}

interface WatchChange {
  key: string;
  version: number;
  cursor: string;
}

interface WatchPage {
  changes: WatchChange[];
  cursor: string;
}

async function watchOnce(endpoint: Endpoint, prefix: string, cursor: string | undefined, wait: number): Promise<WatchPage> {
  const query = new URLSearchParams({ prefix, waitSeconds: String(wait), limit: String(pageLimit), ...(cursor ? { cursor } : {}) });
  const response = await fetch(`${endpoint.url}/v1/watch?${query.toString()}`, {
    headers: { 'x-api-key': endpoint.apiKey },
    signal: AbortSignal.timeout(pollTimeoutMs),
  });
  // A refused or failed watch is not a lag to measure: the bench stops on it.
  if (response.status !== 200) throw new Error(`GET /v1/watch answered ${response.status}: ${await response.text()}`);
  return (await response.json()) as WatchPage;
}

/** A watcher of `prefix` and its cursor from now, taken before any write it is to see is made. */
export async function startWatcher(endpoint: Endpoint, kind: WatcherKind, prefix: string): Promise<{ watcher: Watcher; cursor: string }> {
  const { cursor } = await watchOnce(endpoint, prefix, undefined, 0);
  return { watcher: { kind, prefix, deliveries: new Map(), repeats: new Map(), requests: 0 }, cursor };
}

/** Long-polls from `cursor` until `done` holds after an answer, recording each change's first delivery and its repeats. */
export async function follow(endpoint: Endpoint, watcher: Watcher, cursor: string, done: (watcher: Watcher) => boolean): Promise<void> {
  let at = cursor;
  while (!done(watcher)) {
    const page = await watchOnce(endpoint, watcher.prefix, at, waitSeconds);
    const deliveredAtMs = Date.now();
    watcher.requests += 1;
    for (const change of page.changes) {
      const id = changeIdOf(change);
      if (watcher.deliveries.has(id)) watcher.repeats.set(id, (watcher.repeats.get(id) ?? 0) + 1);
      else watcher.deliveries.set(id, { deliveredAtMs, stampedAtMs: msOfPosition(decodeCursor(change.cursor).position) });
    }
    at = page.cursor;
  }
}
