// Cross-region disaster recovery (docs/dr.md): the small key message the primary sends to the backup
// region ahead of each value, the backup's pending set, and the ports that carry them.

/**
 * How a namespace's acknowledged writes reach the backup region. `key-sync`: a notice of the write is
 * durable in the backup's queue before the write is acknowledged (one cross-region round trip, beside the
 * owner write), so the backup knows of every acknowledged write. `async`: the key message leaves from the shard stream after
 * the acknowledgement; a disaster can lose the knowledge of the last writes (the measured exposure).
 */
export type DrMode = 'key-sync' | 'async';

/**
 * What the backup must know of one write before its value arrives: enough to gate reads of the key
 * (the version it waits for), to apply the value when it comes (content type, size, sha256, expiry) and
 * to name what was lost if it never comes.
 */
export interface DrKeyMessage {
  namespace: string;
  key: string;
  version: number;
  /** The transaction that wrote it, if any. */
  txid?: string;
  /**
   * With `txid`: how many keys the transaction wrote. The backup applies a transaction's writes as a
   * unit, once it holds every one of their key messages and values.
   */
  txnWrites?: number;
  /** The primary's write time (epoch ms): lag is measured from it, and reports order lost writes by it. */
  writtenAtMs: number;
  size: number;
  sha256: string;
  contentType: string;
  /** A delete: nothing travels after the message, which the backup applies itself. */
  deleted: boolean;
  expiresAtSeconds?: number;
  /**
   * The write id stored on the owner's item with this version or an earlier one (a later write without
   * one leaves it behind): the backup settles that write's notice, since this version is at least as new.
   */
  writeId?: string;
}

/**
 * A key-sync write's notice, sent beside its owner write, before the version is known (docs/dr.md, "When
 * the backup knows of a write"): `announced`, the backup holds the key pending until a key message carrying
 * `writeId` arrives; `withdrawn`, the owner write failed and the notice is dropped.
 */
export interface DrWriteNotice {
  notice: 'announced' | 'withdrawn';
  namespace: string;
  key: string;
  writeId: string;
  /** The primary's time of the write (epoch ms): the notice's age, and lost writes' order in reports. */
  writtenAtMs: number;
  /**
   * An announced write's content, known before its version: what a reconciliation restores and checks an
   * offered value against, should the notice be lost in a disaster.
   */
  content?: NoticeContent;
}

export type NoticeContent = Pick<DrKeyMessage, 'size' | 'sha256' | 'contentType' | 'deleted' | 'expiresAtSeconds'>;

/** What travels on the backup's key queue. */
export type DrQueueMessage = DrKeyMessage | DrWriteNotice;

/** The backup region's key queue (SQS FIFO); send resolves once every message is durable there. */
export interface DrKeyChannel {
  send(messages: readonly DrQueueMessage[]): Promise<void>;
}

/**
 * A key the backup knows was written in the primary at `version`, whose value it has not applied yet:
 * `pending` while it may still arrive, `lost` once a promotion gave up on it.
 */
export interface PendingEntry extends DrKeyMessage {
  /** sha256 of `namespace#key` (hex, 32 chars): the entry's partition, and the value object's folder. */
  keyHash: string;
  state: 'pending' | 'lost';
  receivedAtMs: number;
  /**
   * A write notice's entry (its `writeId` set): a write of unknown version, ahead of any copy. Its
   * `version` is only its place in the key's partition (negative, never a real version; noticeSortKeyOf).
   */
  notice?: true;
}

/** One write of a transaction, as the backup counts them: the key's pending entry it names. */
export interface TransactionWrite {
  keyHash: string;
  version: number;
}

/** The backup region's pending table: one partition per key, one item per version waited for. */
export interface PendingStore {
  /** Records the entry unless one of this version exists (a duplicate message changes nothing). */
  record(entry: PendingEntry): Promise<void>;
  find(keyHash: string, version: number): Promise<PendingEntry | undefined>;
  /** Every entry of a key, read consistently, in version order. */
  entriesOf(keyHash: string): Promise<PendingEntry[]>;
  /**
   * Removes the key's pending entries up to `version` (applied, or superseded by it); lost ones and
   * write notices stay. Returns the entries it removed.
   */
  clear(keyHash: string, upToVersion: number): Promise<PendingEntry[]>;
  /** Removes a write notice's pending entry (settled by a key message, or withdrawn); false if none was pending. */
  removeNotice(keyHash: string, writeId: string): Promise<boolean>;
  /** One page of the pending write notices only (the primary settles old ones); `cursor` continues. */
  scanNotices(limit: number, cursor?: string): Promise<{ entries: PendingEntry[]; cursor?: string }>;
  /** One page of every entry (status and promotion walk them all); `cursor` continues. */
  scan(limit: number, cursor?: string): Promise<{ entries: PendingEntry[]; cursor?: string }>;
  /** Marks a still-pending entry lost; false if it was applied (removed) meanwhile. */
  markLost(entry: Pick<PendingEntry, 'keyHash' | 'version'>): Promise<boolean>;
  /**
   * Removes a lost entry (reconciliation: restored, discarded, or settled by a write of the key in the
   * promoted region); false if it was not there, or not lost.
   */
  removeLost(keyHash: string, version: number): Promise<boolean>;
  /** One page of the lost entries only; a page may hold fewer than `limit`, even none, and `cursor` continues. */
  scanLost(limit: number, cursor?: string): Promise<{ entries: PendingEntry[]; cursor?: string }>;
  /** Records that a transaction wrote this key's version (idempotent). */
  recordTransactionWrite(txid: string, write: TransactionWrite): Promise<void>;
  /** The writes of a transaction recorded so far, read consistently. */
  transactionWrites(txid: string): Promise<TransactionWrite[]>;
  /** Forgets a transaction's writes (after they were applied). */
  clearTransaction(txid: string): Promise<void>;
}

