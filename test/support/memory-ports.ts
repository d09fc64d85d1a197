// In-memory test doubles of the ports, for unit tests of the core (no I/O).
import { preconditionHolds } from '../../lambdas/core/conditions';
import { RingstoreError } from '../../lambdas/core/errors';
import { CrashInjectedError } from '../../lambdas/core/faults';
import { isLive, tombstoneRetentionSeconds } from '../../lambdas/core/item';
import { compareKeys } from '../../lambdas/core/listing';
import { isWriteNotice, noticeSortKeyOf } from '../../lambdas/core/dr-messages';
import { Ring, initialRingState, listingBucketOf } from '../../lambdas/core/ring';
import { KvService, type KvDeps } from '../../lambdas/core/kv';
import { ReplicationService } from '../../lambdas/core/replication';
import { TransactionService, type TxnServiceLimits } from '../../lambdas/core/transactions';
import type {
  AtomicWrite,
  AtomicWriteResult,
  BlobStore,
  Clock,
  Hint,
  HintStore,
  IdSource,
  IntentPlacement,
  IntentPlacementOutcome,
  ItemWrite,
  ItemWriteOutcome,
  KeyRef,
  ListPage,
  ListQuery,
  ShardHealth,
  ShardHealthStore,
  ShardStore,
  RangeCursor,
  RangePage,
  RangeStore,
  RebalanceJob,
  RebalanceJobStore,
  TokenSpan,
  TxnCommittedWrite,
  TxnRecord,
  TxnRecordStore,
  TxnStatus,
  VersionEntry,
  BrokenMode,
  CrashPoint,
  FaultInjector,
  Intent,
  HeldVersion,
  KeySummary,
  StoredItem,
  FailoverLog,
  FailoverRecord,
  DrKeyChannel,
  DrKeyMessage,
  PendingEntry,
  PendingStore,
  DrQueueMessage,
  DrWriteNotice,
  TransactionWrite,
  DrState,
  DrStateStore,
  PromotionLog,
  PromotionReport,
  ValueCache,
} from '../../lambdas/ports';
import type { RingSource } from '../../lambdas/core/ring-source';
import { standingsByRing, type OwnershipWeighing, type TableWrite } from '../../lambdas/core/stream-ownership';
import { createHash } from 'node:crypto';
import { limits } from '../../schemas/topology';

export class ManualClock implements Clock {
  constructor(public now = 1_700_000_000_000) {}
  nowMs(): number {
    return this.now;
  }
  monotonicMs(): number {
    return this.now;
  }
  advanceSeconds(seconds: number): void {
    this.now += seconds * 1000;
  }
}

export class CountingIds implements IdSource {
  /** `first`: where the count starts, so that two sources on one world never give the same id. */
  constructor(private next = 0) {}
  newId(): string {
    this.next += 1;
    return `00000000-0000-4000-8000-${String(this.next).padStart(12, '0')}`;
  }
  newSecret(): string {
    return 's'.repeat(40) + String(this.next);
  }
}

export class MemoryShardStore implements ShardStore, RangeStore {
  readonly tables = new Map<string, Map<string, StoredItem>>();
  /** `table|ns#key` of the copies in the listing index: owners' live items, as the DynamoDB store keeps them. */
  private readonly listed = new Set<string>();
  /** Tables that answer every call with `shard.unavailable` (a shard outage). */
  readonly down = new Set<string>();
  /** `<table>|<namespace>#<key>@<version>` of each copy stored as an owner write (applyReplica's ownerWrite): the feed's to see. */
  readonly ownerWrittenCopies = new Set<string>();
  /** `table|ns#key` -> the version of the last copy written there (DynamoDB's `cpv`): owner writes leave it behind. */
  private readonly copiedAt = new Map<string, number>();
  /** Items a listing examines per call before it stops early (emulates DynamoDB's page bound). */
  constructor(private readonly examineMax = Number.POSITIVE_INFINITY) {}

