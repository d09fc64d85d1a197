// A real HTTP server on 127.0.0.1 for SDK and CLI tests: a bare recorder (`startServer`) and an
// in-memory Ringstore that follows the REST contract, with a fake S3 for large values.

import { createHash, randomUUID } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fakeBatchGet, fakeIncrement } from './fake-kv-extras';
import { FakeVolumes } from './fake-volumes';
import { FakeFeed, FeedingStore } from './fake-watch';

export interface RecordedRequest {
  method: string;
  /** Path and query exactly as received (still percent-encoded). */
  rawUrl: string;
  pathname: string;
  query: URLSearchParams;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

export type Handler = (req: RecordedRequest, res: ServerResponse) => void | Promise<void>;

export interface RunningServer {
  url: string;
  requests: RecordedRequest[];
  close(): Promise<void>;
}

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

export async function startServer(handler: Handler): Promise<RunningServer> {
  const requests: RecordedRequest[] = [];
  const server = createServer((req, res) => {
    void (async () => {
      const body = await readBody(req);
      const rawUrl = req.url ?? '/';
      const parsed = new URL(rawUrl, 'http://fake');
      const recorded: RecordedRequest = {
        method: req.method ?? 'GET',
        rawUrl,
        pathname: parsed.pathname,
        query: parsed.searchParams,
        headers: req.headers,
        body,
      };
      requests.push(recorded);
      try {
        await handler(recorded, res);
      } catch (err) {
        if (!res.headersSent) sendJson(res, 500, { error: { code: 'fake.bug', message: String(err), retryable: false } });
      }
    })();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export type Reply = (res: ServerResponse) => void;

/** A server that answers each request with the next of `replies` (which tests push), else with `fallback`. */
export async function startScriptedServer(fallback: Reply): Promise<RunningServer & { replies: Reply[] }> {
  const replies: Reply[] = [];
  const server = await startServer((_req, res) => (replies.shift() ?? fallback)(res));
  return Object.assign(server, { replies });
}

export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...headers });
  res.end(text);
}

export function sendError(
  res: ServerResponse,
  status: number,
  code: string,
  message: string,
  retryable = false,
  headers: Record<string, string> = {},
): void {
  sendJson(res, status, { error: { code, message, retryable } }, headers);
}

interface FakeTxnOp {
  op: 'get' | 'put' | 'delete' | 'check';
  key: string;
  value?: string;
  encoding?: 'utf8' | 'base64';
  contentType?: string;
  ifVersion?: number;
}

export interface StoredValue {
  value: Buffer;
  contentType: string;
  version: number;
  expiresAt?: string;
}

interface Upload {
  key: string;
  namespace: string;
  size: number;
  contentType: string;
  bytes?: Buffer;
}

interface ApiKeyRecord {
  keyId: string;
  apiKey: string;
  namespace: string;
  role: 'user' | 'admin';
  createdAt: string;
  revokedAt?: string;
  description?: string;
}

export interface InjectedFailure {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
}

/** Values larger than this are served by a 303 to the fake S3, like the real server. */
const REDIRECT_BYTES_MIN = 4 * 1024 * 1024;

export const FAKE_RING = {
  epoch: 3,
  replicationFactor: 3,
  vnodesPerShard: 2,
  tokenBits: 32,
  shards: [0, 1, 2, 3].map((id) => ({ id, table: `ringstore-test-shard-${id}`, status: 'active' })),
  // Eight equal ranges of 2^29 tokens; the first wraps around zero.
  ranges: Array.from({ length: 8 }, (_, i) => ({
    start: i === 0 ? 2 ** 32 - 1 : i * 2 ** 29 - 1,
    end: (i + 1) * 2 ** 29 - 1,
    owner: i % 4,
    replicas: [i % 4, (i + 1) % 4, (i + 2) % 4],
  })),
};

/**
 * An in-memory Ringstore behind a real HTTP server. API keys: `admin-key` (admin) and
 * `user-key` (user), both in namespace `test`. `failNext` injects error answers on API routes;
 * `corruptUploads` makes the fake S3 flip a byte of what it receives.
 */
export class FakeRingstore {
  /** The change feed (fake-watch.ts): every write of `store`, served by GET /v1/watch. */
  readonly feed = new FakeFeed();
  readonly store: Map<string, StoredValue> = new FeedingStore(this.feed);
  readonly uploads = new Map<string, Upload>();
  readonly blobs = new Map<string, Buffer>();
  /** Block volumes (fake-volumes.ts), by namespace. */
  readonly volumes = new FakeVolumes();
  readonly apiKeys: ApiKeyRecord[] = [
    { keyId: 'k_admin', apiKey: 'admin-key', namespace: 'test', role: 'admin', createdAt: '2025-01-01T00:00:00.000Z' },
    { keyId: 'k_user', apiKey: 'user-key', namespace: 'test', role: 'user', createdAt: '2025-01-01T00:00:00.000Z' },
  ];
  failNext: InjectedFailure[] = [];
  corruptUploads = false;
  /** Bytes of values a batch answer carries inline before it leaves the rest out, as the server's 3 MiB. */
  batchValueBytesMax = 3 * 1024 * 1024;
  private server?: RunningServer;