/**
 * The backup region's DR state (its control table): a backup until a promotion fences the primary
 * (`promoting`, epoch + 1), then `promoted`: it takes writes. The primary reads it as its lease to
 * acknowledge writes: a primary may acknowledge only while it has seen `backup` within the lease.
 */
export interface DrState {
  state: 'backup' | 'promoting' | 'promoted';
  epoch: number;
  updatedAtMs: number;
  /** The promotion that fenced the primary. */
  promotionId?: string;
  fencedAtMs?: number;
  promotedAtMs?: number;
}

export interface DrStateStore {
  /** Read consistently; undefined before anything was written (a backup at epoch 0). */
  read(): Promise<DrState | undefined>;
  /** Writes `next` only if the stored epoch is still `expectEpoch` (0: none stored). */
  save(next: DrState, expectEpoch: number): Promise<boolean>;
}

/** What a promotion found and did (GET /v1/admin/dr/report). */
export interface PromotionReport {
  id: string;
  reason: string;
  status: 'running' | 'completed' | 'failed';
  startedAtMs: number;
  updatedAtMs: number;
  fencedAtMs?: number;
  drain?: { waitedMs: number; remaining: number };
  values?: { waitedMs: number; pending: number };
  lost?: {
    count: number;
    /**
     * Of `count`, write notices never settled: writes announced whose owner write may have failed before
     * the disaster, so possibly never acknowledged (refused all the same: the backup cannot tell).
     */
    possiblyNeverAcknowledged?: number;
    keys: Array<
      Pick<PendingEntry, 'namespace' | 'key' | 'version' | 'writtenAtMs'> & {
        txid?: string;
        /** With possiblyNeverAcknowledged: the notice's write id, by which the old primary offers its value back. */
        writeId?: string;
        possiblyNeverAcknowledged?: true;
      }
    >;
  };
  promotedAtMs?: number;
  failure?: string;
}

export interface PromotionLog {
  save(report: PromotionReport): Promise<void>;
  /** The newest promotion's report. */
  latest(): Promise<PromotionReport | undefined>;
}

/** A promotion as the admin API starts it. */
export interface PromotionRequest {
  id: string;
  reason: string;
}

/** Starts the promotion workflow (Step Functions in AWS, aws-local-stepfunctions locally). */
export interface PromotionStarter {
  /** False when a run with this id exists already. */
  start(request: PromotionRequest): Promise<boolean>;
}

/** The backup's key queue as the promotion sees it: how many messages wait or are being applied. */
export interface KeyQueueProbe {
  depth(): Promise<{ waiting: number; inFlight: number }>;
}

/** DR observations (docs/operations.md, "DR metrics"); adapters publish them as metrics. */
export interface DrMetrics {
  /** Backup: a key message recorded, this long after the primary's write. */
  keyReceived(lagMs: number): void;
  /** Backup: a value applied, this long after the primary's write. */
  valueApplied(lagMs: number): void;
  /** Backup: a value whose bytes did not match its key message. */
  valueCorrupt(): void;
  /** Backup: a promotion marked this many keys lost. */
  keysLost(count: number): void;
  /** Primary: a key-sync write's key message took this long to be durable in the backup's queue. */
  keySyncSent(durationMs: number): void;
  /**
   * Backup: what the maintenance sweep saw of the pending table (the entries it read: all of them
   * unless the table outgrew its pages): pending and lost entries, and how long the oldest pending one
   * has waited.
   */
  pendingObserved(observed: { pending: number; lost: number; oldestPendingAgeMs: number }): void;
}

/**
 * The primary's initial sync (docs/dr.md, "Initial sync"): every owner's keys shipped once, range by
 * range, so that a backup added to a deployment holding data gets what was written before.
 */
export interface DrSyncState {
  status: 'running' | 'completed';
  /** The next token range to ship, in ring order. */
  nextRange: number;
  ranges: number;
  /** Keys shipped so far. */
  keys: number;
  startedAtMs: number;
  updatedAtMs: number;
}

export interface DrSyncStateStore {
  readSync(): Promise<DrSyncState | undefined>;
  saveSync(state: DrSyncState): Promise<void>;
}
