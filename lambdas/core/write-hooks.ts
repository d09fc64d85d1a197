// What a capability adds around the KV path without editing it: a hook on a write (cross-region DR tells its
// backup, or refuses while this region may not acknowledge), an owner write counted against a quota, a gate on a
// read (a DR backup's pending keys). The KV services call these at fixed points; each has a no-op default.
import type {
  Consistency,
  DrMode,
  ItemWrite,
  ItemWriteOutcome,
  NoticeContent,
  StoredItem,
  StorageQuota,
  StorageChargeRule,
  ShardItemWrites,
} from '../ports';

/** A write request's settings beyond its content, from the namespace; each hook reads its own. */
export interface WriteSettings {
  consistency?: Consistency;
  /** How the write reaches a DR backup region (the DR hook's). */
  drMode?: DrMode;
  /** The namespace's storage quota (the charging owner writer's). */
  storageQuota?: StorageQuota;
  /** How the write is charged against `storageQuota`, when not by its value's size to its own namespace. */
  storageCharge?: StorageChargeRule;
}

export interface WriteHooks {
  /** Before a write is taken and again before it is acknowledged: throws when this region may not acknowledge. */
  assertWritable(): Promise<void>;
  /**
   * Called just before the owner write, whose request starts beside it: a notice of the write that must be
   * durable before it is acknowledged (a DR key-sync write's, docs/dr.md), or undefined for none. Its write id
   * is stored on the owner's item.
   */
  announce?(write: WriteAnnouncement, settings: WriteSettings): AnnouncedWrite | undefined;
  /**
   * The owner holds `item`: what must be done before the write is acknowledged. Started at once, it runs beside
   * the cache write and the replicas' copies, and the acknowledgement waits for it; its failure is the answer.
   */
  stored(item: StoredItem, settings: WriteSettings, announced?: AnnouncedWrite): Promise<void>;
}

/** A write about to be sent to its key's owner, and its content (a delete: `deleted`). */
export interface WriteAnnouncement {
  namespace: string;
  key: string;
  writtenAtMs: number;
  content: NoticeContent;
}

/** A write's notice, on its way beside the owner write. */
export interface AnnouncedWrite {
  writeId: string;
  /** Settles once the notice is durable, or failed (handled: awaiting it is the caller's choice). */
  sent: Promise<void>;
  /** The owner write failed: the notice is withdrawn, after it was sent (best effort; see docs/dr.md). */
  withdraw(): Promise<void>;
}

export const noWriteHooks: WriteHooks = {
  assertWritable: async () => undefined,
  stored: async () => undefined,
};

/**
 * How the owner's copy of a write is stored: the store's outcome (a transaction's intent in the way, `locked`,
 * is the caller's to resolve; a failed precondition its to answer).
 */
export interface OwnerWriter {
  write(table: string, write: ItemWrite, settings: WriteSettings): Promise<ItemWriteOutcome>;
}

/** The owner's write as it is: one conditional write. */
export function plainOwnerWriter(shards: ShardItemWrites): OwnerWriter {
  return { write: (table, write) => shards.write(table, write) };
}

/** The two ways a read can find a key's item: its owner read strongly, or the read as asked (cache, replicas). */
export interface ReadPaths {
  owner(): Promise<StoredItem | undefined>;
  asAsked(): Promise<StoredItem | undefined>;
}

/** Which way a read goes: a DR backup reads every key through its pending set, from the owner. */
export interface ReadGate {
  read(namespace: string, key: string, paths: ReadPaths): Promise<StoredItem | undefined>;
}

export const openReadGate: ReadGate = { read: (_namespace, _key, paths) => paths.asAsked() };