  get url(): string {
    if (this.server === undefined) throw new Error('not started');
    return this.server.url;
  }

  get requests(): RecordedRequest[] {
    return this.server?.requests ?? [];
  }

  async start(): Promise<this> {
    this.server = await startServer((req, res) => this.handle(req, res));
    return this;
  }

  async close(): Promise<void> {
    this.feed.close();
    await this.server?.close();
  }

  private handle(req: RecordedRequest, res: ServerResponse): void {
    const segments = req.pathname.split('/').slice(1);
    if (segments[0] === 's3') {
      this.handleS3(req, res, segments);
      return;
    }

    const caller = this.apiKeys.find((k) => k.apiKey === req.headers['x-api-key'] && k.revokedAt === undefined);
    if (caller === undefined) {
      sendError(res, 401, 'auth.invalidKey', 'missing or unknown API key');
      return;
    }
    const failure = this.failNext.shift();
    if (failure !== undefined) {
      const text = failure.body === undefined ? '' : typeof failure.body === 'string' ? failure.body : JSON.stringify(failure.body);
      res.writeHead(failure.status, { ...(text === '' ? {} : { 'content-type': 'application/json' }), ...failure.headers });
      res.end(text);
      return;
    }

    if (segments[0] !== 'v1') {
      sendError(res, 404, 'route.notFound', 'no such route');
      return;
    }
    if (segments[1] === 'ring' && req.method === 'GET') {
      sendJson(res, 200, FAKE_RING);
      return;
    }
    if (segments[1] === 'admin' && segments[2] === 'keys') {
      this.handleAdmin(req, res, caller, segments[3]);
      return;
    }
    if (segments[1] === 'admin' && segments[2] === 'failovers') {
      this.handleFailovers(req, res, caller);
      return;
    }
    if (segments[1] === 'admin' && segments[2] === 'rebalance') {
      this.handleRebalance(req, res, caller, segments[3], segments[4]);
      return;
    }
    if (segments[1] === 'admin' && segments[2] === 'namespaces' && segments[3] !== undefined) {
      this.handleNamespace(req, res, caller, decodeURIComponent(segments[3]));
      return;
    }
    if (segments[1] === 'admin' && segments[2] === 'dr') {
      this.handleDr(req, res, caller, segments[3]);
      return;
    }
    if (segments[1] === 'txn' && req.method === 'POST') {
      this.transact(req, res, caller.namespace);
      return;
    }
    if (segments[1] === 'watch' && segments.length === 2 && req.method === 'GET') {
      void this.feed.handle(req, res, caller.namespace);
      return;
    }
    if (segments[1] === 'batch' && segments[2] === 'get' && req.method === 'POST') {
      fakeBatchGet(this, req, res, caller.namespace);
      return;
    }
    if (segments[1] === 'volumes') {
      this.volumes.handle(req, res, caller.namespace, segments.slice(2));
      return;
    }
    if (segments[1] !== 'kv') {
      sendError(res, 404, 'route.notFound', 'no such route');
      return;
    }
    if (segments.length === 2 && req.method === 'GET') {
      this.list(req, res, caller.namespace);
      return;
    }
    const key = decodeURIComponent(segments[2] ?? '');
    if (Buffer.byteLength(key) === 0 || Buffer.byteLength(key) > 1024) {
      sendError(res, 400, 'kv.invalidKey', 'bad key');
      return;
    }
    const id = `${caller.namespace}#${key}`;
    if (segments.length === 3) {
      this.handleKey(req, res, key, id);
      return;
    }
    if (segments[3] === 'increment' && segments.length === 4 && req.method === 'POST') {
      fakeIncrement(this, req, res, { key, id, failed: this.precondition(req, this.store.get(id)) });
      return;
    }
    if (segments[3] === 'uploads' && segments.length === 4 && req.method === 'POST') {
      this.createUpload(req, res, key, caller.namespace);
      return;
    }
    if (segments[3] === 'uploads' && segments[5] === 'commit' && req.method === 'POST') {
      this.commitUpload(req, res, key, id, decodeURIComponent(segments[4] ?? ''));
      return;
    }
    sendError(res, 404, 'route.notFound', 'no such route');
  }

  private precondition(req: RecordedRequest, current: StoredValue | undefined): string | undefined {
    const ifMatch = req.headers['if-match'];
    if (ifMatch !== undefined && (current === undefined || ifMatch !== `"${current.version}"`)) return 'version does not match';
    if (req.headers['if-none-match'] === '*' && current !== undefined) return 'key exists';
    return undefined;
  }

