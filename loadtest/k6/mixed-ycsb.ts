// YCSB's core workloads (Cooper et al., "Benchmarking Cloud Serving Systems with YCSB", SoCC 2010) as YCSB
// defines them: 1,000 records of 1,000 bytes (10 fields of 100), loaded first; zipfian requests.
//   A update heavy: 50 % read, 50 % update     B read mostly: 95 % read, 5 % update
//   C read only:   100 % read                  F read-modify-write: 50 % read, 50 % read-modify-write
// The workloads run one after another, each RS_DURATION long (RS_WORKLOAD=A,C picks some); F's
// read-modify-write reads strongly and writes back with `If-Match`, so a 412 is a concurrent writer that
// won (counted in `rmw_conflicts`), not an error. `npm run loadtest -- mixed-ycsb`.
import exec from 'k6/execution';
import { Rate } from 'k6/metrics';
import type { Options, Scenario } from 'k6/options';
import { env } from './lib/env.ts';
import { checkStatus, versionOf } from './lib/http.ts';
import { pick, valueOf } from './lib/keys.ts';
import { get, put } from './lib/kv.ts';
import { baseOptions, load, scenario } from './lib/load.ts';
import { thresholds } from './lib/thresholds.ts';
import { type KeySpace, loadKeySpace, readKey, writeKey, zipfianKey } from './lib/workload.ts';

type Op = 'read' | 'update' | 'rmw';
const workloads: Record<string, Partial<Record<Op, number>>> = {
  A: { read: 50, update: 50 },
  B: { read: 95, update: 5 },
  C: { read: 100 },
  F: { read: 50, rmw: 50 },
};
const P95_MS = 500;
const P99_MS = 1200;
/** Between two workloads: the previous one's last iterations finish before the next starts. */
const GAP_SECONDS = 5;

const chosen = (env('RS_WORKLOAD') ?? 'A,B,C,F').split(',').map((name) => name.trim().toUpperCase());
for (const name of chosen) if (!(name in workloads)) throw new Error(`RS_WORKLOAD: unknown workload ${name} (A, B, C or F)`);

const shape = load({ rate: 30, durationSeconds: 30, vus: 8 });
const scenarios: Record<string, Scenario> = {};
const perWorkload: NonNullable<Options['thresholds']> = {};
chosen.forEach((name, index) => {
  scenarios[`workload${name}`] = scenario(shape, { startSeconds: index * (shape.durationSeconds + GAP_SECONDS), tags: { workload: name } });
  // Per-workload latency: also what puts each workload's percentiles in the summary export.
  perWorkload[`http_req_duration{workload:${name}}`] = [`p(95)<${P95_MS}`, `p(99)<${P99_MS}`];
});

const rmwConflicts = new Rate('rmw_conflicts');

export const options: Options = {
  ...baseOptions(),
  scenarios,
  thresholds: thresholds({ p95Ms: P95_MS, p99Ms: P99_MS }, perWorkload),
};

export function setup(): KeySpace {
  return loadKeySpace('ycsb', { records: 1000, valueBytes: 1000 });
}

function readModifyWrite(space: KeySpace, key: string): void {
  const read = get(key, { consistency: 'strong', tags: { op: 'rmw-read' } });
  const version = versionOf(read);
  if (!checkStatus(read, 'rmw read', 200) || version === undefined) return;
  const written = put(key, valueOf(space.valueBytes), {
    contentType: 'text/plain',
    ifMatch: `"${version}"`,
    expected: [200, 412],
    tags: { op: 'rmw-write' },
  });
  checkStatus(written, 'rmw write', 200, 412);
  rmwConflicts.add(written.status === 412);
}

export default function (space: KeySpace): void {
  const workload = exec.scenario.name.replace(/^workload/, '');
  const mix = workloads[workload]!;
  const key = zipfianKey(space);
  const op = pick(mix as Record<Op, number>);
  if (op === 'read') readKey(key, undefined, { op: 'read' });
  else if (op === 'update') writeKey(space, key, undefined, { op: 'update' });
  else readModifyWrite(space, key);
}
