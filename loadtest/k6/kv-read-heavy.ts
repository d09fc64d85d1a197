// 95 % reads, 5 % writes, eventual, zipfian keys over 1,000 records of 1,000 bytes: a read-mostly service
// on Ringstore's default consistency, where the caches answer most reads. `npm run loadtest -- kv-read-heavy`.
import { kvMix } from './lib/workload.ts';

const mix = kvMix('read-heavy', 95, { rate: 40, durationSeconds: 60, vus: 8 }, { p95Ms: 250, p99Ms: 600 });
export const options = mix.options;
export const setup = mix.setup;
export default mix.iteration;
