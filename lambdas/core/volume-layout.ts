// Where a block volume's bytes live (docs/volumes.md, "Placement"): one key per 4 KiB block in the namespace's
// volume keyspace, named by the volume's id and the block's placement group, so a group's blocks share one ring
// token; and which blocks, and which bytes of each, a byte range covers.
import { RingstoreError } from './errors';
import { volumeNamespaceSuffix } from '../../schemas/topology';

export interface BlockGeometry {
  blockBytes: number;
  groupBlocks: number;
}

/** The bytes of one block a byte range covers: [start, end) within the block, and where they sit in the range. */
export interface BlockSpan {
  block: number;
  start: number;
  end: number;
  /** Offset of `start` within the range. */
  at: number;
}

/** The keyspace of a namespace's volumes (its blocks and records): a namespace no API key can name. */
export function volumeNamespaceOf(namespace: string): string {
  return `${namespace}${volumeNamespaceSuffix}`;
}

/** The key of a volume's record: placed on its own (its group is the name). */
export function volumeRecordKey(name: string): string {
  return `${volumeRecordPrefix}${name}/record`;
}

/** Every volume record's key starts so; no block key does (block keys start with the volume's id, hex). */
export const volumeRecordPrefix = '@';

/**
 * The key that keeps, after a volume's delete, the last writer epoch its name was written with: a volume made again
 * under the name starts there, so a writer of the deleted one never holds an epoch of the new one. Neither a record's
 * key (`@`) nor a block's (hex).
 */
export function volumeEpochFloorKey(name: string): string {
  return `~epochs/${name}`;
}

/** The key of block `block` of volume `volumeId`: `<id>.<group>/<block>`, placed by `<id>.<group>`. */
export function blockKey(volumeId: string, block: number, geometry: BlockGeometry): string {
  return `${blockKeyPrefix(volumeId)}${groupOf(block, geometry)}/${block}`;
}

/** The key of a placement group's fence: the writer epoch the group takes writes from (volume-leases.ts). */
export function fenceKey(volumeId: string, group: number): string {
  return `${blockKeyPrefix(volumeId)}${group}/${fenceKeySuffix}`;
}

/** What a fence key ends with after its group's `/`; a block key ends with the block's number. */
const fenceKeySuffix = 'fence';

/**
 * The key of a block's copy tagged `tag` (volume-snapshots.ts): the block as it was at the end of generation `tag`,
 * kept for the snapshots that read it. Placed with its block (same group, so the same shard and transaction).
 */
export function copyKey(volumeId: string, block: number, tag: number, geometry: BlockGeometry): string {
  return `${blockKey(volumeId, block, geometry)}${copyMark}${tag}`;
}

const copyMark = '@';

/** What a key of a volume's keyspace below a volume id holds, read from its name. */
export type VolumeKeyKind = { kind: 'block'; block: number } | { kind: 'fence' } | { kind: 'copy'; block: number; tag: number };

/** Names what a block-side key is (undefined for a key no volume writes), from the part after its group's `/`. */
export function volumeKeyKind(key: string): VolumeKeyKind | undefined {
  const tail = key.slice(key.indexOf('/') + 1);
  if (tail === fenceKeySuffix) return { kind: 'fence' };
  const match = /^(\d+)(?:@(\d+))?$/.exec(tail);
  if (!match) return undefined;
  const block = Number(match[1]);
  if (match[2] === undefined) return { kind: 'block', block };
  return { kind: 'copy', block, tag: Number(match[2]) };
}

/** One copy of a block: its tag, and `zero` when the block held nothing then (no copy item is kept). */
export interface CopyEntry {
  tag: number;
  zero?: true;
}

/** What a block item's content type is: its bytes', with its copy index as a `copies` parameter when it has one. */
export const blockContentType = 'application/octet-stream';

/** A block item's content type with its copy index (`3,5z`: a copy tagged 3, and tag 5 when the block held nothing). */
export function contentTypeWith(entries: readonly CopyEntry[]): string {
  if (entries.length === 0) return blockContentType;
  return `${blockContentType}; copies=${entries.map((entry) => `${entry.tag}${entry.zero ? 'z' : ''}`).join(',')}`;
}

