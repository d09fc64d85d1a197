// The fake Ringstore's change feed: every write of its store (put, delete, a transaction's writes, an increment)
// appended as the server's feed would record it, and GET /v1/watch over it with the real route's parameters,
// long poll, cursors and refusals (400 watch.cursorInvalid, 403 watch.cursorForeign, 410 watch.cursorExpired).

import type { ServerResponse } from 'node:http';
import { type RecordedRequest, sendError, sendJson, type StoredValue } from './fake-server';

/** One change as the fake's feed keeps it. */
export interface FakeFeedEntry {
  namespace: string;
  key: string;
  version: number;
  operation: 'put' | 'delete' | 'expire';
  contentType: string;
  size: number;
  value?: Buffer;
  txid?: string;
  modifiedAt: string;
  expiresAt?: string;
}

/** A change carries its value up to this many bytes, as the server's (watchDefaults.inlineValueBytesMax). */
const INLINE_VALUE_BYTES_MAX = 512;
const WAIT_SECONDS_MAX = 20;
const LIMIT_MAX = 1000;
const RETENTION_SECONDS = 24 * 3600;

const cursorForm = /^fake1\.([A-Za-z0-9_-]*)\.(\d+)$/;

/** A store id `<namespace>#<key>` split in two. */
function split(id: string): { namespace: string; key: string } {
  const hash = id.indexOf('#');
  return { namespace: id.slice(0, hash), key: id.slice(hash + 1) };
}

/** The fake's feed: entries in order, a cursor being the index of the next entry in its namespace's view. */
export class FakeFeed {
  readonly entries: FakeFeedEntry[] = [];
  /** Entries before this index have aged out: a cursor before it is answered 410 watch.cursorExpired. */
  oldest = 0;
  /** Set by a transaction while it writes: the changes it makes carry it. */
  txid: string | undefined;
  private readonly waiters = new Set<() => void>();

  cursorAt(namespace: string, index: number): string {
    return `fake1.${Buffer.from(namespace).toString('base64url')}.${index}`;
  }

  append(entry: Omit<FakeFeedEntry, 'modifiedAt' | 'txid'>): void {
    this.entries.push({ ...entry, modifiedAt: new Date().toISOString(), ...(this.txid === undefined ? {} : { txid: this.txid }) });
    this.wake();
  }

  /** Ends every long poll at once (the fake is closing). */
  close(): void {
    this.wake();
  }

  private wake(): void {
    for (const waiter of [...this.waiters]) waiter();
  }