  table(name: string): Map<string, StoredItem> {
    this.reachable(name);
    let table = this.tables.get(name);
    if (!table) this.tables.set(name, (table = new Map<string, StoredItem>()));
    return table;
  }

  /** What a table holds, read past any outage (for assertions). */
  peek(name: string, namespace: string, key: string): StoredItem | undefined {
    return this.tables.get(name)?.get(`${namespace}#${key}`);
  }

  private reachable(name: string): void {
    if (this.down.has(name)) throw new RingstoreError('shard.unavailable', `${name} is down`, { retryable: true });
  }

  async get(table: string, namespace: string, key: string): Promise<StoredItem | undefined> {
    return this.table(table).get(`${namespace}#${key}`);
  }

  async heldVersion(table: string, namespace: string, key: string): Promise<HeldVersion | undefined> {
    const item = this.table(table).get(`${namespace}#${key}`);
    if (!item) return undefined;
    const copiedVersion = this.copiedAt.get(`${table}|${namespace}#${key}`);
    return {
      version: item.version,
      ...(copiedVersion === undefined ? {} : { copiedVersion }),
      ...(item.modifiedAtMs === undefined ? {} : { modifiedAtMs: item.modifiedAtMs }),
    };
  }

  /** Records how a table's item was last written: a copy (at its version) or gone. */
  private setCopied(table: string, id: string, version: number | undefined): void {
    if (version === undefined) this.copiedAt.delete(`${table}|${id}`);
    else this.copiedAt.set(`${table}|${id}`, version);
  }

  /** Requests of intentsOf, so a test can see the sweeper batch. */
  intentBatches = 0;

  async intentsOf(keys: readonly KeyRef[]): Promise<Array<Pick<Intent, 'txid' | 'kind'> | undefined>> {
    this.intentBatches += 1;
    return keys.map(({ table, namespace, key }) => {
      const intent = this.table(table).get(`${namespace}#${key}`)?.intent;
      return intent ? { txid: intent.txid, kind: intent.kind } : undefined;
    });
  }

  private setListed(table: string, id: string, listed: boolean): void {
    if (listed) this.listed.add(`${table}|${id}`);
    else this.listed.delete(`${table}|${id}`);
  }

  async applyReplica(
    table: string,
    item: StoredItem,
    options: { nowSeconds: number; listed: boolean; ownerWrite?: boolean },
  ): Promise<boolean> {
    const items = this.table(table);
    const id = `${item.namespace}#${item.key}`;
    const current = items.get(id);
    const expired = current?.expiresAtSeconds !== undefined && current.expiresAtSeconds <= options.nowSeconds;
    if (current && current.version >= item.version && !expired) return false;
    // A copy, as the DynamoDB adapter writes it: never the owner's intent, nor its transaction writer unless the
    // copy is stored as an owner write.
    const { intent: _intent, writtenBy, writeId, ...copy } = item;
    const ownerOnly = { ...(writtenBy ? { writtenBy } : {}), ...(writeId === undefined ? {} : { writeId }) };
    items.set(id, options.ownerWrite ? { ...copy, ...ownerOnly } : copy);
    this.setListed(table, id, options.listed && !item.tombstone);
    // An owner write starts the item afresh, as the DynamoDB store's PutItem without `cpv` does.
    this.setCopied(table, id, options.ownerWrite ? undefined : item.version);
    if (options.ownerWrite) this.ownerWrittenCopies.add(`${table}|${id}@${item.version}`);
    return true;
  }

  async listAsOwner(table: string, entries: readonly VersionEntry[]): Promise<number> {
    let listed = 0;
    for (const { namespace, key } of entries) {
      const id = `${namespace}#${key}`;
      const item = this.table(table).get(id);
      if (!item || item.tombstone || this.listed.has(`${table}|${id}`)) continue;
      this.setListed(table, id, true);
      listed += 1;
    }
    return listed;
  }