  private write(id: string, key: string, value: Buffer, contentType: string, ttlSeconds: number | undefined, res: ServerResponse): void {
    const current = this.store.get(id);
    const version = (current?.version ?? 0) + 1;
    const stored: StoredValue = { value, contentType, version };
    if (ttlSeconds !== undefined) stored.expiresAt = new Date(Date.UTC(2030, 0, 1) + ttlSeconds * 1000).toISOString();
    this.store.set(id, stored);
    sendJson(res, 200, { key, version }, { etag: `"${version}"` });
  }

  private handleKey(req: RecordedRequest, res: ServerResponse, key: string, id: string): void {
    const current = this.store.get(id);
    if (req.method === 'PUT') {
      const failed = this.precondition(req, current);
      if (failed !== undefined) {
        sendError(res, 412, 'kv.preconditionFailed', failed);
        return;
      }
      if (req.body.byteLength > REDIRECT_BYTES_MIN) {
        sendError(res, 413, 'kv.bodyTooLarge', 'use the upload flow');
        return;
      }
      const ttl = req.query.get('ttlSeconds');
      if (ttl !== null && !/^[1-9]\d*$/.test(ttl)) {
        sendError(res, 400, 'kv.invalidTtl', 'ttlSeconds must be an integer >= 1');
        return;
      }
      const contentType = req.headers['content-type'] ?? 'application/octet-stream';
      this.write(id, key, req.body, contentType, ttl === null ? undefined : Number(ttl), res);
      return;
    }
    if (req.method === 'DELETE') {
      if (current === undefined) {
        sendError(res, 404, 'kv.notFound', 'no value is stored under this key');
        return;
      }
      const failed = this.precondition(req, current);
      if (failed !== undefined) {
        sendError(res, 412, 'kv.preconditionFailed', failed);
        return;
      }
      this.store.delete(id);
      sendJson(res, 200, { key, version: current.version + 1 });
      return;
    }
    if (req.method === 'GET' || req.method === 'HEAD') {
      if (current === undefined) {
        if (req.method === 'HEAD') {
          res.writeHead(404);
          res.end();
          return;
        }
        sendError(res, 404, 'kv.notFound', 'no value is stored under this key');
        return;
      }
      const headers: Record<string, string> = {
        'content-type': current.contentType,
        etag: `"${current.version}"`,
        'x-ringstore-version': String(current.version),
        ...(current.expiresAt === undefined ? {} : { 'x-ringstore-expires-at': current.expiresAt }),
      };
      if (req.method === 'HEAD') {
        res.writeHead(200, { ...headers, 'content-length': String(current.value.byteLength) });
        res.end();
        return;
      }
      if (current.value.byteLength > REDIRECT_BYTES_MIN) {
        const blobId = randomUUID();
        this.blobs.set(blobId, current.value);
        res.writeHead(303, { ...headers, location: `${this.url}/s3/objects/${blobId}?X-Amz-Signature=fake` });
        res.end();
        return;
      }
      res.writeHead(200, { ...headers, 'content-length': String(current.value.byteLength) });
      res.end(current.value);
      return;
    }
    sendError(res, 405, 'route.methodNotAllowed', 'method not allowed');
  }

  private list(req: RecordedRequest, res: ServerResponse, namespace: string): void {
    const prefix = req.query.get('prefix') ?? '';
    const limit = Number(req.query.get('limit') ?? '100');
    if (!Number.isInteger(limit) || limit < 1 || limit > 1000) {
      sendError(res, 400, 'kv.invalidLimit', 'limit must be 1..1000');
      return;
    }
    const after = req.query.get('cursor');
    const start = after === null ? '' : Buffer.from(after, 'base64url').toString('utf8');
    const keys = [...this.store.keys()]
      .filter((id) => id.startsWith(`${namespace}#`))
      .map((id) => id.slice(namespace.length + 1))
      .filter((key) => key.startsWith(prefix) && (after === null || key > start))
      .sort();
    const page = keys.slice(0, limit);
    const items = page.map((key) => {
      const stored = this.store.get(`${namespace}#${key}`) as StoredValue;
      return {
        key,
        version: stored.version,
        size: stored.value.byteLength,
        contentType: stored.contentType,
        ...(stored.expiresAt === undefined ? {} : { expiresAt: stored.expiresAt }),
      };
    });
    const last = page[page.length - 1];
    const more = keys.length > limit && last !== undefined;
    sendJson(res, 200, more ? { items, cursor: Buffer.from(last, 'utf8').toString('base64url') } : { items });
  }