  /** Resolves on the next append, or after `ms`, or when the client hangs up. */
  private waitForChange(ms: number, res: ServerResponse): Promise<void> {
    return new Promise((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        this.waiters.delete(done);
        res.off('close', done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.waiters.add(done);
      res.on('close', done);
    });
  }

  /** GET /v1/watch for `namespace`. */
  async handle(req: RecordedRequest, res: ServerResponse, namespace: string): Promise<void> {
    const query = this.parseQuery(req, res);
    if (query === undefined) return;
    const start = query.cursor === undefined ? this.entries.length : this.indexOf(query.cursor, namespace, res);
    if (start === undefined) return;
    const deadline = Date.now() + query.waitSeconds * 1000;
    for (;;) {
      const matching = this.entries
        .map((entry, index) => ({ entry, index }))
        .filter(({ entry, index }) => index >= start && entry.namespace === namespace && entry.key.startsWith(query.prefix));
      const left = deadline - Date.now();
      if (matching.length > 0 || left <= 0 || res.destroyed) {
        const page = matching.slice(0, query.limit);
        const full = page.length === query.limit;
        const end = full ? page[page.length - 1]!.index + 1 : this.entries.length;
        sendJson(res, 200, {
          changes: page.map(({ entry, index }) => this.changeOf(entry, index + 1)),
          cursor: this.cursorAt(namespace, end),
        });
        return;
      }
      await this.waitForChange(left, res);
    }
  }

  private changeOf(entry: FakeFeedEntry, next: number): Record<string, unknown> {
    const inline = entry.operation === 'put' && entry.value !== undefined && entry.size <= INLINE_VALUE_BYTES_MAX;
    return {
      key: entry.key,
      version: entry.version,
      operation: entry.operation,
      contentType: entry.contentType,
      size: entry.size,
      ...(inline ? { value: entry.value!.toString('base64') } : entry.operation === 'put' ? { valueOmitted: true } : {}),
      ...(entry.txid === undefined ? {} : { txid: entry.txid }),
      modifiedAt: entry.modifiedAt,
      ...(entry.expiresAt === undefined ? {} : { expiresAt: entry.expiresAt }),
      cursor: this.cursorAt(entry.namespace, next),
    };
  }

  private parseQuery(
    req: RecordedRequest,
    res: ServerResponse,
  ): { prefix: string; cursor?: string; waitSeconds: number; limit: number } | undefined {
    const integer = (name: string, fallback: number, min: number, max: number): number | undefined => {
      const raw = req.query.get(name);
      if (raw === null) return fallback;
      const value = Number(raw);
      if (/^\d{1,15}$/.test(raw) && value >= min && value <= max) return value;
      sendJson(res, 400, {
        error: { code: 'request.invalid', message: `query.${name}: must be an integer from ${min} to ${max}`, details: { field: name } },
      });
      return undefined;
    };
    const waitSeconds = integer('waitSeconds', 0, 0, WAIT_SECONDS_MAX);
    if (waitSeconds === undefined) return undefined;
    const limit = integer('limit', 100, 1, LIMIT_MAX);
    if (limit === undefined) return undefined;
    const cursor = req.query.get('cursor');
    return { prefix: req.query.get('prefix') ?? '', waitSeconds, limit, ...(cursor === null ? {} : { cursor }) };
  }

  /** The index a cursor names, once it is shown to be this namespace's and within the retention. */
  private indexOf(cursor: string, namespace: string, res: ServerResponse): number | undefined {
    const match = cursorForm.exec(cursor);
    if (match === null) {
      sendJson(res, 400, {
        error: { code: 'watch.cursorInvalid', message: 'cursor is not a watch cursor Ringstore gave', details: { field: 'cursor' } },
      });
      return undefined;
    }
    if (Buffer.from(match[1]!, 'base64url').toString('utf8') !== namespace) {
      sendError(res, 403, 'watch.cursorForeign', "cursor belongs to another namespace's feed");
      return undefined;
    }
    const index = Number(match[2]);
    if (index < this.oldest) {
      sendJson(res, 410, {
        error: {
          code: 'watch.cursorExpired',
          message: `cursor is older than the feed's retention (${RETENTION_SECONDS} s): changes after it may be gone`,
          details: { field: 'cursor', oldestCursor: this.cursorAt(namespace, this.oldest), retentionSeconds: RETENTION_SECONDS },
        },
      });
      return undefined;
    }
    return index;
  }
}

/**
 * The fake's key-value store: a Map whose writes are appended to the feed, as the server's stream consumer appends
 * every owner write. A delete's change carries the tombstone's version (the deleted one's plus one).
 */
export class FeedingStore extends Map<string, StoredValue> {
  constructor(private readonly feed: FakeFeed) {
    super();
  }

  override set(id: string, stored: StoredValue): this {
    super.set(id, stored);
    this.feed.append({
      ...split(id),
      version: stored.version,
      operation: 'put',
      contentType: stored.contentType,
      size: stored.value.byteLength,
      value: stored.value,
      ...(stored.expiresAt === undefined ? {} : { expiresAt: stored.expiresAt }),
    });
    return this;
  }

  override delete(id: string): boolean {
    const deleted = this.get(id);
    if (!super.delete(id) || deleted === undefined) return false;
    this.feed.append({ ...split(id), version: deleted.version + 1, operation: 'delete', contentType: deleted.contentType, size: 0 });
    return true;
  }
}