  async itemsInRange(table: string, range: TokenSpan, page: { after?: RangeCursor; limit: number }): Promise<RangePage> {
    const inRange = (token: number) =>
      range.start < range.end ? token > range.start && token <= range.end : token > range.start || token <= range.end;
    // Token order from the range's start, as the token index gives it (ties by item key).
    const order = (token: number) => (token - range.start - 1 + 2 ** 32) % 2 ** 32;
    const after = page.after;
    const sorted = [...this.table(table).entries()]
      .filter(([, item]) => inRange(item.token))
      .sort(([idA, a], [idB, b]) => order(a.token) - order(b.token) || (idA < idB ? -1 : idA > idB ? 1 : 0))
      .filter(([id, item]) => !after || order(item.token) > order(after.token) || (item.token === after.token && id > after.pk));
    const items = sorted.slice(0, page.limit).map(([, item]) => structuredClone(item));
    if (sorted.length <= page.limit) return { items };
    const last = items[items.length - 1]!;
    return { items, next: { bucket: last.token >>> 24, token: last.token, pk: `${last.namespace}#${last.key}` } };
  }

  async copyItems(table: string, items: readonly StoredItem[], options: { nowSeconds: number; listed: boolean }): Promise<number> {
    let written = 0;
    for (const item of items) {
      const id = `${item.namespace}#${item.key}`;
      const current = this.table(table).get(id);
      const relist = options.listed && current?.version === item.version && !current.tombstone && !this.listed.has(`${table}|${id}`);
      if (relist) {
        this.setListed(table, id, true);
        this.setCopied(table, id, item.version);
        written += 1;
      } else if (await this.applyReplica(table, item, options)) written += 1;
    }
    return written;
  }

  async backfillItems(table: string, items: readonly StoredItem[], options: { listed: boolean }): Promise<number> {
    for (const item of items) {
      const id = `${item.namespace}#${item.key}`;
      this.table(table).set(id, structuredClone(item));
      this.setListed(table, id, options.listed && !item.tombstone);
      this.setCopied(table, id, item.version);
    }
    return items.length;
  }

  async removeCopies(table: string, keys: ReadonlyArray<{ namespace: string; key: string }>): Promise<void> {
    for (const { namespace, key } of keys) {
      this.table(table).delete(`${namespace}#${key}`);
      this.setListed(table, `${namespace}#${key}`, false);
      this.setCopied(table, `${namespace}#${key}`, undefined);
    }
  }

  async versionsInRange(table: string, range: { start: number; end: number }): Promise<VersionEntry[]> {
    const inRange = (token: number) =>
      range.start < range.end ? token > range.start && token <= range.end : token > range.start || token <= range.end;
    return [...this.table(table).values()]
      .filter((item) => inRange(item.token))
      .sort((a, b) => a.token - b.token)
      .map(({ namespace, key, token, version, tombstone, sha256 }) => ({ namespace, key, token, version, tombstone, sha256 }));
  }

  async resetCopy(
    table: string,
    ref: { namespace: string; key: string; expectVersion: number },
    item: StoredItem | undefined,
  ): Promise<boolean> {
    const id = `${ref.namespace}#${ref.key}`;
    const items = this.table(table);
    if (items.get(id)?.version !== ref.expectVersion) return false;
    if (item) {
      const { intent: _none, ...copy } = item;
      items.set(id, copy);
    } else items.delete(id);
    this.setListed(table, id, false);
    this.setCopied(table, id, item?.version);
    return true;
  }

  async placeIntent(table: string, input: IntentPlacement): Promise<IntentPlacementOutcome> {
    const items = this.table(table);
    const id = `${input.namespace}#${input.key}`;
    const previous = items.get(id);
    const lock = previous?.intent;
    if (previous && lock && lock.txid !== input.intent.txid) return { outcome: 'locked', current: { ...previous, intent: lock } };
    const live = isLive(previous, input.nowSeconds);
    const holds =
      input.expectVersion === 0
        ? !live
        : input.expectVersion !== undefined
          ? live && previous.version === input.expectVersion
          : !input.mustBeLive || live;
    if (!holds) return { outcome: 'preconditionFailed', current: previous };
    const base = previous ?? {
      namespace: input.namespace,
      key: input.key,
      token: input.token,
      version: 0,
      contentType: '',
      size: 0,
      sha256: '',
      tombstone: true,
    };
    items.set(id, { ...base, intent: input.intent });
    return { outcome: 'placed', previous };
  }