/** The copy index a block item's content type carries (none: no copies). */
export function copiesOf(contentType: string | undefined): CopyEntry[] {
  const listed = /;\s*copies=([0-9z,]+)/.exec(contentType ?? '')?.[1];
  if (!listed) return [];
  return listed
    .split(',')
    .filter((part) => part !== '')
    .map((part) => (part.endsWith('z') ? { tag: Number(part.slice(0, -1)), zero: true as const } : { tag: Number(part) }));
}

/** Where snapshot `generation` reads a block from: the copy with the smallest tag at or after it, else the block. */
export function copyFor(entries: readonly CopyEntry[], generation: number): CopyEntry | undefined {
  let found: CopyEntry | undefined;
  for (const entry of entries) if (entry.tag >= generation && (!found || entry.tag < found.tag)) found = entry;
  return found;
}

/** The placement group of a block. */
export function groupOf(block: number, geometry: BlockGeometry): number {
  return Math.floor(block / geometry.groupBlocks);
}

/** How many placement groups a volume of `sizeBytes` has. */
export function groupCount(sizeBytes: number, geometry: BlockGeometry): number {
  return Math.ceil(sizeBytes / geometry.blockBytes / geometry.groupBlocks);
}

/** What every key of a volume's blocks and fences starts with (its listing prefix). */
export function blockKeyPrefix(volumeId: string): string {
  return `${volumeId}.`;
}

/** The blocks a byte range of `length` > 0 bytes at `offset` covers, first to last. */
export function blockSpans(offset: number, length: number, geometry: BlockGeometry): BlockSpan[] {
  const { blockBytes } = geometry;
  const spans: BlockSpan[] = [];
  const end = offset + length;
  for (let block = Math.floor(offset / blockBytes); block * blockBytes < end; block += 1) {
    const blockStart = block * blockBytes;
    const start = Math.max(offset, blockStart) - blockStart;
    const stop = Math.min(end, blockStart + blockBytes) - blockStart;
    spans.push({ block, start, end: stop, at: blockStart + start - offset });
  }
  return spans;
}

/** Whether a span covers its whole block (a write of it replaces the block without reading it). */
export function coversBlock(span: BlockSpan, geometry: BlockGeometry): boolean {
  return span.start === 0 && span.end === geometry.blockBytes;
}

/**
 * Refuses a read or write of `length` bytes at `offset` of `what` (a volume or a snapshot, `sizeBytes` long): not
 * whole numbers, over the atomic maximum `ioBytesMax`, or past the end.
 */
export function validateByteRange(what: string, sizeBytes: number, offset: number, length: number, ioBytesMax: number): void {
  if (!Number.isSafeInteger(offset) || offset < 0 || !Number.isSafeInteger(length) || length < 0) {
    throw new RingstoreError('request.invalid', `offset and length must be integers of 0 or more (got ${offset}, ${length})`, {
      details: { field: 'offset' },
    });
  }
  if (length > ioBytesMax) {
    throw new RingstoreError('volume.ioTooLarge', `one read or write covers at most ${ioBytesMax} bytes (got ${length})`, {
      details: { max: ioBytesMax, length },
    });
  }
  if (offset + length > sizeBytes) {
    throw new RingstoreError(
      'volume.rangeNotSatisfiable',
      `bytes ${offset} to ${offset + length} are past the end of ${what} (${sizeBytes} bytes)`,
      {
        details: { sizeBytes, offset, length },
      },
    );
  }
}

/**
 * The limits of the transactions a volume runs: its values never travel through the state machine's payload
 * (txn-runner.ts), so a whole unaligned write of `ioBytesMax` (one block more) fits (after a snapshot, its copies
 * are written by a transaction of their own, volume-snapshots.ts).
 */
export function volumeTxnLimits<Base extends { txnValueBytesMax: number; txnReadBytesMax: number }>(
  base: Base,
  limits: BlockGeometry & { ioBytesMax: number },
): Base {
  const blockBytesMax = (limits.ioBytesMax / limits.blockBytes + 1) * limits.blockBytes;
  return {
    ...base,
    txnValueBytesMax: Math.max(base.txnValueBytesMax, blockBytesMax),
    txnReadBytesMax: Math.max(base.txnReadBytesMax, blockBytesMax),
  };
}
