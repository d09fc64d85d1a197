// Strong reads and writes (`?consistency=strong`, docs/api.md "Consistency"), half each, zipfian keys.
// A strong write is acknowledged by the owner and every live replica; a strong read goes to the owner,
// never a cache, so a VU's strong read after its own strong write must see that version or a newer one.
// `npm run loadtest -- kv-strong`.
import { check } from 'k6';
import type { Options } from 'k6/options';
import { checkStatus, versionOf } from './lib/http.ts';
import { pick } from './lib/keys.ts';
import { get } from './lib/kv.ts';
import { baseOptions, load, scenario } from './lib/load.ts';
import { thresholds } from './lib/thresholds.ts';
import { type KeySpace, loadKeySpace, readKey, writeKey, zipfianKey } from './lib/workload.ts';

const shape = load({ rate: 20, durationSeconds: 60, vus: 8 });

export const options: Options = {
  ...baseOptions(),
  scenarios: { strong: scenario(shape) },
  thresholds: thresholds({ p95Ms: 600, p99Ms: 1200 }),
};

export function setup(): KeySpace {
  return loadKeySpace('strong', { records: 1000, valueBytes: 1000 });
}

export default function (space: KeySpace): void {
  const key = zipfianKey(space);
  if (pick({ read: 50, write: 50 }) === 'read') {
    readKey(key, 'strong', { op: 'read' });
    return;
  }
  const written = writeKey(space, key, 'strong', { op: 'write' });
  if (written === undefined) return;
  const after = get(key, { consistency: 'strong', tags: { op: 'read-own-write' } });
  if (checkStatus(after, 'read own write strong', 200)) {
    check(after, { 'strong read sees its own write or newer': (r) => (versionOf(r) ?? 0) >= written });
  }
}
