// The change feed under load (GET /v1/watch, docs/watch.md): writers PUT fresh keys under the run's topic at the
// load's rate, while watchers long-poll the feed of that prefix from a cursor taken before the first write. Once the
// writers are done, each watcher lists every key written under the prefix (GET /v1/kv?prefix=) and keeps polling until
// each has reached it, or RS_WATCH_DRAIN passes: every key that never came is a failed check and counts in
// `watch_missing`, whose threshold is 0. `watch_delivery_lag` (a Trend) runs from the write's request (its time is
// the value) to the watch answer that carried it, on the load generator's one clock. `npm run loadtest -- watch`.
import { check, sleep } from 'k6';
import encoding from 'k6/encoding';
import exec from 'k6/execution';
import { Counter, Trend } from 'k6/metrics';
import type { Options, Scenario } from 'k6/options';
import { numberEnv, secondsEnv } from './lib/env.ts';
import { call, checkStatus, jsonOf } from './lib/http.ts';
import { runPrefix } from './lib/keys.ts';
import { put } from './lib/kv.ts';
import { baseOptions, load, RUN_TAGS, scenario, shape } from './lib/load.ts';
import { thresholds } from './lib/thresholds.ts';

const WATCHERS = Math.ceil(numberEnv('RS_WATCHERS', 2));
/** How long each watcher keeps polling after the writers' end for the keys it has not had yet. */
const DRAIN_SECONDS = secondsEnv('RS_WATCH_DRAIN', 15);
/** The writers start this long after the watchers, so every watcher holds its cursor before the first write. */
const LEAD_SECONDS = 2;
/** After the writers' scheduled end, for their last requests to be answered before the watchers list the keys. */
const SETTLE_SECONDS = 3;
/** A long poll's longest wait (the API's); shorter when the watcher's phase ends sooner. */
const WAIT_SECONDS_MAX = 20;

const deliveryLag = new Trend('watch_delivery_lag', true);
const delivered = new Counter('watch_delivered');
const repeats = new Counter('watch_repeats');
const missing = new Counter('watch_missing');
const acknowledged = new Counter('watch_writes_acknowledged');

const writers = load({ rate: 10, durationSeconds: 30, vus: 4 });
/** From the test's start (after setup) to the watchers' audit: the writers' lead and run, and their last answers. */
const AUDIT_AFTER_SECONDS = LEAD_SECONDS + writers.durationSeconds + SETTLE_SECONDS;
/** A watcher's whole life, with room for its last poll and its listing. */
const WATCHER_SECONDS = AUDIT_AFTER_SECONDS + DRAIN_SECONDS + 30;

/**
 * The watchers: each VU one watcher, whose first iteration lasts the whole run (its cursor and what it received
 * live in the iteration). Arrival: `RS_WATCHERS` iterations started in the first second; ramping: as many VUs held.
 */
function watcherScenario(): Scenario {
  const common = { exec: 'watch', tags: { ...RUN_TAGS, role: 'watcher' }, gracefulStop: `${WATCHER_SECONDS}s` };
  if (shape() === 'ramping') {
    return { ...common, executor: 'ramping-vus', startVUs: WATCHERS, stages: [{ duration: `${WATCHER_SECONDS}s`, target: WATCHERS }] };
  }
  return { ...common, executor: 'constant-arrival-rate', rate: WATCHERS, timeUnit: '1s', duration: '1s', preAllocatedVUs: WATCHERS };
}

export const options: Options = {
  ...baseOptions(),
  scenarios: {
    writers: scenario(writers, { exec: 'write', startSeconds: LEAD_SECONDS, tags: { role: 'writer' } }),
    watchers: watcherScenario(),
  },
  // The long polls wait for changes by design: they are tagged `phase:watch`, out of the latency thresholds (whose
  // requests are the writes and the listings); their answers are checked, and the lag has its own threshold.
  thresholds: thresholds(
    { p95Ms: 400, p99Ms: 900 },
    {
      watch_missing: ['count==0'],
      watch_delivered: ['count>0'],
      watch_delivery_lag: [`p(99)<${numberEnv('RS_WATCH_LAG_P99_MS', 5000)}`],
    },
  ),
};

interface Run {
  /** A topic of the run's own (a prefix with a `/`: one partition of the feed). */
  prefix: string;
  /** When the test started (setup's end), on the load generator's clock: every VU times its phases from it. */
  startedAtMs: number;
}