  private createUpload(req: RecordedRequest, res: ServerResponse, key: string, namespace: string): void {
    const body = JSON.parse(req.body.toString('utf8')) as { size?: unknown; contentType?: unknown };
    if (typeof body.size !== 'number' || body.size > 10 * 1024 * 1024) {
      sendError(res, 413, 'kv.valueTooLarge', 'too large');
      return;
    }
    const uploadId = randomUUID();
    const contentType = typeof body.contentType === 'string' ? body.contentType : 'application/octet-stream';
    this.uploads.set(uploadId, { key, namespace, size: body.size, contentType });
    sendJson(res, 201, {
      uploadId,
      url: `${this.url}/s3/uploads/${uploadId}?X-Amz-Signature=fake`,
      method: 'PUT',
      headers: { 'content-type': contentType, 'x-amz-meta-upload': uploadId },
      expiresAt: '2030-01-01T00:15:00.000Z',
    });
  }

  private commitUpload(req: RecordedRequest, res: ServerResponse, key: string, id: string, uploadId: string): void {
    const upload = this.uploads.get(uploadId);
    if (upload === undefined || upload.key !== key) {
      sendError(res, 404, 'kv.uploadNotFound', 'no such upload');
      return;
    }
    if (upload.bytes === undefined) {
      sendError(res, 409, 'kv.uploadIncomplete', 'nothing uploaded');
      return;
    }
    const body = JSON.parse(req.body.toString('utf8')) as { sha256?: unknown; contentType?: unknown; ttlSeconds?: unknown };
    const actual = createHash('sha256').update(upload.bytes).digest('hex');
    if (body.sha256 !== actual) {
      sendError(res, 400, 'kv.checksumMismatch', 'sha256 does not match the uploaded bytes');
      return;
    }
    if (upload.bytes.byteLength !== upload.size) {
      sendError(res, 400, 'kv.sizeMismatch', 'size does not match');
      return;
    }
    const failed = this.precondition(req, this.store.get(id));
    if (failed !== undefined) {
      sendError(res, 412, 'kv.preconditionFailed', failed);
      return;
    }
    this.uploads.delete(uploadId);
    const contentType = typeof body.contentType === 'string' ? body.contentType : upload.contentType;
    this.write(id, key, upload.bytes, contentType, typeof body.ttlSeconds === 'number' ? body.ttlSeconds : undefined, res);
  }

  /** A serial `POST /v1/txn`: versions are checked against the state before the transaction, as the server does. */
  private transact(req: RecordedRequest, res: ServerResponse, namespace: string): void {
    const body = JSON.parse(req.body.toString('utf8')) as { ops: FakeTxnOp[] };
    const txid = `fake-${randomUUID()}`;
    const abort = (status: number, code: string, reason: string, key: string, message: string): void =>
      sendJson(res, status, {
        error: {
          code,
          message: `transaction aborted: ${message}`,
          retryable: reason === 'conflict',
          details: { txid, status: 'aborted', reason, key },
        },
      });
    const pending = new Map<string, StoredValue | null>();
    const reads: unknown[] = [];
    for (const op of body.ops) {
      const id = `${namespace}#${op.key}`;
      const before = this.store.get(id);
      if (op.ifVersion !== undefined && (before?.version ?? 0) !== op.ifVersion) {
        abort(412, 'kv.preconditionFailed', 'precondition', op.key, `key ${op.key} is at version ${before?.version ?? 0}`);
        return;
      }
      const current = pending.has(id) ? (pending.get(id) ?? undefined) : before;
      if (op.op === 'get') {
        reads.push(
          current === undefined
            ? { key: op.key, found: false }
            : {
                key: op.key,
                found: true,
                value: current.value.toString('base64'),
                contentType: current.contentType,
                ...(pending.has(id) ? {} : { version: current.version }),
              },
        );
      } else if (op.op === 'put') {
        const value = Buffer.from(op.value ?? '', op.encoding === 'base64' ? 'base64' : 'utf8');
        pending.set(id, { value, contentType: op.contentType ?? 'application/octet-stream', version: (before?.version ?? 0) + 1 });
      } else if (op.op === 'delete') {
        if (current === undefined) {
          abort(404, 'kv.notFound', 'notFound', op.key, `key ${op.key} not found`);
          return;
        }
        pending.set(id, null);
      }
    }
    this.feed.txid = txid;
    const writes = [...pending.entries()].map(([id, value]) => {
      const version = (this.store.get(id)?.version ?? 0) + 1;
      if (value === null) this.store.delete(id);
      else this.store.set(id, { ...value, version });
      return { key: id.slice(namespace.length + 1), version };
    });
    this.feed.txid = undefined;
    sendJson(res, 200, { status: 'committed', txid, writes, reads });
  }

