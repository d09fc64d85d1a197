// The fake Ringstore's routes over several keys or a value's content (fake-server.ts dispatches to them):
// POST /v1/batch/get as the server answers it, with the same inline limit and answer budget, and
// POST /v1/kv/{key}/increment with its refusals.

import { randomUUID } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { type RecordedRequest, sendError, sendJson, type StoredValue } from './fake-server';

/** What a route of this module needs of the fake: its values, its S3 objects and its address. */
export interface FakeKvState {
  readonly store: Map<string, StoredValue>;
  readonly blobs: Map<string, Buffer>;
  readonly url: string;
  /** Values past this many bytes in all are left out of a batch answer (the server's is 3 MiB). */
  batchValueBytesMax: number;
}

/** Values over this are kept in S3 by the server: a batch answer gives their URL. */
const INLINE_VALUE_BYTES_MAX = 350_000;
const BATCH_KEYS_MAX = 100;

function badKeys(keys: unknown): string | undefined {
  if (!Array.isArray(keys) || keys.length < 1 || keys.length > BATCH_KEYS_MAX) return `keys: a batch names 1 to ${BATCH_KEYS_MAX} keys`;
  const list: unknown[] = keys;
  const bad = list.findIndex((key) => typeof key !== 'string' || key === '' || Buffer.byteLength(key) > 1024);
  if (bad >= 0) return `keys.${bad}: not a key`;
  if (new Set(list).size !== list.length) return 'keys: each key may be named once';
  return undefined;
}

/** `POST /v1/batch/get` of `namespace`'s keys. */
export function fakeBatchGet(fake: FakeKvState, req: RecordedRequest, res: ServerResponse, namespace: string): void {
  const { keys } = JSON.parse(req.body.toString('utf8') || '{}') as { keys?: unknown };
  const problem = badKeys(keys);
  if (problem !== undefined) {
    sendError(res, 400, problem.startsWith('keys.') ? 'kv.keyInvalid' : 'request.invalid', problem);
    return;
  }
  let inlineBytes = 0;
  const items = (keys as string[]).map((key) => {
    const stored = fake.store.get(`${namespace}#${key}`);
    if (stored === undefined) return { key, found: false };
    const size = stored.value.byteLength;
    const metadata = { key, found: true, version: stored.version, contentType: stored.contentType, size };
    const expiry = stored.expiresAt === undefined ? {} : { expiresAt: stored.expiresAt };
    if (size > INLINE_VALUE_BYTES_MAX) {
      const blobId = randomUUID();
      fake.blobs.set(blobId, stored.value);
      return { ...metadata, ...expiry, url: `${fake.url}/s3/objects/${blobId}?X-Amz-Signature=fake` };
    }
    if (inlineBytes + size > fake.batchValueBytesMax) return { ...metadata, ...expiry, valueOmitted: true };
    inlineBytes += size;
    return { ...metadata, ...expiry, value: stored.value.toString('base64') };
  });
  sendJson(res, 200, { items });
}

/** `POST /v1/kv/{key}/increment` of the key stored under `id`; `failed` is the fake's If-Match check. */
export function fakeIncrement(
  fake: FakeKvState,
  req: RecordedRequest,
  res: ServerResponse,
  target: { key: string; id: string; failed: string | undefined },
): void {
  const { by = 1 } = JSON.parse(req.body.toString('utf8') || '{}') as { by?: unknown };
  if (typeof by !== 'number' || !Number.isSafeInteger(by)) {
    sendError(res, 400, 'request.invalid', 'body by: must be an integer');
    return;
  }
  if (target.failed !== undefined) {
    sendError(res, 412, 'kv.preconditionFailed', target.failed);
    return;
  }
  const current = fake.store.get(target.id);
  const text = current?.value.toString('utf8').trim() ?? '0';
  if (!/^[+-]?\d+$/.test(text)) {
    sendError(res, 409, 'kv.notAnInteger', `key ${target.key} holds ${JSON.stringify(text)}, not a decimal integer; nothing was written`);
    return;
  }
  const value = Number(text) + by;
  if (!Number.isSafeInteger(value)) {
    sendError(res, 409, 'kv.outOfRange', `adding ${by} would leave the safe integers; nothing was written`);
    return;
  }
  const version = (current?.version ?? 0) + 1;
  fake.store.set(target.id, { ...current, value: Buffer.from(String(value)), contentType: 'text/plain', version });
  sendJson(res, 200, { key: target.key, version, consistency: 'eventual', value }, { etag: `"${version}"` });
}