  async applyIntent(
    table: string,
    input: { namespace: string; key: string; txid: string; kind: 'put' | 'delete'; nowSeconds: number; modifiedAtMs: number },
  ): Promise<StoredItem | undefined> {
    const items = this.table(table);
    const id = `${input.namespace}#${input.key}`;
    const current = items.get(id);
    if (current?.intent?.txid !== input.txid) return undefined;
    const { intent, value: _value, blob: _blob, expiresAtSeconds: _ttl, ...rest } = current;
    const next: StoredItem =
      input.kind === 'put'
        ? {
            ...rest,
            version: current.version + 1,
            modifiedAtMs: input.modifiedAtMs,
            tombstone: false,
            contentType: intent.contentType,
            size: intent.size,
            sha256: intent.sha256,
            value: intent.value ?? new Uint8Array(0),
          }
        : {
            ...rest,
            version: current.version + 1,
            modifiedAtMs: input.modifiedAtMs,
            tombstone: true,
            contentType: '',
            size: 0,
            sha256: '',
            expiresAtSeconds: input.nowSeconds + tombstoneRetentionSeconds,
          };
    next.writtenBy = { txid: input.txid, writes: intent.writes ?? 1 };
    items.set(id, next);
    this.setListed(table, id, !next.tombstone);
    return next;
  }

  async clearIntent(table: string, input: { namespace: string; key: string; txid: string }): Promise<boolean> {
    const items = this.table(table);
    const id = `${input.namespace}#${input.key}`;
    const current = items.get(id);
    if (current?.intent?.txid !== input.txid) return false;
    const { intent: _intent, ...rest } = current;
    items.set(id, rest);
    return true;
  }

  async write(table: string, write: ItemWrite): Promise<ItemWriteOutcome> {
    const items = this.table(table);
    const id = `${write.namespace}#${write.key}`;
    const previous = items.get(id);
    const lock = previous?.intent;
    if (previous && lock) return { outcome: 'locked', current: { ...previous, intent: lock } };
    if (!preconditionHolds(write.precondition, previous, write.nowSeconds)) return { outcome: 'preconditionFailed', current: previous };
    const version = (previous?.version ?? 0) + 1;
    // A write id is left behind by a later write without one, as the DynamoDB owner write leaves `wid`.
    const writeId = write.writeId ?? previous?.writeId;
    const base = {
      namespace: write.namespace,
      key: write.key,
      token: write.token,
      version,
      modifiedAtMs: write.modifiedAtMs,
      ...(writeId === undefined ? {} : { writeId }),
    };
    this.setListed(table, id, write.content !== undefined);
    items.set(
      id,
      write.content
        ? { ...base, ...write.content, tombstone: false }
        : {
            ...base,
            contentType: '',
            size: 0,
            sha256: '',
            tombstone: true,
            expiresAtSeconds: write.nowSeconds + tombstoneRetentionSeconds,
          },
    );
    return previous ? { outcome: 'written', version, previous } : { outcome: 'written', version };
  }

  async getMany(table: string, namespace: string, keys: readonly string[]): Promise<Map<string, StoredItem>> {
    const items = this.table(table);
    return new Map(keys.flatMap((key) => (items.has(`${namespace}#${key}`) ? [[key, items.get(`${namespace}#${key}`)!] as const] : [])));
  }

  /** Requests of writeAtomically, so a test can see a transaction took the one-shard path. */
  atomicWrites = 0;