  private handleS3(req: RecordedRequest, res: ServerResponse, segments: string[]): void {
    if (req.query.get('X-Amz-Signature') !== 'fake') {
      res.writeHead(403, { 'content-type': 'application/xml' });
      res.end('<Error><Code>AccessDenied</Code></Error>');
      return;
    }
    const id = segments[2] ?? '';
    if (segments[1] === 'uploads' && req.method === 'PUT') {
      const upload = this.uploads.get(id);
      if (upload === undefined) {
        res.writeHead(404);
        res.end();
        return;
      }
      const bytes = Buffer.from(req.body);
      if (this.corruptUploads && bytes.length > 0) bytes[0] = (bytes[0] ?? 0) ^ 0xff;
      upload.bytes = bytes;
      res.writeHead(200, { etag: '"s3etag"' });
      res.end();
      return;
    }
    if (segments[1] === 'objects' && req.method === 'GET') {
      const blob = this.blobs.get(id);
      if (blob === undefined) {
        res.writeHead(404, { 'content-type': 'application/xml' });
        res.end('<Error><Code>NoSuchKey</Code></Error>');
        return;
      }
      res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': String(blob.byteLength) });
      res.end(blob);
      return;
    }
    res.writeHead(405);
    res.end();
  }

  /** Failovers started through the fake: recorded, never run (each is shown as completed, one range moved). */
  readonly failovers: Array<{ id: string; shard: number; reason: string; action: 'failOver' | 'moveBack'; requestedAt: string }> = [];

  /**
   * The rebalance started through the fake: six ranges move, `rebalanceRangesPerRead` more at each GET
   * while it runs (0: it makes no progress); a pause or cancel asked for takes effect at the next GET,
   * as the workflow acts between two steps.
   */
  rebalance:
    | {
        id: string;
        change: { join: number[]; leave: number[] };
        status: 'running' | 'paused' | 'cancelling' | 'cancelled' | 'done';
        requested?: 'pause' | 'cancel';
        rateKeysPerSecond: number;
        moved: number;
        revision: number;
        startedAt: string;
        updatedAt: string;
        finishedAt?: string;
        cancelledFrom?: { ranges: number; moved: number };
      }
    | undefined;
  rebalanceRangesPerRead = 2;
  static readonly REBALANCE_RANGES = 6;
  /** What a namespace change answers as `takesEffectWithinSeconds` (API Gateway's default authorizer cache). */
  static readonly AUTHORIZER_CACHE_TTL_SECONDS = 60;
  /** Namespace settings by namespace, once read or set. */
  readonly namespaceSettings: Record<string, Record<string, unknown>> = {};
  static readonly REBALANCE_KEYS_PER_RANGE = 1_500;

  private rebalanceView(withRanges: boolean): Record<string, unknown> {
    const { moved, ...job } = this.rebalance!;
    const total = FakeRingstore.REBALANCE_RANGES;
    const ended = job.status === 'done' || job.status === 'cancelled';
    const moving = !ended && moved < total && job.status !== 'paused' ? 1 : 0;
    const progress = moved / total;
    return {
      ...job,
      ranges: {
        total,
        planned: ended ? 0 : total - moved - moving,
        moving,
        moved: job.status === 'done' ? 0 : moved,
        cleaned: job.status === 'done' ? total : 0,
      },
      keysCopied: moved * FakeRingstore.REBALANCE_KEYS_PER_RANGE,
      keysPerSecond: moved * 250,
      progress,
      ...(!ended && progress > 0 && progress < 1 ? { etaSeconds: (total - moved) * 6 } : {}),
      ...(withRanges
        ? {
            rangeDetail: Array.from({ length: total }, (_, i) => ({
              start: FAKE_RING.ranges[i]!.start,
              end: FAKE_RING.ranges[i]!.end,
              from: FAKE_RING.ranges[i]!.replicas,
              to: [4, ...FAKE_RING.ranges[i]!.replicas.slice(0, 2)],
              stage: i < moved ? 'moved' : i === moved && moving === 1 ? 'copying' : 'planned',
              keysCopied: i < moved ? FakeRingstore.REBALANCE_KEYS_PER_RANGE : 0,
            })),
          }
        : {}),
    };
  }

  /** One step of the fake's workflow: what a GET finds. */
  private advanceRebalance(): void {
    const job = this.rebalance!;
    const now = new Date().toISOString();
    if (job.requested === 'pause') {
      delete job.requested;
      job.status = 'paused';
    } else if (job.requested === 'cancel') {
      delete job.requested;
      job.cancelledFrom = { ranges: FakeRingstore.REBALANCE_RANGES, moved: job.moved };
      job.status = 'cancelled';
      job.finishedAt = now;
    } else if (job.status === 'running') {
      job.moved = Math.min(FakeRingstore.REBALANCE_RANGES, job.moved + this.rebalanceRangesPerRead);
      if (job.moved === FakeRingstore.REBALANCE_RANGES) {
        job.status = 'done';
        job.finishedAt = now;
      }
    } else {
      return;
    }
    job.revision += 1;
    job.updatedAt = now;
  }

