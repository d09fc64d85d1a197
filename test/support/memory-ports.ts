// In-memory test doubles of the ports, for unit tests of the core (no I/O).
import { PreconditionFailedError } from '../../lambdas/core/errors';
import { isLive, type KeySummary, type StoredItem } from '../../lambdas/core/item';
import { compareKeys } from '../../lambdas/core/kv';
import { Ring, initialRingState } from '../../lambdas/core/ring';
import type { BlobStore, Clock, IdSource, ItemWrite, ListPage, ListQuery, RingSource, ShardStore, WriteResult } from '../../lambdas/ports';
import { createHash } from 'node:crypto';

export class ManualClock implements Clock {
  constructor(public now = 1_700_000_000_000) {}
  nowMs(): number {
    return this.now;
  }
  advanceSeconds(seconds: number): void {
    this.now += seconds * 1000;
  }
}

export class CountingIds implements IdSource {
  private next = 0;
  newId(): string {
    this.next += 1;
    return `00000000-0000-4000-8000-${String(this.next).padStart(12, '0')}`;
  }
  newSecret(): string {
    return 's'.repeat(40) + String(this.next);
  }
}

export class MemoryShardStore implements ShardStore {
  readonly tables = new Map<string, Map<string, StoredItem>>();
  /** Items a listing examines per call before it stops early (emulates DynamoDB's page bound). */
  constructor(private readonly examineMax = Number.POSITIVE_INFINITY) {}

  private table(name: string): Map<string, StoredItem> {
    let table = this.tables.get(name);
    if (!table) this.tables.set(name, (table = new Map()));
    return table;
  }

  async get(table: string, namespace: string, key: string): Promise<StoredItem | undefined> {
    return this.table(table).get(`${namespace}#${key}`);
  }

  async write(table: string, write: ItemWrite): Promise<WriteResult> {
    const items = this.table(table);
    const id = `${write.namespace}#${write.key}`;
    const previous = items.get(id);
    const live = isLive(previous, write.nowSeconds);
    const holds =
      write.precondition.kind === 'none' ||
      (write.precondition.kind === 'live' && live) ||
      (write.precondition.kind === 'absent' && !live) ||
      (write.precondition.kind === 'versionIs' && live && previous!.version === write.precondition.version);
    if (!holds) throw new PreconditionFailedError('condition failed', previous);
    const version = (previous?.version ?? 0) + 1;
    const base = { namespace: write.namespace, key: write.key, token: write.token, version };
    items.set(
      id,
      write.content
        ? { ...base, ...write.content, tombstone: false }
        : { ...base, contentType: '', size: 0, sha256: '', tombstone: true },
    );
    return previous ? { version, previous } : { version };
  }

  async list(table: string, query: ListQuery): Promise<ListPage> {
    const candidates = [...this.table(table).values()]
      .filter((item) => item.namespace === query.namespace && item.key.startsWith(query.prefix))
      .filter((item) => query.afterKey === undefined || compareKeys(item.key, query.afterKey) > 0)
      .sort((a, b) => compareKeys(a.key, b.key));
    const items: KeySummary[] = [];
    let examined = 0;
    for (const item of candidates) {
      if (items.length >= query.limit) return { items, more: true, resumeAfter: items[items.length - 1]!.key };
      if (examined >= this.examineMax) return { items, more: true, resumeAfter: candidates[examined - 1]!.key };
      examined += 1;
      if (!isLive(item, query.nowSeconds)) continue;
      items.push({ key: item.key, version: item.version, size: item.size, contentType: item.contentType });
    }
    return { items, more: false };
  }
}

export class MemoryBlobStore implements BlobStore {
  readonly objects = new Map<string, Uint8Array>();
  async put(objectKey: string, bytes: Uint8Array): Promise<void> {
    this.objects.set(objectKey, bytes);
  }
  async get(objectKey: string): Promise<Uint8Array> {
    const bytes = this.objects.get(objectKey);
    if (!bytes) throw new Error(`no object ${objectKey}`);
    return bytes;
  }
  async size(objectKey: string): Promise<number | undefined> {
    return this.objects.get(objectKey)?.byteLength;
  }
  async sha256(objectKey: string): Promise<string> {
    return createHash('sha256').update(await this.get(objectKey)).digest('hex');
  }
  async copy(fromKey: string, toKey: string): Promise<void> {
    this.objects.set(toKey, await this.get(fromKey));
  }
  async delete(objectKey: string): Promise<void> {
    this.objects.delete(objectKey);
  }
  async presignPut(objectKey: string, options: { contentType: string }) {
    return { url: `memory://put/${objectKey}`, headers: { 'content-type': options.contentType } };
  }
  async presignGet(objectKey: string): Promise<string> {
    return `memory://get/${objectKey}`;
  }
}

export function staticRing(shardCount = 4): RingSource {
  const ring = new Ring(initialRingState({ shardCount, replicationFactor: 3, vnodesPerShard: 16, tableName: (id) => `shard-${id}` }));
  return { current: async () => ring };
}