  async writeAtomically(table: string, input: AtomicWrite): Promise<AtomicWriteResult> {
    this.atomicWrites += 1;
    const items = this.table(table);
    for (const entry of input.entries) {
      const current = items.get(`${input.namespace}#${entry.key}`);
      const asRead = entry.seenVersion === undefined ? !current : current?.version === entry.seenVersion && !current.intent;
      if (!asRead) return { committed: false, key: entry.key };
    }
    for (const entry of input.entries) {
      if (!entry.write) continue;
      const id = `${input.namespace}#${entry.key}`;
      const base = {
        namespace: input.namespace,
        key: entry.key,
        token: entry.token,
        version: (entry.seenVersion ?? 0) + 1,
        modifiedAtMs: input.modifiedAtMs,
        ...(input.writtenBy ? { writtenBy: input.writtenBy } : {}),
      };
      const { write } = entry;
      items.set(
        id,
        write.kind === 'put'
          ? {
              ...base,
              contentType: write.contentType,
              size: write.size,
              sha256: write.sha256,
              tombstone: false,
              value: write.value ?? new Uint8Array(0),
            }
          : {
              ...base,
              contentType: '',
              size: 0,
              sha256: '',
              tombstone: true,
              expiresAtSeconds: input.nowSeconds + tombstoneRetentionSeconds,
            },
      );
      this.setListed(table, id, write.kind === 'put');
    }
    return { committed: true };
  }

  async list(table: string, query: ListQuery): Promise<ListPage> {
    const candidates = [...this.table(table).values()]
      .filter((item) => this.listed.has(`${table}|${item.namespace}#${item.key}`) && listingBucketOf(item.token) === query.bucket)
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
    return createHash('sha256')
      .update(await this.get(objectKey))
      .digest('hex');
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
  return fixedRing(new Ring(initialRingState({ shardCount, replicationFactor: 3, vnodesPerShard: 16, tableName: (id) => `shard-${id}` })));
}

/** A stream batch with its standings by one ring (no table read): the arguments of a stream consumer's core call. */
export function weighedByRing<Write extends TableWrite>(writes: readonly Write[], ring: Ring): [readonly Write[], OwnershipWeighing] {
  return [writes, standingsByRing(writes, ring)];
}

/** A ring that never changes: every lease holds. */
export function fixedRing(ring: Ring): RingSource {
  const lease = async () => ({ ring, readAtMs: 0 });
  return { current: async () => ring, lease, fresh: lease, stillOwner: async () => true, ownerUnchangedSince: async () => true };
}

export class MemoryRebalanceJobs implements RebalanceJobStore {
  job?: RebalanceJob;
  async current(): Promise<RebalanceJob | undefined> {
    return this.job && structuredClone(this.job);
  }
  async save(job: RebalanceJob): Promise<boolean> {
    if ((this.job?.revision ?? 0) !== job.revision - 1) return false;
    this.job = structuredClone(job);
    return true;
  }
}

export class MemoryFailoverLog implements FailoverLog {
  readonly records = new Map<string, FailoverRecord>();
  async save(record: FailoverRecord): Promise<void> {
    this.records.set(record.id, structuredClone(record));
  }
  async recent(limit: number): Promise<FailoverRecord[]> {
    return [...this.records.values()].sort((a, b) => b.requestedAtMs - a.requestedAtMs || (a.id < b.id ? 1 : -1)).slice(0, limit);
  }
}

export class MemoryHintStore implements HintStore {
  readonly hints = new Map<string, Hint>();
  failing = false;