  private handleRebalance(
    req: RecordedRequest,
    res: ServerResponse,
    caller: ApiKeyRecord,
    id: string | undefined,
    action: string | undefined,
  ): void {
    if (caller.role !== 'admin') {
      sendError(res, 403, 'auth.forbidden', 'an admin key is required');
      return;
    }
    const job = this.rebalance;
    if (id === undefined && req.method === 'GET') {
      if (job === undefined) {
        sendError(res, 404, 'rebalance.notFound', 'no rebalance has run here: start one with POST /v1/admin/rebalance');
        return;
      }
      this.advanceRebalance();
      sendJson(res, 200, this.rebalanceView(req.query.get('ranges') === 'true'));
      return;
    }
    if (id === undefined && req.method === 'POST') {
      const body = JSON.parse(req.body.toString('utf8')) as { add?: number; remove?: number[]; rateKeysPerSecond?: number };
      if (body.add === undefined && body.remove === undefined) {
        sendError(res, 400, 'request.invalid', 'body: nothing to do: give add (how many shards to add) or remove (shard ids), or both');
        return;
      }
      const unknown = (body.remove ?? []).find((shard) => shard < 0 || shard > 3);
      if (unknown !== undefined) {
        sendError(res, 409, 'rebalance.refused', `shard ${unknown} is not on the ring`);
        return;
      }
      if (job !== undefined && job.status !== 'done' && job.status !== 'cancelled') {
        sendError(res, 409, 'rebalance.conflict', `rebalance ${job.id} is ${job.status}: one runs at a time`);
        return;
      }
      const now = new Date().toISOString();
      this.rebalance = {
        id: `rebalance-${Date.now()}-0a1b2c3d`,
        change: { join: Array.from({ length: body.add ?? 0 }, (_, i) => 4 + i), leave: body.remove ?? [] },
        status: 'running',
        rateKeysPerSecond: body.rateKeysPerSecond ?? 2_000,
        moved: 0,
        revision: (job?.revision ?? 0) + 1,
        startedAt: now,
        updatedAt: now,
      };
      sendJson(res, 202, this.rebalanceView(false));
      return;
    }
    if (job === undefined || job.id !== id) {
      sendError(res, 404, 'rebalance.notFound', `no rebalance ${String(id)}`);
      return;
    }
    const refuse = (why: string) => sendError(res, 409, 'rebalance.conflict', `rebalance ${job.id} is ${job.status}: ${why}`);
    if (action === 'rate' && req.method === 'PUT') {
      if (job.status === 'done' || job.status === 'cancelled') {
        refuse('it has ended');
        return;
      }
      job.rateKeysPerSecond = (JSON.parse(req.body.toString('utf8')) as { rateKeysPerSecond: number }).rateKeysPerSecond;
    } else if (action === 'pause' && req.method === 'POST') {
      if (job.status !== 'running') {
        refuse('only a running rebalance pauses');
        return;
      }
      job.requested = 'pause';
    } else if (action === 'resume' && req.method === 'POST') {
      if (job.status !== 'paused') {
        refuse('only a paused rebalance resumes');
        return;
      }
      job.status = 'running';
    } else if (action === 'cancel' && req.method === 'POST') {
      if (job.status !== 'running' && job.status !== 'paused') {
        refuse('only a running or paused rebalance is cancelled');
        return;
      }
      job.status = 'running';
      job.requested = 'cancel';
    } else {
      sendError(res, 404, 'route.notFound', 'no such route');
      return;
    }
    job.revision += 1;
    job.updatedAt = new Date().toISOString();
    sendJson(res, action === 'rate' ? 200 : 202, this.rebalanceView(false));
  }

  /** The fake is a DR backup region: a promotion completes at once and reports one lost key. */
  promotion: { id: string; reason: string; startedAtMs: number } | undefined;

  /** A namespace's settings: GET reads them, PUT merges the fields given and says when requests see them. */
  private handleNamespace(req: RecordedRequest, res: ServerResponse, caller: ApiKeyRecord, namespace: string): void {
    if (caller.role !== 'admin') {
      sendError(res, 403, 'auth.forbidden', 'an admin key is required');
      return;
    }
    const settings = (this.namespaceSettings[namespace] ??= {
      namespace,
      readConsistency: 'eventual',
      writeConsistency: 'eventual',
      drMode: 'key-sync',
      rate: { requestsPerSecond: 100, burst: 200 },
    });
    if (req.method === 'GET') {
      sendJson(res, 200, settings);
      return;
    }
    if (req.method === 'PUT') {
      Object.assign(settings, JSON.parse(req.body.toString('utf8') || '{}') as Record<string, unknown>);
      sendJson(res, 200, { ...settings, takesEffectWithinSeconds: FakeRingstore.AUTHORIZER_CACHE_TTL_SECONDS });
      return;
    }
    sendError(res, 405, 'request.methodNotAllowed', `${req.method} is not allowed here`);
  }