export function setup(): Run {
  return { prefix: `${runPrefix('watch').slice(0, -1)}/`, startedAtMs: Date.now() };
}

/** One write of a fresh key; its value is the time it was sent, which the watchers' lag is measured from. */
export function write(run: Run): void {
  const key = `${run.prefix}${exec.vu.idInTest}-${exec.vu.iterationInScenario}`;
  const response = put(key, String(Date.now()), { contentType: 'text/plain', tags: { op: 'write' } });
  if (checkStatus(response, 'write', 200)) acknowledged.add(1);
}

interface Change {
  key: string;
  version: number;
  value?: string;
}

interface WatchPage {
  changes: Change[];
  cursor: string;
}

/** What one watcher has received: the first delivery of each key (every key is written once). */
interface Received {
  cursor: string;
  keys: Set<string>;
}

/** One long poll from the watcher's cursor, waiting at most until `untilMs`; records what it brought. */
function poll(run: Run, received: Received, untilMs: number): void {
  // At least a second: a poll never spins, and overshoots its phase by at most that.
  const waitSeconds = Math.max(1, Math.min(WAIT_SECONDS_MAX, Math.floor((untilMs - Date.now()) / 1000)));
  const query = `prefix=${encodeURIComponent(run.prefix)}&cursor=${encodeURIComponent(received.cursor)}&waitSeconds=${waitSeconds}&limit=1000`;
  const response = call('GET', `/v1/watch?${query}`, null, {
    name: 'GET /v1/watch',
    tags: { op: 'watch', phase: 'watch' },
    timeout: `${WAIT_SECONDS_MAX + 30}s`,
  });
  const page = response.status === 200 ? jsonOf<WatchPage>(response) : undefined;
  if (!checkStatus(response, 'watch', 200) || !page) {
    sleep(1);
    return;
  }
  const now = Date.now();
  for (const change of page.changes) {
    if (received.keys.has(change.key)) {
      repeats.add(1);
      continue;
    }
    received.keys.add(change.key);
    delivered.add(1);
    const sentAtMs = Number(encoding.b64decode(change.value ?? '', 'std', 's'));
    if (sentAtMs > 0) deliveryLag.add(now - sentAtMs);
  }
  received.cursor = page.cursor;
}

/** Every key stored under the prefix, page by page: what the writers wrote, as the store holds it. */
function writtenKeys(prefix: string): string[] {
  const keys: string[] = [];
  let cursor: string | undefined;
  do {
    const query = `prefix=${encodeURIComponent(prefix)}&limit=1000${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
    const response = call('GET', `/v1/kv?${query}`, null, { name: 'GET /v1/kv', tags: { op: 'list' } });
    const page = response.status === 200 ? jsonOf<{ items: { key: string }[]; cursor?: string }>(response) : undefined;
    if (!checkStatus(response, 'list written keys', 200) || !page) return keys;
    keys.push(...page.items.map((item) => item.key));
    cursor = page.cursor;
  } while (cursor);
  return keys;
}

// A VU watches once: in the ramping shape it is held for the whole run and would start its iteration again.
let watched = false;

export function watch(run: Run): void {
  if (watched) {
    sleep(1);
    return;
  }
  watched = true;
  const first = call('GET', `/v1/watch?prefix=${encodeURIComponent(run.prefix)}`, null, {
    name: 'GET /v1/watch',
    tags: { op: 'watch-start', phase: 'watch' },
  });
  const start = first.status === 200 ? jsonOf<WatchPage>(first) : undefined;
  if (!checkStatus(first, 'watch from now', 200) || !start) return;
  const received: Received = { cursor: start.cursor, keys: new Set() };
  const auditAtMs = run.startedAtMs + AUDIT_AFTER_SECONDS * 1000;
  while (Date.now() < auditAtMs) poll(run, received, auditAtMs);
  const written = writtenKeys(run.prefix);
  const drainUntilMs = Date.now() + DRAIN_SECONDS * 1000;
  while (Date.now() < drainUntilMs && written.some((key) => !received.keys.has(key))) poll(run, received, drainUntilMs);
  for (const key of written) {
    const came = check(key, { 'written key delivered to the watcher': (k) => received.keys.has(k) });
    if (!came) missing.add(1);
  }
  missing.add(0);
}