  private id(hint: Hint): string {
    return `${hint.target}|${hint.item.namespace}#${hint.item.key}#${String(hint.item.version).padStart(15, '0')}`;
  }
  async add(hint: Hint): Promise<void> {
    if (this.failing) throw new RingstoreError('shard.unavailable', 'hints table is down', { retryable: true });
    this.hints.set(this.id(hint), hint);
  }
  async list(target: string, limit: number): Promise<Hint[]> {
    return [...this.hints.entries()]
      .filter(([, hint]) => hint.target === target)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .slice(0, limit)
      .map(([, hint]) => hint);
  }
  async remove(hint: Hint): Promise<void> {
    this.hints.delete(this.id(hint));
  }
  async count(target: string): Promise<number> {
    return [...this.hints.values()].filter((hint) => hint.target === target).length;
  }
}

export class MemoryHealthStore implements ShardHealthStore {
  readonly records = new Map<string, ShardHealth>();
  async all(): Promise<Map<string, ShardHealth>> {
    return new Map(this.records);
  }
  async markUnavailable(table: string, reason: string, nowMs: number): Promise<void> {
    if (this.records.get(table)?.status === 'unavailable') return;
    this.records.set(table, { table, status: 'unavailable', sinceMs: nowMs, reason });
  }
  async beginRecovery(table: string, nowMs: number): Promise<boolean> {
    if (this.records.get(table)?.status !== 'unavailable') return false;
    this.records.set(table, { table, status: 'recovering', sinceMs: nowMs });
    return true;
  }
  async completeRecovery(table: string, nowMs: number): Promise<boolean> {
    if (this.records.get(table)?.status !== 'recovering') return false;
    this.records.set(table, { table, status: 'available', sinceMs: nowMs });
    return true;
  }
}

/** Arms crash points by name: `crashAt(point, { after })` crashes on the (after+1)-th reach. */
export class ScriptedFaults implements FaultInjector {
  private readonly armed = new Map<CrashPoint, number>();
  readonly broken = new Set<BrokenMode>();
  readonly reached: CrashPoint[] = [];