  private handleDr(req: RecordedRequest, res: ServerResponse, caller: ApiKeyRecord, route: string | undefined): void {
    if (caller.role !== 'admin') {
      sendError(res, 403, 'auth.forbidden', 'an admin key is required');
      return;
    }
    if (route === 'status' && req.method === 'GET') {
      sendJson(res, 200, {
        role: 'backup',
        state: this.promotion ? 'promoted' : 'backup',
        epoch: this.promotion ? 1 : 0,
        pending: this.promotion ? { count: 0, lost: 1 } : { count: 2, lost: 0, oldestAgeMs: 120, oldestKey: 'users/42' },
        queue: { waiting: 0, inFlight: 0 },
      });
      return;
    }
    if (route === 'promote' && req.method === 'POST') {
      const body = JSON.parse(req.body.toString('utf8') || '{}') as { reason?: string };
      const started = !this.promotion;
      this.promotion ??= { id: 'promotion-epoch-0', reason: body.reason ?? 'requested by an admin', startedAtMs: Date.UTC(2026, 10, 25) };
      sendJson(res, 202, { id: this.promotion.id, started });
      return;
    }
    if (route === 'sync' && req.method === 'POST') {
      sendJson(res, 202, { status: 'running', nextRange: 0, ranges: 64, keys: 0, startedAtMs: 0, updatedAtMs: 0 });
      return;
    }
    if (route === 'report' && req.method === 'GET') {
      if (!this.promotion) {
        sendError(res, 404, 'dr.noPromotion', 'this region has not been promoted: there is no promotion report');
        return;
      }
      const { startedAtMs } = this.promotion;
      sendJson(res, 200, {
        ...this.promotion,
        status: 'completed',
        updatedAtMs: startedAtMs + 7_000,
        fencedAtMs: startedAtMs + 10,
        drain: { waitedMs: 40, remaining: 0 },
        values: { waitedMs: 500, pending: 1 },
        lost: { count: 1, keys: [{ namespace: 'test', key: 'users/42', version: 7, writtenAtMs: startedAtMs - 1_000 }] },
        promotedAtMs: startedAtMs + 7_000,
      });
      return;
    }
    if (route === 'offer' || route === 'lost' || route === 'reconcile') {
      this.handleReconciliation(req, res, route);
      return;
    }
    sendError(res, 404, 'route.notFound', 'no such route');
  }

  /** Reconciliation of the one lost key: whether the old primary offered its value back, and what was done with it. */
  reconciliation: { offered: boolean; settled?: 'restore' | 'discard' } = { offered: false };

  private handleReconciliation(req: RecordedRequest, res: ServerResponse, route: 'offer' | 'lost' | 'reconcile'): void {
    if (!this.promotion) {
      if (route === 'offer') sendError(res, 404, 'dr.noPromotion', 'the backup region has not been promoted: there is nothing to offer');
      else if (route === 'lost') sendJson(res, 200, { entries: [] });
      else sendError(res, 409, 'dr.notPromoted', 'this region has not been promoted');
      return;
    }
    const lost = { namespace: 'test', key: 'users/42', version: 7 };
    if (route === 'offer' && req.method === 'POST') {
      const { from = 0 } = JSON.parse(req.body.toString('utf8') || '{}') as { from?: number };
      this.reconciliation.offered = true;
      const counts = { offered: from === 0 ? 1 : 0, notHeld: 0, noValueNeeded: 0, failed: 0, failures: [] };
      sendJson(res, 200, { promotionId: this.promotion.id, lost: 1, listed: 1, from, ...counts });
      return;
    }
    if (route === 'lost' && req.method === 'GET') {
      const entries = this.reconciliation.settled
        ? []
        : [
            {
              ...lost,
              writtenAt: new Date(this.promotion.startedAtMs - 1_000).toISOString(),
              writtenAtMs: this.promotion.startedAtMs - 1_000,
              size: 5,
              contentType: 'text/plain',
              deleted: false,
              offer: { needed: true, present: this.reconciliation.offered, ...(this.reconciliation.offered ? { size: 5 } : {}) },
              currentVersion: 6,
              superseded: false,
            },
          ];
      sendJson(res, 200, { entries });
      return;
    }
    if (route === 'reconcile' && req.method === 'POST') {
      const body = JSON.parse(req.body.toString('utf8') || '{}') as Partial<typeof lost> & { action?: string; expectVersion?: number };
      if (body.action !== 'restore' && body.action !== 'discard') {
        sendError(res, 400, 'request.invalid', 'action: must be restore or discard');
        return;
      }
      if (this.reconciliation.settled || body.namespace !== lost.namespace || body.key !== lost.key || body.version !== lost.version) {
        sendError(res, 404, 'dr.notLost', `${body.namespace}/${body.key} has no lost write at version ${body.version}`);
        return;
      }
      if (body.action === 'restore' && !this.reconciliation.offered) {
        sendError(res, 409, 'dr.noOffer', `no value of ${lost.key} at version 7 was offered back`);
        return;
      }
      if (body.expectVersion !== undefined && body.expectVersion !== 6) {
        sendError(res, 412, 'kv.preconditionFailed', `${lost.key} holds version 6 here, not ${body.expectVersion}`);
        return;
      }
      this.reconciliation.settled = body.action;
      sendJson(res, 200, { ...lost, action: body.action, currentVersion: body.action === 'restore' ? 7 : 6 });
      return;
    }
    sendError(res, 404, 'route.notFound', 'no such route');
  }

