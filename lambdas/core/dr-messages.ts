// Cross-region disaster recovery (docs/dr.md). The primary sends each write's small key message to the
// backup region ahead of its value (dr-shipper.ts, dr-initial-sync.ts); the backup records the key as pending
// until the value is applied (dr-applier.ts), and a read of a pending key waits for it or is refused, so the
// backup never serves a value older than one it knows was written (dr-pending-gate.ts). After a disaster, a
// key whose value never came is refused as lost.
//
// This module: what travels, a write's small key message (its queue's message group and deduplication id),
// and its value as an object named by key, version and digest.
import { createHash } from 'node:crypto';
import { drPrefixes } from '../../schemas/topology';
import type { DrKeyMessage, DrQueueMessage, DrWriteNotice, StoredItem } from '../ports';

export function isWriteNotice(message: DrQueueMessage): message is DrWriteNotice {
  return 'notice' in message;
}

/** Folder of a key in the pending table and in the value objects: a fixed-length name for any key. */
export function keyHashOf(namespace: string, key: string): string {
  return createHash('sha256').update(`${namespace}#${key}`).digest('hex').slice(0, 32);
}

/** Versions are zero-padded in object keys so one key's values list in version order. */
const versionDigits = 16;

/**
 * Where one version's value travels to in the backup bucket. The sha256 prefix keeps two different
 * values written at one version (a stray write of a shard a failover took over) from overwriting each other.
 */
export function valueObjectKeyOf(message: Pick<DrKeyMessage, 'namespace' | 'key' | 'version' | 'sha256'>): string {
  const version = String(message.version).padStart(versionDigits, '0');
  return `${drPrefixes.values}${keyHashOf(message.namespace, message.key)}/${version}-${message.sha256.slice(0, 16)}`;
}

/**
 * Where the old primary offers back the value of a write whose notice was lost (reconciliation): named by its
 * write id, since its version never reached the backup. The value applier's pattern never matches it.
 */
export function noticeValueObjectKeyOf(message: Pick<DrKeyMessage, 'namespace' | 'key'> & { writeId: string }): string {
  return `${drPrefixes.values}${keyHashOf(message.namespace, message.key)}/notice-${message.writeId}`;
}

const valueObjectKeyPattern = new RegExp(`^${drPrefixes.values}([0-9a-f]{32})/(\\d{${versionDigits}})-([0-9a-f]{16})$`);

/** The key hash and version a value object's name carries; undefined for any other object. */
export function parseValueObjectKey(objectKey: string): { keyHash: string; version: number; shaPrefix: string } | undefined {
  const match = valueObjectKeyPattern.exec(objectKey);
  if (!match) return undefined;
  return { keyHash: match[1]!, version: Number(match[2]), shaPrefix: match[3]! };
}

/**
 * The FIFO message group: one per key, so one key's messages arrive in order while different keys flow
 * in parallel (a high-throughput FIFO queue scales with the number of groups).
 */
export function messageGroupOf(message: Pick<DrQueueMessage, 'namespace' | 'key'>): string {
  return keyHashOf(message.namespace, message.key);
}

/**
 * The FIFO deduplication id: a message sent twice (a retried send, a stream batch shipped again) is delivered
 * once. A key message is named by its version and the write id it carries: the primary's settling of an old
 * notice by a version the stream shipped already is a message of its own. A notice and its withdrawal are
 * named by their write id.
 */
export function deduplicationIdOf(message: DrQueueMessage): string {
  const keyHash = keyHashOf(message.namespace, message.key);
  if (isWriteNotice(message)) return `${keyHash}-${message.notice === 'announced' ? 'n' : 'x'}-${message.writeId}`;
  return `${keyHash}-${message.version}${message.writeId === undefined ? '' : `-${message.writeId}`}`;
}

/**
 * Where a write notice's entry sits in its key's partition of the pending table: a negative number (the
 * first 48 bits of the write id's sha256, plus one), below every version, so a clear up to a version
 * never removes it. Two unsettled notices of one key sharing it (odds about 2^-49 per pair) would share one
 * entry, which the first settling removes: until its own key message came, the second write would be unknown.
 */
export function noticeSortKeyOf(writeId: string): number {
  return -(Number.parseInt(createHash('sha256').update(writeId).digest('hex').slice(0, 12), 16) + 1);
}

export function keyMessageOf(item: StoredItem): DrKeyMessage {
  const writer = item.writtenBy;
  return {
    namespace: item.namespace,
    key: item.key,
    version: item.version,
    ...(writer ? { txid: writer.txid, txnWrites: writer.writes } : {}),
    writtenAtMs: item.modifiedAtMs ?? 0,
    size: item.size,
    sha256: item.sha256,
    contentType: item.contentType,
    deleted: item.tombstone,
    ...(item.expiresAtSeconds === undefined || item.tombstone ? {} : { expiresAtSeconds: item.expiresAtSeconds }),
    ...(item.writeId === undefined ? {} : { writeId: item.writeId }),
  };
}

/** A message whose value is the message itself: a delete, or an empty value (no object travels). */
export function needsNoValue(message: DrKeyMessage): boolean {
  return message.deleted || message.size === 0;
}

/** A write of a transaction that wrote several keys: the backup applies it with the others, as a unit. */
export function isTransactionMember(message: DrKeyMessage): message is DrKeyMessage & { txid: string; txnWrites: number } {
  return message.txid !== undefined && (message.txnWrites ?? 1) > 1;
}
