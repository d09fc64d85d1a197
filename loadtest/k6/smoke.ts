// A few seconds, every route family once, every answer checked: public routes, auth, KV (write, read,
// head, conditional writes, strong consistency, list, delete), large values through the presigned upload
// flow, transactions, the ring, and the admin routes when RS_ADMIN_KEY is given. CI runs it against the
// local cloud so that the scripts and their helpers cannot rot. `npm run loadtest -- smoke`.
import { check, group } from 'k6';
import type { Options } from 'k6/options';
import { blobOf, readBlob, writeBlob } from './lib/blobs.ts';
import { target } from './lib/env.ts';
import { call, checkStatus, header, jsonOf, kvPath, versionOf } from './lib/http.ts';
import { runPrefix } from './lib/keys.ts';
import { ackOf, committed, get, put, txn } from './lib/kv.ts';
import { baseOptions, RUN_TAGS } from './lib/load.ts';
import { thresholds } from './lib/thresholds.ts';

/** Just over the 4 MiB direct-body limit: the upload flow, and a 303 on read. */
const LARGE_BYTES = 4 * 1024 * 1024 + 1024;

export const options: Options = {
  ...baseOptions(),
  scenarios: { smoke: { executor: 'shared-iterations', vus: 1, iterations: 1, maxDuration: '2m', tags: { ...RUN_TAGS } } },
  // Every check must hold; latency bounds only catch a hang (the large value takes a second or two locally).
  thresholds: thresholds({ p95Ms: 5000, p99Ms: 10000, checksRate: 1 }),
};

interface ListPage {
  items: { key: string; version: number }[];
  cursor?: string;
}

function publicRoutes(): void {
  const root = call('GET', '/', null, { name: 'GET /', key: null });
  if (checkStatus(root, 'root', 200)) check(jsonOf<{ name: string }>(root), { 'root names Ringstore': (b) => b?.name === 'Ringstore' });
  checkStatus(call('GET', '/openapi.json', null, { name: 'GET /openapi.json', key: null }), 'openapi', 200);
  checkStatus(call('GET', kvPath('any'), null, { name: 'GET /v1/kv/{key}', key: null, expected: [401] }), 'no key refused', 401);
}

function keyValue(prefix: string): void {
  const key = `${prefix}greeting`;
  const created = put(key, 'hello', { contentType: 'text/plain', ifNoneMatch: '*' });
  checkStatus(created, 'create if absent', 200);
  const first = ackOf(created)?.version ?? 0;
  checkStatus(put(key, 'again', { ifNoneMatch: '*', expected: [412] }), 'create if absent, present', 412);
  const read = get(key);
  if (checkStatus(read, 'read', 200)) {
    check(read, { 'read body is the value': (r) => r.body === 'hello', 'read ETag is the version': (r) => versionOf(r) === first });
  }
  const head = call('HEAD', kvPath(key), null, { name: 'HEAD /v1/kv/{key}' });
  if (checkStatus(head, 'head', 200)) check(head, { 'head Content-Length is the size': (r) => header(r, 'content-length') === '5' });
  const strong = put(key, 'hi', { contentType: 'text/plain', consistency: 'strong', ifMatch: `"${first}"` });
  if (checkStatus(strong, 'strong write if-match', 200)) {
    check(ackOf(strong), { 'strong write on 2+ copies': (a) => a?.consistency === 'strong' && (a.copies ?? 0) >= 2 });
  }
  checkStatus(put(key, 'stale', { ifMatch: `"${first}"`, expected: [412] }), 'write if-match stale', 412);
  const strongRead = get(key, { consistency: 'strong' });
  if (checkStatus(strongRead, 'strong read', 200)) check(strongRead, { 'strong read sees the strong write': (r) => r.body === 'hi' });
  const listed = call('GET', `/v1/kv?prefix=${encodeURIComponent(prefix)}&limit=10`, null, { name: 'GET /v1/kv' });
  if (checkStatus(listed, 'list', 200)) {
    check(jsonOf<ListPage>(listed), { 'list finds the key': (page) => page?.items.some((item) => item.key === key) === true });
  }
  checkStatus(call('DELETE', kvPath(key), null, { name: 'DELETE /v1/kv/{key}' }), 'delete', 200);
  checkStatus(get(key, { consistency: 'strong', expected: [404] }), 'read deleted', 404);
}

function largeValue(prefix: string): void {
  const key = `${prefix}large`;
  const blob = blobOf(LARGE_BYTES);
  if (writeBlob(key, blob).status === 200) readBlob(key, blob);
}

function transactions(prefix: string): void {
  const [a, b] = [`${prefix}a`, `${prefix}b`];
  const written = txn([
    { op: 'put', key: a, value: '1', ifVersion: 0 },
    { op: 'put', key: b, value: '2', ifVersion: 0 },
  ]);
  checkStatus(written, 'txn write', 200);
  check(committed(written), { 'txn wrote both keys': (r) => r?.writes.length === 2 });
  const read = txn([
    { op: 'get', key: a },
    { op: 'get', key: b },
  ]);
  checkStatus(read, 'txn read', 200);
  check(committed(read), { 'txn read both keys': (r) => r?.reads.every((entry) => entry.found) === true });
  const refused = txn([{ op: 'check', key: a, ifVersion: 99 }]);
  checkStatus(refused, 'txn failed check', 412);
}

function ring(): void {
  const answer = call('GET', '/v1/ring', null, { name: 'GET /v1/ring' });
  if (checkStatus(answer, 'ring', 200))
    check(jsonOf<{ ranges: unknown[] }>(answer), { 'ring has ranges': (r) => (r?.ranges.length ?? 0) > 0 });
}

function admin(): void {
  checkStatus(call('GET', '/v1/admin/keys', null, { name: 'GET /v1/admin/keys', expected: [403] }), 'admin route with a user key', 403);
  if (target.adminKey === undefined) return;
  checkStatus(call('GET', '/v1/admin/keys', null, { name: 'GET /v1/admin/keys', key: target.adminKey }), 'admin keys', 200);
  checkStatus(call('GET', '/v1/admin/shards', null, { name: 'GET /v1/admin/shards', key: target.adminKey }), 'admin shards', 200);
}

export default function (): void {
  const prefix = runPrefix('smoke');
  group('public', publicRoutes);
  group('kv', () => keyValue(prefix));
  group('large value', () => largeValue(prefix));
  group('transactions', () => transactions(prefix));
  group('ring', ring);
  group('admin', admin);
}
