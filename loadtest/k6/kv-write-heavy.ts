// 50 % reads, 50 % writes, eventual, zipfian keys over 1,000 records of 1,000 bytes: a session store or
// counters, where every write also feeds replication. `npm run loadtest -- kv-write-heavy`.
import { kvMix } from './lib/workload.ts';

const mix = kvMix('write-heavy', 50, { rate: 30, durationSeconds: 60, vus: 8 }, { p95Ms: 400, p99Ms: 900 });
export const options = mix.options;
export const setup = mix.setup;
export default mix.iteration;