  private handleFailovers(req: RecordedRequest, res: ServerResponse, caller: ApiKeyRecord): void {
    if (caller.role !== 'admin') {
      sendError(res, 403, 'auth.forbidden', 'an admin key is required');
      return;
    }
    if (req.method === 'GET') {
      sendJson(res, 200, {
        failovers: [...this.failovers].reverse().map(({ action, ...failover }) => ({
          ...failover,
          action,
          updatedAt: failover.requestedAt,
          status: 'completed',
          report: {
            ranges: [{ end: 536870911, owner: action === 'moveBack' ? failover.shard : (failover.shard + 1) % 4, copied: 2 }],
            ...(action === 'failOver'
              ? { rejoin: { divergent: 1, divergentCopies: [{ namespace: 'test', key: 'lost', version: 4, ownerVersion: 3 }] } }
              : {}),
          },
        })),
      });
      return;
    }
    if (req.method === 'POST') {
      const body = JSON.parse(req.body.toString('utf8')) as { shard?: number; reason?: string; action?: 'failOver' | 'moveBack' };
      if (typeof body.shard !== 'number' || body.shard < 0 || body.shard > 3) {
        sendError(res, 400, 'request.invalid', `shard ${String(body.shard)} is not on the ring (epoch 3)`);
        return;
      }
      const action = body.action ?? 'failOver';
      const id = `shard-${body.shard}-epoch-3${action === 'moveBack' ? '-moveback' : ''}`;
      const started = !this.failovers.some((failover) => failover.id === id);
      if (started) {
        this.failovers.push({
          id,
          shard: body.shard,
          reason: body.reason ?? 'requested by an admin',
          action,
          requestedAt: new Date().toISOString(),
        });
      }
      sendJson(res, 202, { id, shard: body.shard, started });
      return;
    }
    sendError(res, 404, 'route.notFound', 'no such route');
  }

  private handleAdmin(req: RecordedRequest, res: ServerResponse, caller: ApiKeyRecord, keyId: string | undefined): void {
    if (caller.role !== 'admin') {
      sendError(res, 403, 'auth.forbidden', 'an admin key is required');
      return;
    }
    if (keyId === undefined && req.method === 'GET') {
      sendJson(res, 200, { keys: this.apiKeys.map(({ apiKey: _secret, ...rest }) => rest) });
      return;
    }
    if (keyId === undefined && req.method === 'POST') {
      const body = JSON.parse(req.body.toString('utf8')) as { namespace?: string; role?: 'user' | 'admin'; description?: string };
      if (typeof body.namespace !== 'string') {
        sendError(res, 400, 'admin.invalidNamespace', 'namespace is required');
        return;
      }
      const record: ApiKeyRecord = {
        // A key id as the server makes them: 12 hex digits (the SDK refuses any other).
        keyId: this.apiKeys.length.toString(16).padStart(12, '0'),
        apiKey: `secret-${randomUUID()}`,
        namespace: body.namespace,
        role: body.role ?? 'user',
        createdAt: new Date().toISOString(),
        ...(body.description === undefined ? {} : { description: body.description }),
      };
      this.apiKeys.push(record);
      const { description: _d, revokedAt: _r, ...shown } = record;
      sendJson(res, 201, shown);
      return;
    }
    if (keyId !== undefined && req.method === 'DELETE') {
      const record = this.apiKeys.find((k) => k.keyId === decodeURIComponent(keyId));
      if (record === undefined) {
        sendError(res, 404, 'admin.keyNotFound', 'no such key');
        return;
      }
      record.revokedAt = new Date().toISOString();
      sendJson(res, 200, { keyId: record.keyId, revokedAt: record.revokedAt });
      return;
    }
    sendError(res, 404, 'route.notFound', 'no such route');
  }
}