  crashAt(point: CrashPoint, options: { after?: number } = {}): void {
    this.armed.set(point, options.after ?? 0);
  }
  disarm(): void {
    this.armed.clear();
  }
  reach(point: CrashPoint): void {
    this.reached.push(point);
    const remaining = this.armed.get(point);
    if (remaining === undefined) return;
    if (remaining > 0) {
      this.armed.set(point, remaining - 1);
      return;
    }
    this.armed.delete(point);
    throw new CrashInjectedError(point);
  }
  isBroken(mode: BrokenMode): boolean {
    return this.broken.has(mode);
  }
}

/** The replication dependencies of a KvService on in-memory ports. */
export function memoryReplication(shards: ShardStore, clock: Clock, faults?: FaultInjector) {
  const hints = new MemoryHintStore();
  const health = new MemoryHealthStore();
  const replication = new ReplicationService({ shards, hints, health, clock, ...(faults ? { faults } : {}) });
  return { hints, health, replication };
}

export class MemoryTxnRecords implements TxnRecordStore {
  readonly records = new Map<string, TxnRecord>();
  async begin(record: TxnRecord): Promise<void> {
    if (this.records.has(record.txid)) throw new Error(`transaction ${record.txid} exists`);
    this.records.set(record.txid, structuredClone(record));
  }
  async find(txid: string): Promise<TxnRecord | undefined> {
    const record = this.records.get(txid);
    return record ? structuredClone(record) : undefined;
  }
  async decide(
    txid: string,
    status: Exclude<TxnStatus, 'pending'>,
    details: { reason?: string; conflictKey?: string; writes?: TxnCommittedWrite[] } = {},
  ) {
    const record = this.records.get(txid);
    if (!record) return undefined;
    if (record.status === 'pending') Object.assign(record, { status }, details);
    return structuredClone(record);
  }
  async dueBetween(fromMs: number, toMs: number, limit: number): Promise<TxnRecord[]> {
    return [...this.records.values()]
      .filter((record) => record.deadlineMs >= fromMs && record.deadlineMs < toMs)
      .sort((a, b) => a.deadlineMs - b.deadlineMs)
      .slice(0, limit)
      .map((record) => structuredClone(record));
  }
}

/** The backup region's key queue in memory: what was sent, in order (tests deliver it as they please). */
export class MemoryKeyChannel implements DrKeyChannel {
  /** Every message, in the order sent. */
  readonly queued: DrQueueMessage[] = [];
  /** The key messages among them, and the write notices. */
  readonly sent: DrKeyMessage[] = [];
  readonly notices: DrWriteNotice[] = [];
  /** While set, every send fails as an unreachable region would. */
  down = false;
  async send(messages: readonly DrQueueMessage[]): Promise<void> {
    if (this.down) throw new RingstoreError('dr.backupUnreachable', 'the backup region is unreachable (test)', { retryable: true });
    this.queued.push(...messages);
    for (const message of messages) {
      if (isWriteNotice(message)) this.notices.push(message);
      else this.sent.push(message);
    }
  }
}

export class MemoryPendingStore implements PendingStore {
  readonly entries = new Map<string, Map<number, PendingEntry>>();
  async record(entry: PendingEntry): Promise<void> {
    const versions = this.entries.get(entry.keyHash) ?? new Map<number, PendingEntry>();
    if (!versions.has(entry.version)) versions.set(entry.version, { ...entry });
    this.entries.set(entry.keyHash, versions);
  }
  async find(keyHash: string, version: number): Promise<PendingEntry | undefined> {
    return this.entries.get(keyHash)?.get(version);
  }
  async entriesOf(keyHash: string): Promise<PendingEntry[]> {
    return [...(this.entries.get(keyHash)?.values() ?? [])].sort((a, b) => a.version - b.version);
  }
  async clear(keyHash: string, upToVersion: number): Promise<PendingEntry[]> {
    const versions = this.entries.get(keyHash);
    const removed: PendingEntry[] = [];
    for (const [version, entry] of versions ?? []) {
      // From version 0, as the table's query: a notice's entry (negative) stays.
      if (version < 0 || version > upToVersion || entry.state !== 'pending') continue;
      versions?.delete(version);
      removed.push(entry);
    }
    return removed;
  }
  async scan(limit: number, cursor?: string): Promise<{ entries: PendingEntry[]; cursor?: string }> {
    const all = this.all();
    const start = cursor === undefined ? 0 : Number(cursor);
    const entries = all.slice(start, start + limit);
    return start + limit < all.length ? { entries, cursor: String(start + limit) } : { entries };
  }
  async markLost(entry: Pick<PendingEntry, 'keyHash' | 'version'>): Promise<boolean> {
    const stored = this.entries.get(entry.keyHash)?.get(entry.version);
    if (stored?.state !== 'pending') return false;
    stored.state = 'lost';
    return true;
  }
  async removeLost(keyHash: string, version: number): Promise<boolean> {
    const versions = this.entries.get(keyHash);
    if (versions?.get(version)?.state !== 'lost') return false;
    versions.delete(version);
    return true;
  }
  async removeNotice(keyHash: string, writeId: string): Promise<boolean> {
    const versions = this.entries.get(keyHash);
    const sortKey = noticeSortKeyOf(writeId);
    if (versions?.get(sortKey)?.state !== 'pending') return false;
    versions.delete(sortKey);
    return true;
  }
  async scanNotices(limit: number, cursor?: string): Promise<{ entries: PendingEntry[]; cursor?: string }> {
    const page = await this.scan(limit, cursor);
    return { ...page, entries: page.entries.filter((entry) => entry.notice && entry.state === 'pending') };
  }
  async scanLost(limit: number, cursor?: string): Promise<{ entries: PendingEntry[]; cursor?: string }> {
    // Pages over every entry and keeps the lost ones, as a filtered DynamoDB scan does.
    const page = await this.scan(limit, cursor);
    return { ...page, entries: page.entries.filter((entry) => entry.state === 'lost') };
  }
  readonly transactions = new Map<string, Map<string, TransactionWrite>>();
  async recordTransactionWrite(txid: string, write: TransactionWrite): Promise<void> {
    const writes = this.transactions.get(txid) ?? new Map<string, TransactionWrite>();
    writes.set(write.keyHash, { ...write });
    this.transactions.set(txid, writes);
  }
  async transactionWrites(txid: string): Promise<TransactionWrite[]> {
    return [...(this.transactions.get(txid)?.values() ?? [])];
  }
  async clearTransaction(txid: string): Promise<void> {
    this.transactions.delete(txid);
  }
  /** Every entry still waiting, across keys. */
  all(): PendingEntry[] {
    return [...this.entries.values()].flatMap((versions) => [...versions.values()]);
  }
  /** What a promotion does to the entries whose value never came. */
  markAllLost(): void {
    for (const entry of this.all()) entry.state = 'lost';
  }
}

export class MemoryDrStateStore implements DrStateStore {
  state: DrState | undefined;
  reads = 0;
  /** While set, every read fails as an unreachable region would. */
  down = false;
  async read(): Promise<DrState | undefined> {
    this.reads += 1;
    if (this.down) throw new RingstoreError('shard.unavailable', 'the backup region is unreachable (test)', { retryable: true });
    return this.state && { ...this.state };
  }
  async save(next: DrState, expectEpoch: number): Promise<boolean> {
    if ((this.state?.epoch ?? 0) !== expectEpoch) return false;
    this.state = { ...next };
    return true;
  }
}

export class MemoryPromotionLog implements PromotionLog {
  readonly reports: PromotionReport[] = [];
  async save(report: PromotionReport): Promise<void> {
    const index = this.reports.findIndex((saved) => saved.id === report.id);
    if (index >= 0) this.reports[index] = report;
    else this.reports.push(report);
  }
  async latest(): Promise<PromotionReport | undefined> {
    return this.reports.at(-1);
  }
}

/** Transaction limits for unit tests: the deployment's, with a longer timeout and a smaller intent concurrency. */
export const testTxnLimits = {
  ...limits,
  txnOpsMax: 1000,
  txnValueBytesMax: 160 * 1024,
  txnTimeoutMsMax: 30_000,
  txnTimeoutMsDefault: 5_000,
  txnReadBytesMax: 160 * 1024,
  intentAttemptsMax: 4,
  intentConcurrencyMax: 4,
  atomicKeysMax: 100,
};

/** Faults that run an action once when `point` is reached: a handler paused there while the world moves on. */
export class PauseAt extends ScriptedFaults {
  constructor(
    private readonly point: CrashPoint,
    private action?: () => void,
  ) {
    super();
  }
  /** Runs `action` at the next time the point is reached. */
  arm(action: () => void): void {
    this.action = action;
  }
  override reach(point: CrashPoint): void {
    super.reach(point);
    if (point !== this.point || !this.action) return;
    const action = this.action;
    this.action = undefined;
    action();
  }
}

/**
 * A KvService on in-memory ports as the unit worlds build one: the parts a world shares are passed, the
 * blob store, the ids and the limits are its own.
 */
export function memoryKv(
  parts: Pick<KvDeps, 'shards' | 'ring' | 'clock' | 'replication' | 'health' | 'faults'> & Partial<KvDeps>,
): KvService {
  return new KvService({ blobs: new MemoryBlobStore(), ids: new CountingIds(), limits, ...parts });
}

/**
 * A world of transactions on in-memory ports, routed by `ring`: the shard store, clock, faults and records the
 * suites inspect, the TransactionService, and a KvService whose reads and writes resolve its intents.
 */
export function memoryTxnWorld(ring: Ring, txnLimits: TxnServiceLimits = testTxnLimits, options: { cache?: ValueCache } = {}) {
  const shards = new MemoryShardStore();
  const clock = new ManualClock();
  const faults = new ScriptedFaults();
  const records = new MemoryTxnRecords();
  const { replication, health } = memoryReplication(shards, clock);
  const ringSource = fixedRing(ring);
  const txns = new TransactionService({
    shards,
    records,
    ring: ringSource,
    clock,
    ids: new CountingIds(),
    replication,
    faults,
    limits: txnLimits,
    ...(options.cache ? { cache: options.cache } : {}),
  });
  const cache = options.cache ? { cache: options.cache } : {};
  const kv = memoryKv({ shards, ring: ringSource, clock, limits, replication, health, intents: txns.intents, ...cache });
  return { shards, clock, faults, records, txns, kv };
}
